//! linkdeck's traffic answer (`GET /api/linkdeck/traffic`, records of
//! `wire::linkdeck::LinkTraffic`) read straight into hours: each hour's record is checked and
//! made a [`TrafficHour`] as soon as it is parsed, so neither a JSON tree of the answer nor its
//! records (a map for each dimension of each hour) ever exist whole — either takes several times
//! the answer's text.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::DecodeError;
use crate::domain::{Error, Id, TrafficHour};
use crate::transfer::TrafficRecord;

/// The links' histories in `body` (`{"data": [{"id": 4, "traffic": […]}, …]}`), in the order
/// sent.
pub fn traffic(body: &[u8]) -> Result<Vec<(Id, Vec<TrafficHour>)>, DecodeError> {
    #[derive(Deserialize)]
    struct Answer {
        data: Vec<LinkHours>,
    }
    let answer: Answer = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    Ok(answer.data.into_iter().map(|l| (l.id, l.hours)).collect())
}

struct LinkHours {
    id: Id,
    hours: Vec<TrafficHour>,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Field {
    Id,
    Traffic,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for LinkHours {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(LinkVisitor)
    }
}

struct LinkVisitor;

impl<'de> Visitor<'de> for LinkVisitor {
    type Value = LinkHours;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a link's id and traffic")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<LinkHours, A::Error> {
        let mut id = None;
        let mut hours = None;
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Id => id = Some(map.next_value::<Id>()?),
                // The server writes the id first, so that errors can name the link.
                Field::Traffic => hours = Some(map.next_value_seed(Hours { link: id })?),
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(LinkHours {
            id: id.ok_or_else(|| de::Error::missing_field("id"))?,
            hours: hours.ok_or_else(|| de::Error::missing_field("traffic"))?,
        })
    }
}

/// A link's list of hours, each checked as it is read; errors are named `link 4: traffic.2.…`.
struct Hours {
    link: Option<Id>,
}

impl<'de> DeserializeSeed<'de> for Hours {
    type Value = Vec<TrafficHour>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Hours {
    type Value = Vec<TrafficHour>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of traffic hours")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut hours = Vec::new();
        while let Some(record) = seq.next_element::<TrafficRecord>()? {
            let prefix = match self.link {
                Some(id) => format!("link {id}: traffic.{}", hours.len()),
                None => format!("traffic.{}", hours.len()),
            };
            let hour = record
                .to_hour(&prefix)
                .map_err(|e| de::Error::custom(Error::Validation(e)))?;
            hours.push(hour);
        }
        Ok(hours)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hours_are_read_and_checked_naming_their_link() {
        let body = br#"{"data": [
            {"id": 4, "traffic": [{"hour": "2026-01-02T03:00:00Z", "clicks": 3,
                                   "country": {"US": 2}, "referrer": {"example.com": 1}}]},
            {"id": 9, "traffic": [], "note": "ignored"}
        ], "status": 200}"#;
        let links = traffic(body).unwrap();
        assert_eq!(links.len(), 2);
        let (id, hours) = &links[0];
        assert_eq!((*id, hours.len(), hours[0].clicks), (4, 1, 3));
        assert_eq!(hours[0].values[0], [("US".to_owned(), 2)]);
        assert_eq!(links[1], (9, Vec::new()));

        let bad = br#"{"data": [{"id": 4, "traffic": [
            {"hour": "2026-01-02T03:00:00Z", "clicks": 3},
            {"hour": "2026-01-02T03:30:00Z", "clicks": 1}]}]}"#;
        let err = traffic(bad).unwrap_err();
        assert!(err.contains("link 4: traffic.1.hour"), "{err}");
        assert!(traffic(br#"{"data": [{"traffic": []}]}"#).is_err());
        assert!(traffic(b"<html>").is_err());
    }
}
