//! Reading what answers a request on Streamable HTTP: a JSON body or an SSE stream,
//! resumed with GET + `Last-Event-ID` after the server's `retry:`, and the standalone GET
//! stream of a 2025 session; a reply that cannot be read becomes a JSON-RPC error.

use std::io::BufReader;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use ureq::http::Response;
use ureq::Body;

use super::client::{content_type, read_body};
use super::session::Shared;
use super::sse_reader::SseReader;
use super::{DEFAULT_RETRY, MAX_RESUMES, MAX_RETRY};
use crate::transport::Incoming;
use elicit_core::error::{ElicitError, ServerError};

/// How a stream ended.
pub(super) enum StreamEnd {
    Answered,
    /// Ended (or broke) before the reply; resumable when an event id was seen.
    Cut {
        last_id: Option<String>,
        retry: Option<Duration>,
        error: Option<String>,
    },
}

/// Reads an SSE body, delivering each message; stops at the reply to
/// `pending`.
pub(super) fn read_stream(shared: &Shared, body: Body, pending: Option<&str>) -> StreamEnd {
    let mut sse = SseReader::new(BufReader::new(body.into_reader()));
    let mut error = None;
    for event in sse.by_ref() {
        match event {
            Ok(ev) => {
                if ev.data.is_empty() || ev.event != "message" {
                    continue; // priming events, unknown event types
                }
                let replayed = ev.own_id
                    && ev.id.as_deref().is_some_and(|id| {
                        !shared.seen_events.lock().expect("ids lock").first_time(id)
                    });
                if replayed {
                    continue;
                }
                if shared.deliver(&ev.data, pending) {
                    read_past_reply(shared, &mut sse);
                    return StreamEnd::Answered;
                }
            }
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        }
    }
    StreamEnd::Cut {
        last_id: sse.last_event_id().map(str::to_string),
        retry: sse.retry(),
        error,
    }
}

/// How many request streams may be read on past their reply at once.
const MAX_READ_PAST_REPLY: usize = 8;
/// Request streams being read on past their reply.
static READING_PAST_REPLY: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// After the reply, a server ends the stream (the spec says it should), and
/// its end is usually in the same read as the reply: reading on to it hands
/// the connection back to the agent's pool, where dropping the body would
/// close it and cost the next request a new connection. What else comes on
/// the stream meanwhile is delivered. A server that holds streams open
/// holds at most [`MAX_READ_PAST_REPLY`] of these threads; past that, a
/// stream is dropped at its reply.
fn read_past_reply<R: std::io::BufRead>(shared: &Shared, sse: &mut SseReader<R>) {
    use std::sync::atomic::Ordering;
    if READING_PAST_REPLY.fetch_add(1, Ordering::SeqCst) < MAX_READ_PAST_REPLY {
        for ev in sse.by_ref() {
            match ev {
                Ok(ev) if !ev.data.is_empty() && ev.event == "message" => {
                    shared.deliver(&ev.data, None);
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    }
    READING_PAST_REPLY.fetch_sub(1, Ordering::SeqCst);
}

/// Reads a request's reply (JSON or a stream, resumed as needed); every
/// failure goes to the client as an error.
pub(super) fn read_reply(shared: &Shared, response: Response<Body>, id: &str, method: &str) {
    if let Err(e) = try_read_reply(shared, response, id, method) {
        fail_request(shared, id, e);
    }
}

/// A request that cannot get its reply gets a JSON-RPC error in its place
/// (so a relayed client is never left waiting, and `call` reports it).
pub(super) fn fail_request(shared: &Shared, id: &str, e: ElicitError) {
    let reply = json!({"jsonrpc": "2.0",
        "id": serde_json::from_str::<Value>(id).unwrap_or(Value::Null),
        "error": {"code": elicit_core::error::rpc_code::INTERNAL_ERROR, "message": e.to_string()}});
    shared.client.record("recv", Ok(&reply));
    shared.push(Ok(Incoming::Message(reply)), 0);
}

pub(super) fn try_read_reply(
    shared: &Shared,
    response: Response<Body>,
    id: &str,
    method: &str,
) -> Result<(), ElicitError> {
    let kind = content_type(&response);
    let body = response.into_body();
    if kind == "application/json" {
        let bytes = read_body(body.into_reader()).map_err(|e| {
            ElicitError::Server(ServerError::ReadingReply {
                method: method.to_string(),
                detail: e.to_string(),
            })
        })?;
        let text = String::from_utf8_lossy(&bytes);
        shared.deliver(&text, Some(id));
        return Ok(());
    }
    // A resumption waits no later than a second before the request's
    // --timeout (counted from about when it was sent).
    let deadline = Instant::now() + shared.client.timeout;
    let mut end = read_stream(shared, body, Some(id));
    for _ in 0..MAX_RESUMES {
        let (last_id, retry, error) = match end {
            StreamEnd::Answered => return Ok(()),
            StreamEnd::Cut {
                last_id,
                retry,
                error,
            } => (last_id, retry, error),
        };
        let Some(last_id) = last_id else {
            return Err(ElicitError::Server(ServerError::StreamClosed {
                method: method.to_string(),
                why: error.map(|e| e.to_string()),
            }));
        };
        if !wait_to_resume(shared, retry, Some(deadline)) {
            return Ok(());
        }
        let response = shared.get(Some(&last_id), &format!("resuming the stream for {method}"))?;
        let status = response.status().as_u16();
        if let Some(e) = shared.session_gone(status) {
            return Err(e);
        }
        if status != 200 || content_type(&response) != "text/event-stream" {
            return Err(ElicitError::Server(ServerError::ResumeRefused {
                method: method.to_string(),
                status,
            }));
        }
        end = read_stream(shared, response.into_body(), Some(id));
    }
    Err(ElicitError::Server(ServerError::StreamCutTooOften {
        method: method.to_string(),
        resumes: MAX_RESUMES,
    }))
}

/// Waits before resuming a stream: the server's `retry:` (else a second),
/// at most [`MAX_RETRY`], and ending a second before `deadline`. False
/// when the session closed meanwhile (or before).
pub(super) fn wait_to_resume(
    shared: &Shared,
    retry: Option<Duration>,
    deadline: Option<Instant>,
) -> bool {
    let mut wait = retry.unwrap_or(DEFAULT_RETRY).min(MAX_RETRY);
    if let Some(d) = deadline {
        let left = d.saturating_duration_since(Instant::now());
        wait = wait.min(left.saturating_sub(Duration::from_secs(1)));
    }
    let until = Instant::now() + wait;
    loop {
        if shared.state.lock().expect("state lock").closed {
            return false;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
}

/// The standalone GET stream of a 2025 session: server messages not tied
/// to a request. 405 (or any refusal) means there is none.
/// `opened` hears once the first GET has its answer (or failed).
pub(super) fn standalone_stream(shared: Arc<Shared>, opened: Sender<()>) {
    let mut last_id: Option<String> = None;
    for _ in 0..MAX_RESUMES {
        let got = shared.get(last_id.as_deref(), "opening the server's message stream");
        let _ = opened.send(());
        let Ok(response) = got else {
            return;
        };
        if response.status().as_u16() != 200 || content_type(&response) != "text/event-stream" {
            return;
        }
        match read_stream(&shared, response.into_body(), None) {
            StreamEnd::Answered => return,
            StreamEnd::Cut {
                last_id: id, retry, ..
            } => {
                if id.is_none() || !wait_to_resume(&shared, retry, None) {
                    return;
                }
                last_id = id;
            }
        }
    }
}
