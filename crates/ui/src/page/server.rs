//! The page's HTTP side: a listener on 127.0.0.1 ([`super::http`]),
//! opened at the first elicitation and kept for the process's life, and
//! the checks every request passes before anything is shown or answered.
//!
//! Any local process, any other local user, and any web page in the
//! person's browser can reach a port on 127.0.0.1. So:
//!
//! - the port is never given up while elicit runs: nobody else can bind it
//!   and stand in for elicit before a page that is open in the browser;
//! - the browser is handed a one-time address (`/open/ONCE`): its first
//!   visit gets the session cookie (HttpOnly, SameSite=Strict, scoped to
//!   the page's secret path) and a redirect to the page; a second visit
//!   gets nothing (`410`), so the address read from the browser's command
//!   line (`/proc/PID/cmdline`, readable by every user) answers nothing;
//! - the page's path holds a second secret, and every request under it
//!   must carry the session cookie;
//! - the `Host` must be this listener's own (a DNS-rebinding page sends its
//!   own name); a POST must come from the page itself (its `Origin`) and
//!   carry the page's CSRF token; bodies and heads are capped;
//! - every response to the page's script carries a proof (HMAC over the
//!   script's challenge, keyed with a secret that only the page holds), so
//!   the script never shows anything from whatever else may one day answer
//!   at this port (after elicit exits);
//! - every response forbids framing, caching, referrers, sniffing and any
//!   script or style but the page's own (a CSP nonce).

use std::net::TcpListener;
use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant};

use super::{html, submit, Outcome, Page, State};
use elicit_core::error::ElicitError;
use elicit_http::Request;

/// The largest request body read (a form of many long fields fits).
pub(crate) const MAX_BODY: usize = 256 * 1024;

/// How long the page's script waits on one request for news.
const WATCH: Duration = Duration::from_secs(20);

/// How recently a page must have asked for news to count as open.
const SEEN_RECENTLY: Duration = Duration::from_secs(5);

/// The session cookie's name (its path is the page's secret path, so the
/// cookies of several elicit processes do not clash).
const COOKIE: &str = "elicit";

/// The header the page's script sends its challenge in, and the one the
/// proof comes back in.
const CHALLENGE: &str = "X-Elicit-Challenge";
const PROOF: &str = "X-Elicit-Proof";

/// What [`ensure_listening`] did.
pub(super) struct Opened {
    address: String,
    /// A page is open in the browser already (it watches the same address).
    page_is_open: bool,
}

/// Opens the listener if it is not open yet (it then stays open for the
/// process's life), and when `announce`, makes a one-time address for it.
pub(super) fn ensure_listening(
    page: &Arc<Page>,
    state: &mut MutexGuard<'_, State>,
    announce: bool,
) -> Result<Option<Opened>, ElicitError> {
    let port = match state.port {
        Some(port) => port,
        None => {
            let cannot =
                |e: std::io::Error| ElicitError::io("cannot serve the page on 127.0.0.1", e);
            let listener = TcpListener::bind(("127.0.0.1", 0)).map_err(cannot)?;
            let port = listener.local_addr().map_err(cannot)?.port();
            let handler = {
                let page = page.clone();
                move |request: Request| handle(&page, request, port)
            };
            elicit_http::serve(listener, handler).map_err(cannot)?;
            state.port = Some(port);
            port
        }
    };
    if !announce {
        return Ok(None);
    }
    let page_is_open =
        state.watching > 0 || state.last_seen.is_some_and(|t| t.elapsed() < SEEN_RECENTLY);
    Ok(Some(Opened {
        address: page.one_time_address(state, port)?,
        page_is_open,
    }))
}

/// Says where the page is, and opens it unless `--no-open` (or a page is
/// open already). `Err` says why no browser could be opened.
pub(super) fn announce(page: &Page, opened: Opened) -> Result<(), String> {
    let address = &opened.address;
    let say = || eprintln!("elicit: answer on the page {address}");
    if opened.page_is_open || page.options.no_open {
        say();
        return Ok(());
    }
    // A page only a browser could show is announced once one opened it:
    // nobody will open the address by hand.
    let unattended = page.options.fail_unless_opened;
    if !unattended {
        say();
    }
    match page.options.opener().launch(address) {
        Ok(()) => {
            if unattended {
                say();
            }
            Ok(())
        }
        Err(e) => {
            let why = elicit_core::text::sanitize::sanitize_line(&e.to_string());
            if !unattended {
                eprintln!(
                    "elicit: could not open a browser ({why}); open the address above yourself"
                );
            }
            Err(why)
        }
    }
}

/// A response, written by [`send`].
pub(super) struct Reply {
    status: u16,
    content_type: &'static str,
    /// The page's CSP nonce: its own style and script may run.
    nonce: Option<String>,
    /// Headers of this response only (a cookie, a redirect, a proof).
    extra: Vec<(&'static str, String)>,
    body: Vec<u8>,
}

fn plain(status: u16, text: &str) -> Reply {
    Reply {
        status,
        content_type: "text/plain; charset=utf-8",
        nonce: None,
        extra: Vec::new(),
        body: format!("{text}\n").into_bytes(),
    }
}

fn page_reply(status: u16, body: String, nonce: &str) -> Reply {
    Reply {
        status,
        content_type: "text/html; charset=utf-8",
        nonce: Some(nonce.to_string()),
        extra: Vec::new(),
        body: body.into_bytes(),
    }
}

fn json_reply(body: String) -> Reply {
    Reply {
        status: 200,
        content_type: "application/json",
        nonce: None,
        extra: Vec::new(),
        body: body.into_bytes(),
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        303 => "See Other",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        421 => "Misdirected Request",
        422 => "Unprocessable Content",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    }
}

/// Writes the reply with the headers every response carries, and
/// `Connection: close` (one request per connection: no browser connection
/// is kept waiting on the listener).
fn send(request: Request, reply: Reply) {
    let csp = match &reply.nonce {
        Some(n) => format!(
            "default-src 'none'; script-src 'nonce-{n}'; style-src 'nonce-{n}'; \
             connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; \
             frame-ancestors 'none'"
        ),
        None => "default-src 'none'; frame-ancestors 'none'; base-uri 'none'".into(),
    };
    let head_only = request.method() == "HEAD";
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        reply.status,
        reason(reply.status),
        reply.content_type,
        reply.body.len()
    );
    let common = [
        ("Content-Security-Policy", csp.as_str()),
        ("Cache-Control", "no-store"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
    ];
    let extra = reply.extra.iter().map(|(k, v)| (*k, v.as_str()));
    for (name, value) in common.into_iter().chain(extra) {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    if !head_only {
        out.extend_from_slice(&reply.body);
    }
    request.respond(&out);
}

fn header_value<'a>(request: &'a Request, name: &'static str) -> Option<&'a str> {
    request.header(name)
}

/// Equal strings, compared in time that does not depend on where they
/// differ (the token is a secret).
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The `Host` a request must carry: this listener's own.
fn host_is_ours(host: Option<&str>, port: u16) -> bool {
    host.is_some_and(|h| h == format!("127.0.0.1:{port}") || h == format!("localhost:{port}"))
}

/// Whether a POST comes from the page itself: its `Origin` is the page's
/// own. Under the page's `Referrer-Policy: no-referrer` a browser sends a
/// form's `Origin` as `null`; then the browser's own `Sec-Fetch-Site` (no
/// script or page can set it) must say `same-origin`. A page elsewhere
/// (another site, a sandboxed frame, a `data:` document) gets `cross-site`
/// there and is refused.
fn origin_is_ours(origin: Option<&str>, fetch_site: Option<&str>, port: u16) -> bool {
    match origin {
        Some("null") => fetch_site == Some("same-origin"),
        Some(o) => {
            o == format!("http://127.0.0.1:{port}") || o == format!("http://localhost:{port}")
        }
        None => false,
    }
}

/// An answer taken off the list, to deliver once its reply is written.
type Answered = Option<(u64, Outcome)>;

fn handle(page: &Arc<Page>, mut request: Request, port: u16) {
    let (mut reply, answered) = route(page, &mut request, port);
    if let Some(proof) = proof(page, &request) {
        reply.extra.push((PROOF, proof));
    }
    send(request, reply);
    if let Some((id, outcome)) = answered {
        page.deliver(id, outcome);
    }
}

/// The proof for the script's challenge, for a request that carries the
/// page's session (nothing is proved to anyone else): HMAC-SHA256 keyed
/// with the page's proof key, hex. The script checks it before it uses a
/// response.
fn proof(page: &Page, request: &Request) -> Option<String> {
    let challenge = request.header(CHALLENGE)?;
    if challenge.is_empty() || challenge.len() > 128 || !has_session(page, request) {
        return None;
    }
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, page.proof_key.as_bytes());
    let tag = ring::hmac::sign(&key, challenge.as_bytes());
    Some(tag.as_ref().iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether the request carries the page's session cookie.
fn has_session(page: &Page, request: &Request) -> bool {
    super::cookie_pairs(request.all("Cookie"))
        .any(|(name, value)| name == COOKIE && same_secret(value, &page.session))
}

fn route(page: &Arc<Page>, request: &mut Request, port: u16) -> (Reply, Answered) {
    if !host_is_ours(header_value(request, "Host"), port) {
        let refused = plain(
            421,
            "this page answers only at 127.0.0.1 or localhost with its own port",
        );
        return (refused, None);
    }
    let url = request.url().to_string();
    let path = url.split_once('?').map_or(url.as_str(), |(p, _)| p);
    if let Some(once) = path.strip_prefix("/open/") {
        return (open_once(page, request, once), None);
    }
    let rest = match checked_path(page, request, path) {
        Ok(rest) => rest.to_string(),
        Err(reply) => return (reply, None),
    };
    match request.method() {
        "POST" => match rest.strip_prefix("answer/").map(str::parse::<u64>) {
            Some(Ok(id)) => {
                let mut answered = None;
                let reply = post_answer(page, request, port, id, &mut answered);
                (reply, answered)
            }
            _ => (plain(404, "not found"), None),
        },
        _ => (get_route(page, request, &url, &rest), None),
    }
}

/// `GET /open/ONCE`: a one-time address. Used now, it gives the session
/// cookie and sends the browser on to the page; used before (or never
/// made), it gives nothing. The addresses made before it are dropped too:
/// the browser that has the page needs none of them.
fn open_once(page: &Page, request: &Request, once: &str) -> Reply {
    // Only a GET spends it (a HEAD, a prefetch of another kind, does not).
    if request.method() != "GET" {
        return plain(405, "method not allowed");
    }
    let mut state = page.lock();
    let Some(at) = state.one_time.iter().position(|o| same_secret(o, once)) else {
        // A spent address used again: the person's browser arriving after
        // something else used it first, or the person opening it twice.
        // Said once per address, on stderr and on the page.
        if let Some(at) = state.spent.iter().position(|o| same_secret(o, once)) {
            state.spent.remove(at);
            eprintln!(
                "elicit: the page's one-time address was opened a second time; if your browser \
                 says it was used already, something else opened it first and could answer in \
                 your place: stop elicit"
            );
        }
        return plain(
            410,
            "This one-time address of elicit's page was used already. If you opened it before, \
             go back to that tab. If you did not, something else on this computer opened it first \
             and could answer in your place: stop elicit.",
        );
    };
    let spent: Vec<String> = state.one_time.drain(..=at).collect();
    for o in spent {
        if state.spent.len() >= super::state::ONE_TIME {
            state.spent.pop_front();
        }
        state.spent.push_back(o);
    }
    let mut reply = plain(303, "on to the page");
    reply.extra.push(("Location", format!("/{}/", page.token)));
    reply.extra.push((
        "Set-Cookie",
        format!(
            "{COOKIE}={}; Path=/{}/; HttpOnly; SameSite=Strict",
            page.session, page.token
        ),
    ));
    reply
}

/// The path after the page's secret path, when the request carries the
/// session cookie.
fn checked_path<'a>(page: &Page, request: &Request, path: &'a str) -> Result<&'a str, Reply> {
    let rest = path
        .strip_prefix('/')
        .and_then(|p| p.split_once('/'))
        .filter(|(token, _)| same_secret(token, &page.token))
        .map(|(_, rest)| rest)
        .ok_or_else(|| plain(404, "not found"))?;
    if !has_session(page, request) {
        return Err(plain(
            403,
            "refused: this browser has not opened the page through elicit's one-time \
             address (elicit prints a new one with its next request)",
        ));
    }
    Ok(rest)
}

fn get_route(page: &Arc<Page>, request: &Request, url: &str, rest: &str) -> Reply {
    let query = url.split_once('?').map_or("", |(_, q)| q);
    match (request.method(), rest) {
        ("GET", "") => {
            let nonce = match super::state::random_hex() {
                Ok(n) => n,
                Err(_) => return plain(500, "no randomness"),
            };
            let state = page.lock();
            page_reply(200, html::page(page, &state, &nonce, None), &nonce)
        }
        ("GET", "events") => watch(page, query),
        ("GET" | "HEAD", _) => plain(404, "not found"),
        _ => plain(405, "method not allowed"),
    }
}

/// `GET events?since=V`: answers when the list's version is not `V`, or
/// after [`WATCH`] with the same one (the script then asks again).
fn watch(page: &Arc<Page>, query: &str) -> Reply {
    let since: Option<u64> = url::form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == "since")
        .and_then(|(_, v)| v.parse().ok());
    let until = Instant::now() + WATCH;
    let mut state = page.lock();
    state.watching += 1;
    while since == Some(state.version) {
        let now = Instant::now();
        if now >= until {
            break;
        }
        state = page
            .changed
            .wait_timeout(state, until - now)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
    state.watching -= 1;
    state.last_seen = Some(Instant::now());
    json_reply(
        serde_json::json!({
            "version": state.version,
            "pending": state.pending.len(),
        })
        .to_string(),
    )
}

/// Reads a POSTed answer; an accepted one is put in `answered`.
fn post_answer(
    page: &Arc<Page>,
    request: &mut Request,
    port: u16,
    id: u64,
    answered: &mut Answered,
) -> Reply {
    let fetch_site = header_value(request, "Sec-Fetch-Site");
    if !origin_is_ours(header_value(request, "Origin"), fetch_site, port) {
        return plain(403, "refused: this answer does not come from elicit's page");
    }
    let form_type = header_value(request, "Content-Type")
        .and_then(|t| t.split(';').next())
        .map(str::trim);
    if form_type != Some("application/x-www-form-urlencoded") {
        return plain(415, "refused: expected a form submission");
    }
    let length = match request.body_length() {
        Some(n) if n > MAX_BODY as u64 => return plain(413, "refused: the answer is too large"),
        Some(n) => n,
        None => return plain(411, "refused: an answer needs its Content-Length"),
    };
    let Ok(body) = request.read_body(length) else {
        return plain(400, "the answer could not be read");
    };
    let fields = submit::Submitted::parse(&body);
    if !fields
        .csrf
        .as_deref()
        .is_some_and(|t| same_secret(t, &page.csrf))
    {
        return plain(
            403,
            "refused: the page's token is missing or wrong; reload the page",
        );
    }
    let Ok(nonce) = super::state::random_hex() else {
        return plain(500, "no randomness");
    };
    let mut state = page.lock();
    let Some(entry) = state.pending.iter().find(|e| e.id == id) else {
        let notice = html::Notice::Gone(
            state
                .recent
                .iter()
                .find(|f| f.id == id)
                .map(|f| f.what.clone()),
        );
        let body = html::page(page, &state, &nonce, Some((&notice, None)));
        return page_reply(409, body, &nonce);
    };
    let outcome = match fields.action.as_deref() {
        Some("decline") => Outcome::Decline,
        Some("cancel") => Outcome::Cancel,
        Some("accept") => match submit::read(entry, &fields.values) {
            Ok(content) => Outcome::Accept(content),
            Err(errors) => {
                let notice = html::Notice::Errors;
                let retry = html::Retry {
                    id,
                    values: &fields.values,
                    errors: &errors,
                };
                let body = html::page(page, &state, &nonce, Some((&notice, Some(retry))));
                return page_reply(422, body, &nonce);
            }
        },
        _ => {
            return plain(
                400,
                "the answer names no action (accept, decline or cancel)",
            )
        }
    };
    let server = entry.server.clone();
    let what = match &outcome {
        Outcome::Accept(_) => html::Notice::Sent(server),
        Outcome::Decline => html::Notice::Declined(server),
        Outcome::Cancel => html::Notice::Cancelled(server),
    };
    if page.take(&mut state, id, &outcome) {
        *answered = Some((id, outcome));
    }
    let body = html::page(page, &state, &nonce, Some((&what, None)));
    page_reply(200, body, &nonce)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_listeners_own_host_and_origin_pass() {
        assert!(host_is_ours(Some("127.0.0.1:8123"), 8123));
        assert!(host_is_ours(Some("localhost:8123"), 8123));
        for bad in [
            None,
            Some("127.0.0.1"),
            Some("127.0.0.1:8124"),
            Some("evil.example:8123"),
            Some("localhost.evil.example:8123"),
            Some("127.0.0.1:8123.evil"),
        ] {
            assert!(!host_is_ours(bad, 8123), "{bad:?}");
        }
        assert!(origin_is_ours(Some("http://127.0.0.1:8123"), None, 8123));
        assert!(origin_is_ours(Some("http://localhost:8123"), None, 8123));
        assert!(origin_is_ours(Some("null"), Some("same-origin"), 8123));
        for (origin, site) in [
            (None, Some("same-origin")),
            (Some("null"), None),
            (Some("null"), Some("cross-site")),
            (Some("null"), Some("same-site")),
            (Some("https://127.0.0.1:8123"), None),
            (Some("http://evil.example:8123"), Some("same-origin")),
            (Some("http://127.0.0.1:8124"), None),
        ] {
            assert!(!origin_is_ours(origin, site, 8123), "{origin:?} {site:?}");
        }
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "ab"));
        assert!(!same_secret("", "a"));
    }
}
