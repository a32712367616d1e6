//! The few HTML pages a visitor can see. Small and self-contained (inline style, no scripts);
//! every value that comes from a link or a request is escaped.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use jiff::tz::TimeZone;

use crate::domain::{Interval, LinkOptions, Preset, Stats, thousands as count};

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
.error{color:#a00}td.n{text-align:right;white-space:nowrap}td.bar{width:12rem}\
.bar span{display:block;height:.8rem;background:#58a}nav{margin:1rem 0}";

/// The pages' content security policy: nothing but their own inline style, no script, and
/// forms that post back here.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'";

/// A whole page; `title` and `body_html` must already be escaped where needed.
fn page(status: StatusCode, title: &str, body_html: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <meta name=\"robots\" content=\"noindex\"><title>{title}</title><style>{STYLE}</style></head>\
         <body><h1>{title}</h1>{body_html}</body></html>"
    );
    html_response(status, html)
}

/// `html` as a page is sent: no caching, no scripts, no sniffing.
fn html_response(status: StatusCode, html: String) -> Response {
    let mut response = (status, html).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert("content-security-policy", HeaderValue::from_static(CSP));
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

pub fn headers_too_large() -> Response {
    page(
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        "Request too large",
        "<p>The request's headers are too large. Clearing this site's cookies may help.</p>",
    )
}

pub fn unavailable() -> Response {
    page(
        StatusCode::SERVICE_UNAVAILABLE,
        "Try again",
        "<p>The link service is busy. Please try again in a moment.</p>",
    )
}

/// `unavailable`, with the seconds to wait.
pub fn busy(retry_after: u64) -> Response {
    let mut page = unavailable();
    page.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
    page
}

/// A visitor has used up the allowance for public pages for now.
pub fn too_many_requests(retry_after: u64) -> Response {
    let mut page = message(
        StatusCode::TOO_MANY_REQUESTS,
        "Too many requests",
        &format!("Try again in {retry_after} seconds."),
    );
    page.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
    page
}

/// What the password form says above the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PasswordPrompt {
    First,
    Wrong,
    TooMany {
        retry_after: u64,
    },
    /// Too many passwords are being checked at this moment.
    Busy,
}

/// Seconds a visitor is asked to wait when the server is busy checking passwords.
const BUSY_RETRY: u64 = 5;

/// The password form; it posts back to the address it was shown at, which answers the right
/// password with a redirect to the link's destination. Browsers apply `form-action` to that
/// redirect too, so the page's policy also names the origins of the link's destinations
/// (`destinations`: every URL it can lead to) — those and no others.
pub fn password_form<'a>(
    alias: &str,
    prompt: PasswordPrompt,
    destinations: impl IntoIterator<Item = &'a str>,
) -> Response {
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
        PasswordPrompt::Busy => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "<p class=\"error\">The server is busy checking passwords. Try again in \
                 {BUSY_RETRY} seconds.</p>"
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
    let mut origins: Vec<String> = destinations
        .into_iter()
        .filter_map(|d| url::Url::parse(d).ok())
        .map(|u| u.origin())
        .filter(|o| o.is_tuple())
        .map(|o| o.ascii_serialization())
        .collect();
    origins.sort();
    origins.dedup();
    if !origins.is_empty()
        && let Ok(csp) = HeaderValue::from_str(&format!("{CSP} {}", origins.join(" ")))
    {
        response
            .headers_mut()
            .insert("content-security-policy", csp);
    }
    let retry_after = match prompt {
        PasswordPrompt::TooMany { retry_after } => Some(retry_after),
        PasswordPrompt::Busy => Some(BUSY_RETRY),
        _ => None,
    };
    if let Some(retry_after) = retry_after {
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

/// The card a link-preview agent (a chat or social app) draws for a link: its preview's title,
/// description and image as Open Graph and Twitter card tags, `destination` as where it leads.
/// A page only those agents get; a person is redirected.
pub fn card(alias: &str, options: &LinkOptions, destination: &str) -> Response {
    let dest = escape(destination);
    let title = escape(options.preview_title.as_deref().unwrap_or(alias));
    let mut meta = format!(
        "<meta property=\"og:type\" content=\"website\">\
         <meta property=\"og:url\" content=\"{dest}\">\
         <meta property=\"og:title\" content=\"{title}\">\
         <meta name=\"twitter:title\" content=\"{title}\">"
    );
    if let Some(text) = &options.preview_description {
        let text = escape(text);
        meta.push_str(&format!(
            "<meta property=\"og:description\" content=\"{text}\">\
             <meta name=\"description\" content=\"{text}\">\
             <meta name=\"twitter:description\" content=\"{text}\">"
        ));
    }
    let card = match &options.preview_image {
        Some(image) => {
            let image = escape(image);
            meta.push_str(&format!(
                "<meta property=\"og:image\" content=\"{image}\">\
                 <meta name=\"twitter:image\" content=\"{image}\">"
            ));
            "summary_large_image"
        }
        None => "summary",
    };
    meta.push_str(&format!("<meta name=\"twitter:card\" content=\"{card}\">"));
    if !options.allow_indexing {
        meta.push_str("<meta name=\"robots\" content=\"noindex\">");
    }
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\
         {meta}<style>{STYLE}</style></head><body><h1>{title}</h1>\
         <p class=\"url\"><a href=\"{dest}\" rel=\"noopener noreferrer nofollow\">{dest}</a></p>\
         </body></html>"
    );
    let mut response = html_response(StatusCode::OK, html);
    if !options.allow_indexing {
        response
            .headers_mut()
            .insert("x-robots-tag", HeaderValue::from_static("noindex"));
    }
    response
}

/// A whole page with a status other than 200, saying `message`.
pub fn message(status: StatusCode, title: &str, message: &str) -> Response {
    page(
        status,
        &escape(title),
        &format!("<p>{}</p>", escape(message)),
    )
}

/// `12 %` up or down on the period before, when there is one to compare.
fn change(stats: &Stats) -> String {
    match (stats.change_percent(), stats.previous) {
        (Some(p), _) if p > 0 => format!(" (▲ {p} % on the period before)"),
        (Some(p), _) if p < 0 => format!(" (▼ {} % on the period before)", -p),
        (Some(_), _) => " (as many as the period before)".to_owned(),
        (None, Some(0)) if stats.total > 0 => " (none the period before)".to_owned(),
        _ => String::new(),
    }
}

/// Rows of a table with a bar for each row's size against `scale`, and with `shares` its
/// share of `scale` in per cent.
fn bars(rows: impl Iterator<Item = (String, u64)>, scale: u64, shares: bool) -> String {
    let mut html = String::from("<table>");
    for (label, n) in rows {
        let share = if scale == 0 {
            0.0
        } else {
            n as f64 * 100.0 / scale as f64
        };
        let percent = if shares {
            format!("<td class=\"n\">{share:.0} %</td>")
        } else {
            String::new()
        };
        html.push_str(&format!(
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"bar\"><span style=\"width:{share:.1}%\"></span></td>{percent}</tr>",
            escape(&label),
            count(n),
        ));
    }
    html.push_str("</table>");
    html
}

/// The public statistics of a link over `preset`, with links to the other periods. `all_time`
/// is the link's click count, including clicks not yet written.
pub fn stats(alias: &str, stats: &Stats, preset: Preset, all_time: u64, tz: &TimeZone) -> Response {
    let mut body = String::from("<nav>");
    for p in Preset::ALL {
        if p == preset {
            body.push_str(&format!("<strong>{}</strong> ", p.words()));
        } else {
            body.push_str(&format!(
                "<a href=\"?period={}\">{}</a> ",
                p.as_str(),
                p.words()
            ));
        }
    }
    body.push_str("</nav>");
    let span = if preset == Preset::All {
        "in all".to_owned()
    } else {
        format!("in the last {}", preset.words())
    };
    body.push_str(&format!(
        "<p>Short link <code>{}</code>: <strong>{}</strong> clicks {span}{}; {} in all.</p>",
        escape(alias),
        count(stats.total),
        change(stats),
        count(all_time),
    ));
    let heading = match stats.interval {
        Interval::Hour => "Clicks by hour",
        Interval::Day => "Clicks by day",
        Interval::Month => "Clicks by month",
    };
    body.push_str(&format!("<h2>{heading}</h2>"));
    let peak = stats.timeline.iter().map(|b| b.clicks).max().unwrap_or(0);
    body.push_str(&bars(
        stats
            .timeline
            .iter()
            .map(|b| (stats.interval.label(b.start, tz), b.clicks)),
        peak,
        false,
    ));
    for b in &stats.breakdowns {
        body.push_str(&format!("<h2>{}</h2>", b.dimension.title()));
        if b.total() == 0 {
            body.push_str("<p>No visits in this period.</p>");
            continue;
        }
        let mut rows: Vec<(String, u64)> = b.top.iter().map(|v| (b.label(v), v.clicks)).collect();
        if b.other > 0 {
            rows.push((crate::domain::OTHER.to_owned(), b.other));
        }
        body.push_str(&bars(rows.into_iter(), b.total(), true));
    }
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
