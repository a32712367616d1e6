//! Reading `application/x-www-form-urlencoded` bodies with `serde_qs`, strictly: every field must
//! be known, scalars come once, targeting lists look like `geo[0][key]` with rows numbered from 0
//! without gaps (brackets sent plain or percent-encoded alike), and anything unreadable is a 422
//! naming the field — or `body` — never a 500.
//!
//! Two passes over the same bytes: the first reads only the shape of each top-level field, so
//! every problem can be named at once; the second deserializes into the input type. An empty
//! value (`password=`) stays `Some("")`, which clears a field on update.

use std::collections::BTreeMap;
use std::fmt;

use axum::http::{HeaderMap, StatusCode, header};
use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_qs::{Config, DuplicateKeyBehavior};

use super::error::ApiError;
use crate::domain::{DomainInput, FieldErrors, LinkField, LinkInput, RuleInput, SpaceInput};

/// Rows a targeting list may have in one request.
pub const MAX_ROWS: usize = 100;

/// Form encoding decodes `%5B`/`%5D` as brackets; a repeated scalar is an error, not "last wins";
/// `geo[0][key]` is as deep as a form goes.
const QS: Config = Config::new()
    .use_form_encoding(true)
    .duplicate_key_behavior(DuplicateKeyBehavior::Error)
    .max_depth(2);

/// Which fields of a form are targeting lists (`name[i][key]` / `name[i][value]`) and which are
/// lists of text (`rules[i]`, linkdeck's own); every other field the input type has is a scalar.
pub struct FormSpec {
    pub lists: &'static [&'static str],
    pub texts: &'static [&'static str],
}

/// An input type the v1 API reads from a form, with its list fields.
pub trait FormFields: DeserializeOwned {
    const SPEC: FormSpec;
}

impl FormFields for LinkInput {
    const SPEC: FormSpec = FormSpec {
        lists: &LinkField::TARGET_LIST_NAMES,
        texts: &[LinkField::Rules.name()],
    };
}

impl FormFields for SpaceInput {
    const SPEC: FormSpec = FormSpec {
        lists: &[],
        texts: &[],
    };
}

impl FormFields for crate::wire::linkdeck::TagRename {
    const SPEC: FormSpec = FormSpec {
        lists: &[],
        texts: &[],
    };
}

impl FormFields for DomainInput {
    const SPEC: FormSpec = FormSpec {
        lists: &[],
        texts: &[],
    };
}

/// Parses a form body into `T`, naming every unknown, repeated or malformed field in one error.
pub fn parse_form<T: DeserializeOwned>(body: &[u8], spec: &FormSpec) -> Result<T, ApiError> {
    let shapes: Fields<Shape> = QS
        .deserialize_bytes(body)
        .map_err(|e| ApiError::field("body", format!("cannot be read: {e}")))?;
    let known = struct_fields::<T>();
    let row_fields = struct_fields::<RuleInput>();
    let mut errors = FieldErrors::default();
    for (name, shape) in &shapes.0 {
        let shape = match shape {
            Ok(shape) => shape,
            Err(e)
                if spec.lists.contains(&name.as_str()) || spec.texts.contains(&name.as_str()) =>
            {
                errors.add(
                    name,
                    format!("cannot be read (rows are numbered from 0 without gaps): {e}"),
                );
                continue;
            }
            Err(e) => {
                errors.add(name, format!("cannot be read: {e}"));
                continue;
            }
        };
        if !known.contains(&name.as_str()) {
            errors.add(name, "is not a known field");
        } else if spec.lists.contains(&name.as_str()) {
            check_rows(name, shape, row_fields, &mut errors);
        } else if spec.texts.contains(&name.as_str()) {
            check_texts(name, shape, &mut errors);
        } else if !matches!(shape, Shape::Text { .. }) {
            errors.add(name, "must be a single value, given once");
        }
    }
    if !errors.is_empty() {
        return Err(errors.into());
    }
    QS.deserialize_bytes(body)
        .map_err(|e| ApiError::field("body", format!("cannot be read: {e}")))
}

/// A list of text, `rules[0]=…&rules[1]=…`; `rules=` sends an empty one.
fn check_texts(name: &str, shape: &Shape, errors: &mut FieldErrors) {
    let how = format!("must be sent as {name}[N], N from 0");
    let rows = match shape {
        Shape::Text { empty: true } => return,
        Shape::List(rows) => rows,
        Shape::Text { empty: false } | Shape::Map(_) => return errors.add(name, how),
    };
    if rows.len() > MAX_ROWS {
        return errors.add(name, format!("may have at most {MAX_ROWS} rows"));
    }
    for (i, row) in rows.iter().enumerate() {
        if !matches!(row, Shape::Text { .. }) {
            errors.add(&format!("{name}.{i}"), how.clone());
        }
    }
}

fn check_rows(name: &str, shape: &Shape, row_fields: &[&str], errors: &mut FieldErrors) {
    let how = format!("must be sent as {name}[N][key] and {name}[N][value], N from 0");
    let rows = match shape {
        // `geo=` sends an empty list.
        Shape::Text { empty: true } => return,
        Shape::Text { empty: false } => return errors.add(name, how),
        Shape::List(rows) => rows,
        // Some index is not a number (`geo[x][key]`): name each field sent that way.
        Shape::Map(parts) => {
            let mut named = false;
            for (part, shape) in parts {
                if let Shape::Map(cells) = shape {
                    for cell in cells.keys() {
                        errors.add(&format!("{name}.{part}.{cell}"), how.clone());
                        named = true;
                    }
                }
            }
            if !named {
                errors.add(name, how);
            }
            return;
        }
    };
    if rows.len() > MAX_ROWS {
        errors.add(name, format!("may have at most {MAX_ROWS} rows"));
        return;
    }
    for (i, row) in rows.iter().enumerate() {
        let Shape::Map(cells) = row else {
            errors.add(
                &format!("{name}.{i}"),
                format!("must be sent as {name}[{i}][key] and {name}[{i}][value]"),
            );
            continue;
        };
        for (cell, shape) in cells {
            let field = format!("{name}.{i}.{cell}");
            if !row_fields.contains(&cell.as_str()) {
                errors.add(&field, "is not a known field");
            } else if !matches!(shape, Shape::Text { .. }) {
                errors.add(&field, "must be a single value, given once");
            }
        }
    }
}

/// The top-level fields of a form or query string, each with its value or why it could not be
/// read. Read by hand so one unreadable field does not hide the others, and can be named.
pub struct Fields<T>(pub Vec<(String, Result<T, String>)>);

impl<'de, T: de::Deserialize<'de>> de::Deserialize<'de> for Fields<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: de::Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Fields<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("form fields")
            }
            fn visit_unit<E>(self) -> Result<Fields<T>, E> {
                Ok(Fields(Vec::new()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<T>, A::Error> {
                let mut out = Vec::new();
                while let Some(name) = map.next_key::<String>()? {
                    let value = map.next_value::<T>().map_err(|e| e.to_string());
                    out.push((name, value));
                }
                Ok(Fields(out))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// What a field holds: text, a list (rows, or a scalar repeated), or named parts.
enum Shape {
    Text { empty: bool },
    List(Vec<Shape>),
    Map(BTreeMap<String, Shape>),
}

impl<'de> de::Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Shape;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a value, a list or named parts")
            }
            fn visit_str<E>(self, v: &str) -> Result<Shape, E> {
                Ok(Shape::Text {
                    empty: v.is_empty(),
                })
            }
            fn visit_unit<E>(self) -> Result<Shape, E> {
                Ok(Shape::Text { empty: true })
            }
            fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
                Ok(Shape::Text { empty: false })
            }
            fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
                Ok(Shape::Text { empty: false })
            }
            fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
                Ok(Shape::Text { empty: false })
            }
            fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
                Ok(Shape::Text { empty: false })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
                let mut rows = Vec::new();
                while let Some(row) = seq.next_element()? {
                    // Bounded before the caller's check so a huge list costs nothing more.
                    if rows.len() > MAX_ROWS {
                        while seq.next_element::<IgnoredAny>()?.is_some() {}
                        break;
                    }
                    rows.push(row);
                }
                Ok(Shape::List(rows))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
                let mut parts = BTreeMap::new();
                while let Some((k, v)) = map.next_entry::<String, Shape>()? {
                    parts.insert(k, v);
                }
                Ok(Shape::Map(parts))
            }
        }
        d.deserialize_any(V)
    }
}

/// The field names `T`'s `Deserialize` impl expects, so the list of known fields lives only in
/// the type itself: a deserializer that records what `deserialize_struct` is asked for.
fn struct_fields<T: DeserializeOwned>() -> &'static [&'static str] {
    struct Probe<'a>(&'a mut &'static [&'static str]);
    impl<'de> Deserializer<'de> for Probe<'_> {
        type Error = de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(de::Error::custom("probe"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Probe(&mut fields));
    fields
}

/// Checks the body's content type: form-urlencoded in UTF-8, or no body at all.
pub fn check_form_content_type(headers: &HeaderMap, body_len: usize) -> Result<(), ApiError> {
    let Some(ct) = headers.get(header::CONTENT_TYPE) else {
        return if body_len == 0 {
            Ok(())
        } else {
            Err(unsupported())
        };
    };
    let ct = ct.to_str().map_err(|_| unsupported())?.to_ascii_lowercase();
    let mut parts = ct.split(';').map(str::trim);
    if parts.next() != Some("application/x-www-form-urlencoded") {
        return Err(unsupported());
    }
    for param in parts {
        if let Some(charset) = param.strip_prefix("charset=")
            && !matches!(charset.trim_matches('"'), "utf-8" | "utf8")
        {
            return Err(ApiError::Status(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "The body must be UTF-8.".into(),
            ));
        }
    }
    Ok(())
}

fn unsupported() -> ApiError {
    ApiError::Status(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "Send the fields as application/x-www-form-urlencoded.".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::error::invalid_fields as fields;

    const LINK: FormSpec = LinkInput::SPEC;

    fn parse(body: &str) -> Result<LinkInput, ApiError> {
        parse_form(body.as_bytes(), &LINK)
    }

    #[test]
    fn known_fields_come_from_the_type() {
        let names: Vec<&str> = LinkField::INPUT.iter().map(|f| f.name()).collect();
        assert_eq!(struct_fields::<LinkInput>(), names);
        assert_eq!(struct_fields::<SpaceInput>(), ["name", "color"]);
        assert_eq!(struct_fields::<RuleInput>(), ["key", "value"]);
    }

    #[test]
    fn nested_rows_encoded_or_not() {
        let a = parse("url=https%3A%2F%2Fa.example&geo[0][key]=US&geo[0][value]=https://u.example")
            .unwrap();
        let b = parse("url=https%3A%2F%2Fa.example&geo%5B0%5D%5Bkey%5D=US&geo%5B0%5D%5Bvalue%5D=https://u.example")
            .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.url.as_deref(), Some("https://a.example"));
        assert_eq!(a.geo.unwrap()[0], RuleInput::new("US", "https://u.example"));
        let c = parse("platform[0][key]=OS+X&platform[0][value]=https://m.example&platform[1][key]=Linux&platform[1][value]=https://l.example").unwrap();
        let rows = c.platform.unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].key.as_deref(), Some("OS X"));
        assert_eq!(rows[1], RuleInput::new("Linux", "https://l.example"));
    }

    /// Rules are a list of text: numbered rows, `rules=` to send none.
    #[test]
    fn rules_are_a_list_of_text() {
        let input = parse(
            "url=https://a.example&rules[0]=language+fr+%3D%3E+https://fr.example\
             &rules%5B1%5D=query+utm%3Dx+%3D%3E+https://q.example",
        )
        .unwrap();
        assert_eq!(
            input.rules.unwrap(),
            [
                "language fr => https://fr.example",
                "query utm=x => https://q.example"
            ]
        );
        assert_eq!(parse("rules=").unwrap().rules, Some(vec![]));
        assert_eq!(parse("url=x").unwrap().rules, None);
        assert_eq!(fields(parse("rules=country+DE").unwrap_err()), ["rules"]);
        assert_eq!(fields(parse("rules[0][kind]=x").unwrap_err()), ["rules.0"]);
        assert_eq!(fields(parse("rules[1]=x").unwrap_err()), ["rules"]);
        let many: String = (0..=MAX_ROWS).map(|i| format!("rules[{i}]=x&")).collect();
        assert_eq!(fields(parse(&many).unwrap_err()), ["rules"]);
    }

    #[test]
    fn empty_values_stay_present() {
        let input = parse("alias=&password=&url=https://a.example").unwrap();
        assert_eq!(input.alias.as_deref(), Some(""));
        assert_eq!(input.password.as_deref(), Some(""));
        assert_eq!(input.space, None);
        assert_eq!(parse("").unwrap(), LinkInput::default());
    }

    /// serde_qs reads rows as a sequence, which must start at 0 and have no gaps; a gapped list
    /// is refused under its name rather than guessed at.
    #[test]
    fn gapped_rows_are_named() {
        assert_eq!(
            fields(parse("rotation[2][value]=https://c.example").unwrap_err()),
            ["rotation"]
        );
        assert_eq!(
            fields(parse("geo[0][key]=US&geo[2][key]=CA").unwrap_err()),
            ["geo"]
        );
    }

    #[test]
    fn unknown_duplicate_and_malformed_fields_are_named() {
        assert_eq!(fields(parse("url=x&colour=3").unwrap_err()), ["colour"]);
        assert_eq!(
            fields(parse("colour=3&url=x&shade=1").unwrap_err()),
            ["colour", "shade"]
        );
        assert_eq!(fields(parse("url=x&url=y").unwrap_err()), ["url"]);
        assert_eq!(
            fields(parse("geo[0][land]=US").unwrap_err()),
            ["geo.0.land"]
        );
        assert_eq!(
            fields(parse("geo[0][key]=US&geo[0][key]=CA").unwrap_err()),
            ["geo.0.key"]
        );
        assert_eq!(fields(parse("url[]=x").unwrap_err()), ["url"]);
        assert_eq!(fields(parse("url[a]=x").unwrap_err()), ["url"]);
        assert_eq!(fields(parse("geo[0]=US").unwrap_err()), ["geo.0"]);
        assert_eq!(fields(parse("geo=US").unwrap_err()), ["geo"]);
        assert_eq!(
            fields(parse("geo[x][key]=US&geo[x][value]=https://u.example").unwrap_err()),
            ["geo.x.key", "geo.x.value"]
        );
        assert_eq!(parse("geo=").unwrap().geo, Some(vec![]));
        assert_eq!(fields(parse("alias=%FF%FE").unwrap_err()), ["alias"]);
        assert_eq!(fields(parse("%FF=1").unwrap_err()), ["body"]);
        let many: String = (0..=MAX_ROWS)
            .map(|i| format!("rotation[{i}][value]=https://{i}.example&"))
            .collect();
        assert_eq!(fields(parse(&many).unwrap_err()), ["rotation"]);
    }

    #[test]
    fn hostile_bodies_are_errors_not_panics() {
        for body in [
            "geo[0][key][x][y]=1",
            "geo[99999999999][key]=1",
            "geo[=1",
            "geo]=1",
            "[=1",
            "=1",
            "&&&",
            "geo[0][key]=1&geo=2",
            "url=%",
            "%5B%5D=1",
        ] {
            // Read or refused as a 422 (`fields` panics on any other error).
            if let Err(e) = parse(body) {
                fields(e);
            }
        }
    }
}
