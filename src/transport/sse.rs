//! The legacy HTTP+SSE transport (protocol 2024-11-05), still widely
//! deployed: a GET on the server's URL opens an event stream whose first
//! `endpoint` event names the URL to POST messages to; every reply and
//! server request arrives on that one stream.
//!
//! Reached with `--transport sse`, or from [`super::http`] when a Streamable
//! HTTP `initialize` POST is refused with 400/404/405 (the spec's
//! backwards-compatibility rule).

use std::io::BufReader;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::http::{content_type, preview, read_body, Client};
use super::sse_reader::SseReader;
use super::{Delivery, Incoming, Transport};
use crate::error::ElicitError;

/// How long the server has to send its `endpoint` event.
const ENDPOINT_WAIT: Duration = Duration::from_secs(15);

pub struct SseTransport {
    client: Arc<Client>,
    /// Where messages are POSTed (from the `endpoint` event).
    endpoint: String,
    rx: Receiver<Delivery>,
    /// Our own way into `rx`, for [`Transport::waker`].
    wake: Sender<Delivery>,
}

impl SseTransport {
    /// Opens the event stream and waits for its `endpoint` event.
    pub(crate) fn connect(url: &str, client: Client) -> Result<Self, ElicitError> {
        let client = Arc::new(client);
        let response = client.execute(url, "opening the server's event stream", &|agent| {
            let mut req = agent.get(url);
            for (k, v) in client.base_headers(url) {
                req = req.header(k, v);
            }
            req.header("Accept", "text/event-stream").call()
        })?;
        let status = response.status().as_u16();
        let ct = content_type(&response);
        if status != 200 || ct != "text/event-stream" {
            let bytes = read_body(response.into_body().into_reader()).unwrap_or_default();
            return Err(ElicitError::Server(format!(
                "GET {} answered HTTP {status} ({}) instead of an event stream: is it an MCP endpoint? {}",
                crate::text::sanitize::sanitize_line(url),
                if ct.is_empty() { "no content type" } else { &ct },
                preview(&bytes)
            )));
        }
        let (tx, rx) = mpsc::channel::<Delivery>();
        let wake = tx.clone();
        let (endpoint_tx, endpoint_rx) = mpsc::channel::<Result<String, String>>();
        let base = url.to_string();
        let reader_client = client.clone();
        let body = response.into_body();
        std::thread::spawn(move || {
            read_events(&reader_client, &base, body, &tx, &endpoint_tx);
        });
        let endpoint = match endpoint_rx.recv_timeout(ENDPOINT_WAIT) {
            Ok(Ok(e)) => e,
            Ok(Err(e)) => return Err(ElicitError::Server(e)),
            Err(_) => {
                return Err(ElicitError::Server(format!(
                    "the server's event stream sent no `endpoint` event within {}s: it is not a legacy HTTP+SSE MCP server",
                    ENDPOINT_WAIT.as_secs()
                )))
            }
        };
        Ok(SseTransport {
            client,
            endpoint,
            rx,
            wake,
        })
    }

    /// Sends without recording (the caller recorded it already).
    pub(crate) fn send_unlogged(&mut self, message: &Value) -> Result<(), ElicitError> {
        let body = serde_json::to_vec(message).expect("values serialise");
        let endpoint = &self.endpoint;
        let client = &self.client;
        let what = match message.get("method").and_then(Value::as_str) {
            Some(m) => format!("sending {m}"),
            None => "sending a reply to the server".into(),
        };
        let response = client.execute(endpoint, &what, &|agent| {
            let mut req = agent.post(endpoint);
            for (k, v) in client.base_headers(endpoint) {
                req = req.header(k, v);
            }
            req.header("Content-Type", "application/json")
                .send(&body[..])
        })?;
        let status = response.status().as_u16();
        let bytes = read_body(response.into_body().into_reader()).unwrap_or_default();
        match status {
            200..=299 => Ok(()),
            404 => Err(ElicitError::Server(format!(
                "{what}: the server no longer knows this session (HTTP 404 from its message endpoint): it ended or expired; run the command again"
            ))),
            _ => Err(ElicitError::Server(format!(
                "{what}: the server answered HTTP {status}: {}",
                preview(&bytes)
            ))),
        }
    }
}

/// Reads the event stream: the first `endpoint` event, then messages.
fn read_events(
    client: &Client,
    base: &str,
    body: ureq::Body,
    tx: &Sender<Delivery>,
    endpoint_tx: &Sender<Result<String, String>>,
) {
    let mut endpoint_sent = false;
    let sse = SseReader::new(BufReader::new(body.into_reader()));
    for event in sse {
        let ev = match event {
            Ok(ev) => ev,
            Err(e) => {
                let _ = tx.send(Err(ElicitError::Server(format!(
                    "the server's event stream broke: {e}"
                ))));
                return;
            }
        };
        match ev.event.as_str() {
            "endpoint" if !endpoint_sent => {
                endpoint_sent = true;
                let _ = endpoint_tx.send(resolve_endpoint(base, ev.data.trim()));
            }
            "message" if !ev.data.is_empty() => {
                let delivery = match serde_json::from_str::<Value>(&ev.data) {
                    Ok(v) => {
                        client.record("recv", Ok(&v));
                        Ok(Incoming::Message(v))
                    }
                    Err(e) => {
                        client.record("recv", Err(&ev.data));
                        Ok(Incoming::Malformed {
                            line: ev.data.clone(),
                            error: e.to_string(),
                        })
                    }
                };
                if tx.send(delivery).is_err() {
                    return;
                }
            }
            _ => {}
        }
    }
    if !endpoint_sent {
        let _ = endpoint_tx.send(Err(
            "the server's event stream ended before its `endpoint` event".into(),
        ));
    }
    let _ = tx.send(Ok(Incoming::Closed));
}

/// The POST URL from an `endpoint` event, resolved against the stream's
/// URL. It must stay on the same origin: a server must not send elicit's
/// messages (and its headers) elsewhere.
fn resolve_endpoint(base: &str, data: &str) -> Result<String, String> {
    let base = url::Url::parse(base).map_err(|e| format!("bad URL {base}: {e}"))?;
    let joined = base
        .join(data)
        .map_err(|e| format!("the server's endpoint event is not a URL ({e})"))?;
    if joined.origin() != base.origin() {
        return Err(format!(
            "the server's endpoint event points to another origin ({}); refused",
            crate::text::sanitize::sanitize_line(&joined.origin().ascii_serialization())
        ));
    }
    Ok(joined.to_string())
}

impl Transport for SseTransport {
    fn send(&mut self, message: &Value) -> Result<(), ElicitError> {
        self.client.record("send", Ok(message));
        self.send_unlogged(message)
    }

    fn receive(&mut self, timeout: Option<Duration>) -> Result<Incoming, ElicitError> {
        super::receive_delivery(&self.rx, timeout)
    }

    fn close(&mut self, _grace: Duration) {}

    fn waker(&self) -> Option<super::Waker> {
        let wake = self.wake.clone();
        Some(Arc::new(move || {
            let _ = wake.send(Ok(Incoming::TimedOut));
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_resolve_on_the_same_origin_only() {
        assert_eq!(
            resolve_endpoint("http://127.0.0.1:3000/sse", "/message?sessionId=1").unwrap(),
            "http://127.0.0.1:3000/message?sessionId=1"
        );
        assert!(resolve_endpoint("http://127.0.0.1:3000/sse", "http://evil.example/x").is_err());
    }
}
