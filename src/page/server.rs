//! The page's HTTP side: a `tiny_http` listener on 127.0.0.1, open only
//! while an elicitation waits, and the checks every request passes before
//! anything is shown or answered.
//!
//! Any local process, and any web page in the person's browser, can reach a
//! port on 127.0.0.1. So: nothing is served outside the random token's path
//! (404); the `Host` must be this listener's own (a DNS-rebinding page
//! sends its own name); a POST must come from the page itself (its
//! `Origin`) and carry the page's CSRF token; bodies are capped; every
//! response forbids framing, caching, referrers, sniffing and any script
//! or style but the page's own (a CSP nonce).

use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant};

use tiny_http::{Method, Request, Server};

use super::{html, submit, Listener, Outcome, Page, State};
use crate::error::ElicitError;

/// The largest request body read (a form of many long fields fits).
pub const MAX_BODY: usize = 256 * 1024;

/// How long the page's script waits on one request for news.
const WATCH: Duration = Duration::from_secs(20);

/// Requests handled at once; past it the listener answers 503.
const MAX_IN_FLIGHT: usize = 32;

/// How recently a page must have asked for news to count as open.
const SEEN_RECENTLY: Duration = Duration::from_secs(5);

/// What [`ensure_listening`] did.
pub(super) struct Opened {
    address: String,
    /// A page is open in the browser already (it watches the same address).
    page_is_open: bool,
}

/// Opens the listener if it is closed. `Some` when it was opened now.
pub(super) fn ensure_listening(
    page: &Arc<Page>,
    state: &mut MutexGuard<'_, State>,
) -> Result<Option<Opened>, ElicitError> {
    if state.listener.is_some() {
        return Ok(None);
    }
    let bind = |port: u16| Server::http(("127.0.0.1", port));
    // The last port first: a page left open finds the new elicitation.
    let (server, reused) = match state.last_port.map(bind) {
        Some(Ok(s)) => (s, true),
        _ => (
            bind(0).map_err(|e| {
                ElicitError::io(
                    "cannot serve the page on 127.0.0.1",
                    std::io::Error::other(e.to_string()),
                )
            })?,
            false,
        ),
    };
    let port = server
        .server_addr()
        .to_ip()
        .map(|a| a.port())
        .ok_or_else(|| {
            ElicitError::io(
                "serving the page",
                std::io::Error::other("the listener has no port"),
            )
        })?;
    let server = Arc::new(server);
    let accept = {
        let server = server.clone();
        let page = page.clone();
        std::thread::spawn(move || accept_loop(&page, &server, port))
    };
    let page_is_open = reused
        && (state.watching > 0 || state.last_seen.is_some_and(|t| t.elapsed() < SEEN_RECENTLY));
    state.listener = Some(Listener {
        port,
        server,
        accept: Some(accept),
    });
    state.last_port = Some(port);
    Ok(Some(Opened {
        address: page.address(port),
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
    match super::opener(&page.options).launch(address) {
        Ok(()) => {
            if unattended {
                say();
            }
            Ok(())
        }
        Err(e) => {
            let why = crate::text::sanitize::sanitize_line(&e.to_string());
            if !unattended {
                eprintln!(
                    "elicit: could not open a browser ({why}); open the address above yourself"
                );
            }
            Err(why)
        }
    }
}

/// Closes the listener when nothing waits.
pub(super) fn close_when_idle(page: &Page) {
    let listener = {
        let mut state = page.lock();
        if !state.pending.is_empty() {
            return;
        }
        state.listener.take()
    };
    if let Some(mut l) = listener {
        l.server.unblock();
        if let Some(accept) = l.accept.take() {
            let _ = accept.join();
        }
        // Pages watching for news hear of the change and find the door shut.
        page.changed.notify_all();
    }
}

fn accept_loop(page: &Arc<Page>, server: &Arc<Server>, port: u16) {
    let in_flight = Arc::new(AtomicUsize::new(0));
    for request in server.incoming_requests() {
        if in_flight.fetch_add(1, Ordering::SeqCst) >= MAX_IN_FLIGHT {
            in_flight.fetch_sub(1, Ordering::SeqCst);
            send(request, plain(503, "busy"));
            continue;
        }
        let page = page.clone();
        let in_flight = in_flight.clone();
        std::thread::spawn(move || {
            handle(&page, request, port);
            in_flight.fetch_sub(1, Ordering::SeqCst);
        });
    }
}

/// A response, written by [`send`].
pub(super) struct Reply {
    status: u16,
    content_type: &'static str,
    /// The page's CSP nonce: its own style and script may run.
    nonce: Option<String>,
    body: Vec<u8>,
}

fn plain(status: u16, text: &str) -> Reply {
    Reply {
        status,
        content_type: "text/plain; charset=utf-8",
        nonce: None,
        body: format!("{text}\n").into_bytes(),
    }
}

fn page_reply(status: u16, body: String, nonce: &str) -> Reply {
    Reply {
        status,
        content_type: "text/html; charset=utf-8",
        nonce: Some(nonce.to_string()),
        body: body.into_bytes(),
    }
}

fn json_reply(body: String) -> Reply {
    Reply {
        status: 200,
        content_type: "application/json",
        nonce: None,
        body: body.into_bytes(),
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        421 => "Misdirected Request",
        422 => "Unprocessable Content",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    }
}

/// Writes the reply with the headers every response carries, and
/// `Connection: close`. tiny_http parses the requests, but drops a
/// `Connection` header a handler sets, and a connection the browser keeps
/// alive would outlive the listener: reused for the next elicitation's page,
/// it would wait forever on a server that is gone. So the head is written
/// here, through the request's own writer.
fn send(request: Request, reply: Reply) {
    let csp = match &reply.nonce {
        Some(n) => format!(
            "default-src 'none'; script-src 'nonce-{n}'; style-src 'nonce-{n}'; \
             connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; \
             frame-ancestors 'none'"
        ),
        None => "default-src 'none'; frame-ancestors 'none'; base-uri 'none'".into(),
    };
    let head_only = *request.method() == Method::Head;
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        reply.status,
        reason(reply.status),
        reply.content_type,
        reply.body.len()
    );
    for (name, value) in [
        ("Content-Security-Policy", csp.as_str()),
        ("Cache-Control", "no-store"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
    ] {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let mut writer = request.into_writer();
    let _ = writer.write_all(head.as_bytes());
    if !head_only {
        let _ = writer.write_all(&reply.body);
    }
    let _ = writer.flush();
}

fn header_value<'a>(request: &'a Request, name: &'static str) -> Option<&'a str> {
    request
        .headers()
        .iter()
        .find(|h| h.field.equiv(name))
        .map(|h| h.value.as_str())
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
    let (reply, answered) = route(page, &mut request, port);
    send(request, reply);
    if let Some((id, outcome)) = answered {
        page.deliver(id, outcome);
    }
}

fn route(page: &Arc<Page>, request: &mut Request, port: u16) -> (Reply, Answered) {
    match request.method() {
        Method::Post => post_route(page, request, port),
        _ => (get_route(page, request, port), None),
    }
}

fn post_route(page: &Arc<Page>, request: &mut Request, port: u16) -> (Reply, Answered) {
    let url = request.url().to_string();
    match checked_path(page, request, port, &url) {
        Err(reply) => (reply, None),
        Ok(rest) => match rest.strip_prefix("answer/").map(str::parse::<u64>) {
            Some(Ok(id)) => {
                let mut answered = None;
                let reply = post_answer(page, request, port, id, &mut answered);
                (reply, answered)
            }
            _ => (plain(404, "not found"), None),
        },
    }
}

/// The path after the token, when the Host is ours and the token right.
fn checked_path<'a>(
    page: &Page,
    request: &Request,
    port: u16,
    url: &'a str,
) -> Result<&'a str, Reply> {
    if !host_is_ours(header_value(request, "Host"), port) {
        return Err(plain(
            421,
            "this page answers only at 127.0.0.1 or localhost with its own port",
        ));
    }
    let path = url.split_once('?').map_or(url, |(p, _)| p);
    path.strip_prefix('/')
        .and_then(|p| p.split_once('/'))
        .filter(|(token, _)| same_secret(token, &page.token))
        .map(|(_, rest)| rest)
        .ok_or_else(|| plain(404, "not found"))
}

fn get_route(page: &Arc<Page>, request: &mut Request, port: u16) -> Reply {
    let url = request.url().to_string();
    let rest = match checked_path(page, request, port, &url) {
        Ok(rest) => rest,
        Err(reply) => return reply,
    };
    let query = url.split_once('?').map_or("", |(_, q)| q);
    match (request.method(), rest) {
        (Method::Get, "") => {
            let nonce = match super::random_hex() {
                Ok(n) => n,
                Err(_) => return plain(500, "no randomness"),
            };
            let state = page.lock();
            page_reply(200, html::page(page, &state, &nonce, None), &nonce)
        }
        (Method::Get, "events") => watch(page, query),
        (Method::Get | Method::Head, _) => plain(404, "not found"),
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
    while since == Some(state.version) && state.listener.is_some() {
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
    if request.body_length().is_some_and(|n| n > MAX_BODY) {
        return plain(413, "refused: the answer is too large");
    }
    let mut body = Vec::new();
    if request
        .as_reader()
        .take(MAX_BODY as u64 + 1)
        .read_to_end(&mut body)
        .is_err()
    {
        return plain(400, "the answer could not be read");
    }
    if body.len() > MAX_BODY {
        return plain(413, "refused: the answer is too large");
    }
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(&body)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let fields = submit::Submitted::split(pairs);
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
    let Ok(nonce) = super::random_hex() else {
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
