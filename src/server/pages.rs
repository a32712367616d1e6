//! The few HTML pages a visitor can see. Small and self-contained (inline style, no scripts);
//! every value that comes from a link or a request is escaped.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::backend::local::visits::LinkStats;

/// Escapes text for HTML element content and quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#222}\
h1{font-size:1.4rem}p{line-height:1.5}code,.url{word-break:break-all}\
input{font-size:1rem;padding:.4rem}button{font-size:1rem;padding:.4rem .8rem}\
table{border-collapse:collapse;margin:1rem 0}td,th{padding:.2rem .8rem;text-align:left;border-bottom:1px solid #ddd}\
.error{color:#a00}";

/// A whole page; `title` and `body_html` must already be escaped where needed.
fn page(status: StatusCode, title: &str, body_html: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <meta name=\"robots\" content=\"noindex\"><title>{title}</title><style>{STYLE}</style></head>\
         <body><h1>{title}</h1>{body_html}</body></html>"
    );
    let mut response = (status, html).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        "content-security-policy",
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
        ),
    );
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    response
}

pub fn not_found() -> Response {
    page(
        StatusCode::NOT_FOUND,
        "Link not found",
        "<p>There is no short link at this address.</p>",
    )
}

pub fn expired() -> Response {
    page(
        StatusCode::GONE,
        "Link expired",
        "<p>This short link has expired.</p>",
    )
}

pub fn disabled() -> Response {
    page(
        StatusCode::FORBIDDEN,
        "Link disabled",
        "<p>This short link has been disabled by its owner.</p>",
    )
}

pub fn unavailable() -> Response {
    page(
        StatusCode::SERVICE_UNAVAILABLE,
        "Try again",
        "<p>The link service is busy. Please try again in a moment.</p>",
    )
}

/// What the password form says above the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PasswordPrompt {
    First,
    Wrong,
    TooMany { retry_after: u64 },
}

/// The password form; it posts back to the address it was shown at.
pub fn password_form(alias: &str, prompt: PasswordPrompt) -> Response {
    let (status, note) = match prompt {
        PasswordPrompt::First => (StatusCode::OK, String::new()),
        PasswordPrompt::Wrong => (
            StatusCode::FORBIDDEN,
            "<p class=\"error\">That password is not right.</p>".to_owned(),
        ),
        PasswordPrompt::TooMany { retry_after } => (
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "<p class=\"error\">Too many attempts. Try again in {retry_after} seconds.</p>"
            ),
        ),
    };
    let body = format!(
        "<p>The link <code>{}</code> is protected by a password.</p>{note}\
         <form method=\"post\"><label>Password <input type=\"password\" name=\"password\" \
         autofocus required maxlength=\"128\"></label> <button type=\"submit\">Continue</button></form>",
        escape(alias)
    );
    let mut response = page(status, "Password required", &body);
    if let PasswordPrompt::TooMany { retry_after } = prompt {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
    }
    response
}

/// Where a link leads, without following it.
pub fn preview(alias: &str, destination: &str) -> Response {
    let dest = escape(destination);
    let body = format!(
        "<p>The short link <code>{}</code> leads to:</p><p class=\"url\"><a href=\"{dest}\" rel=\"noopener noreferrer nofollow\">{dest}</a></p>",
        escape(alias)
    );
    page(StatusCode::OK, "Link preview", &body)
}

fn table(heading: &str, rows: &[(String, u64)]) -> String {
    let mut html = format!("<h2>{}</h2>", escape(heading));
    if rows.is_empty() {
        html.push_str("<p>No visits yet.</p>");
        return html;
    }
    html.push_str("<table>");
    for (label, n) in rows {
        html.push_str(&format!("<tr><td>{}</td><td>{n}</td></tr>", escape(label)));
    }
    html.push_str("</table>");
    html
}

fn labelled(rows: &[(Option<String>, u64)]) -> Vec<(String, u64)> {
    rows.iter()
        .map(|(k, n)| (k.clone().unwrap_or_else(|| "unknown".into()), *n))
        .collect()
}

/// The public statistics of a link.
pub fn stats(alias: &str, stats: &LinkStats) -> Response {
    let mut body = format!(
        "<p>Short link <code>{}</code>: {} clicks.</p>",
        escape(alias),
        stats.clicks
    );
    body.push_str(&table("Clicks by day", &stats.by_day));
    body.push_str(&table("Countries", &labelled(&stats.by_country)));
    body.push_str(&table("Platforms", &labelled(&stats.by_platform)));
    body.push_str(&table("Referrers", &labelled(&stats.by_referrer)));
    page(StatusCode::OK, "Link statistics", &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape("<script>\"a\"&'b'</script>"),
            "&lt;script&gt;&quot;a&quot;&amp;&#39;b&#39;&lt;/script&gt;"
        );
    }
}
