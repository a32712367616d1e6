//! Page titles fetched in the background (when the profile enables it). A save never
//! waits for the destination: the link is stored with its host-and-path title, and once the
//! page's `<title>` arrives (within [`FETCH_TIMEOUT`], from at most [`MAX_BYTES`] of HTML) it
//! replaces that title — unless the link's URL changed meanwhile, so a slow answer never labels
//! a newer destination.

use std::net::SocketAddr;
use std::time::Duration;

use html5gum::{DefaultEmitter, Token, Tokenizer};

use super::LocalService;
use super::public_address::{pinned, reachable};
use linkdeck_domain::{Id, Result, is_unshowable};

/// The whole fetch, connection to last byte.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// HTML read at most; a `<title>` sits near the top of a page.
pub const MAX_BYTES: usize = 256 * 1024;
/// Characters kept of a title.
pub const MAX_CHARS: usize = 255;
const REDIRECTS: usize = 5;

/// Fetches titles, one hop at a time: every address a hop would connect to — a literal one,
/// each one its host name resolves to, and again for every redirect — must be public (see
/// [`is_public`](super::public_address::is_public)) or explicitly allowed. The connection is pinned to the addresses checked, so a
/// name that resolves differently a moment later cannot slip an internal address in.
#[derive(Debug)]
pub struct TitleFetcher {
    allow: Vec<SocketAddr>,
}

impl TitleFetcher {
    /// `allow` lists addresses that may be reached although they are not public.
    pub fn new(allow: Vec<SocketAddr>) -> TitleFetcher {
        TitleFetcher { allow }
    }

    /// The `<title>` of the page at `url`, if it answers with HTML in time.
    pub async fn fetch(&self, url: &str) -> Option<String> {
        tokio::time::timeout(FETCH_TIMEOUT, self.fetch_in_time(url))
            .await
            .ok()
            .flatten()
    }

    async fn fetch_in_time(&self, url: &str) -> Option<String> {
        let mut url = url::Url::parse(url).ok()?;
        for _ in 0..=REDIRECTS {
            if !matches!(url.scheme(), "http" | "https") {
                return None;
            }
            let client = self.client_for(&url).await?;
            let response = client
                .get(url.clone())
                .header(reqwest::header::ACCEPT, "text/html")
                .send()
                .await
                .ok()?;
            if response.status().is_redirection() {
                let next = response
                    .headers()
                    .get(reqwest::header::LOCATION)?
                    .to_str()
                    .ok()?;
                url = url.join(next).ok()?;
                continue;
            }
            return title_of_response(response).await;
        }
        None
    }

    /// A client that connects to `url`'s host only at its allowed addresses; `None` when it has
    /// none.
    async fn client_for(&self, url: &url::Url) -> Option<reqwest::Client> {
        let allowed = reachable(url, |addr| self.allow.contains(addr)).await?;
        if allowed.is_empty() {
            tracing::debug!(
                host = url.host_str(),
                "title not fetched: no public address"
            );
            return None;
        }
        let builder = reqwest::Client::builder()
            .connect_timeout(FETCH_TIMEOUT)
            .user_agent(concat!("linkdeck/", env!("CARGO_PKG_VERSION"), " (title)"));
        pinned(builder, url, &allowed).build().ok()
    }
}

/// The title of an HTML answer, read from at most [`MAX_BYTES`] of it.
async fn title_of_response(mut response: reqwest::Response) -> Option<String> {
    if !response.status().is_success() {
        return None;
    }
    let is_html = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_none_or(|ct| ct.to_ascii_lowercase().contains("html"));
    if !is_html {
        return None;
    }
    let mut body = Vec::new();
    while body.len() < MAX_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) => break,
            Err(_) if !body.is_empty() => break,
            Err(_) => return None,
        }
    }
    body.truncate(MAX_BYTES);
    title_of_html(&String::from_utf8_lossy(&body))
}

/// The text of the first `<title>` element, whitespace collapsed, at most [`MAX_CHARS`]
/// characters; `None` when there is none or it is blank. Character references are decoded.
pub fn title_of_html(html: &str) -> Option<String> {
    // Script and title contents are read as text, as a browser reads them, so a `<title>`
    // inside a script is not taken for the page's.
    let mut emitter = DefaultEmitter::default();
    emitter.naively_switch_states(true);
    let mut tokens = Tokenizer::new_with_emitter(html, emitter).flatten();
    tokens
        .find(|t| matches!(t, Token::StartTag(tag) if tag.name.eq_ignore_ascii_case(b"title")))?;
    let mut text = Vec::new();
    for token in tokens {
        match token {
            Token::String(s) => text.extend_from_slice(&s.value),
            Token::EndTag(tag) if tag.name.eq_ignore_ascii_case(b"title") => break,
            _ => {}
        }
    }
    let text = String::from_utf8_lossy(&text);
    let title: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !is_unshowable(*c))
        .take(MAX_CHARS)
        .collect();
    (!title.is_empty()).then_some(title)
}

impl LocalService {
    /// Fetches the title of link `id` (now pointing at `url`) on a background task, when this
    /// service fetches titles and a runtime is there to run the task.
    pub(super) fn fetch_title_later(&self, id: Id, url: String) {
        let Some(fetcher) = self.titles.clone() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let service = self.clone();
        runtime.spawn(async move {
            let Some(title) = fetcher.fetch(&url).await else {
                tracing::debug!(id, "no title fetched");
                return;
            };
            if let Err(e) = service.set_fetched_title(id, url, title).await {
                tracing::warn!(id, error = %e, "could not store a fetched title");
            }
        });
    }

    async fn set_fetched_title(&self, id: Id, url: String, title: String) -> Result<()> {
        self.store
            .write(move |tx| tx.set_title(id, &url, &title))
            .await
            .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::title_of_html;

    #[test]
    fn the_first_title_is_read_and_tidied() {
        let page = "<!doctype html><html><head><meta charset=utf-8>\n\
                    <title>\n  Spring &amp; Summer\tSale  </title>\
                    <title>second</title></head><body><h1>x</h1></body></html>";
        assert_eq!(title_of_html(page).as_deref(), Some("Spring & Summer Sale"));
    }

    #[test]
    fn pages_without_a_usable_title_give_none() {
        assert_eq!(title_of_html("<html><body>no title</body></html>"), None);
        assert_eq!(title_of_html("<title>   </title>"), None);
        assert_eq!(title_of_html(""), None);
        assert_eq!(title_of_html("not html at all"), None);
    }

    #[test]
    fn odd_markup_still_gives_text() {
        assert_eq!(
            title_of_html("<TITLE lang=en>Caf&eacute; <b>menu</b></TITLE>").as_deref(),
            Some("Café <b>menu</b>")
        );
        let script = "<script>let t = '<title>not this</title>';</script><title>This</title>";
        assert_eq!(title_of_html(script).as_deref(), Some("This"));
        // Unclosed: everything to the end is the title.
        assert_eq!(
            title_of_html("<title>Half a page").as_deref(),
            Some("Half a page")
        );
        // Control characters and bidirectional overrides are no part of a title.
        assert_eq!(
            title_of_html("<title>Sale&#27;[2J &#x202E;now&#7;</title>").as_deref(),
            Some("Sale[2J now")
        );
        let long = format!("<title>{}</title>", "é".repeat(400));
        assert_eq!(title_of_html(&long).unwrap().chars().count(), 255);
    }
}
