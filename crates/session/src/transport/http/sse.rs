//! The legacy HTTP+SSE transport (protocol 2024-11-05), still widely
//! deployed: a GET on the server's URL opens an event stream whose first
//! `endpoint` event names the URL to POST messages to; every reply and
//! server request arrives on that one stream.
//!
//! Reached with `--transport sse`, or from [`super`] when a Streamable
//! HTTP `initialize` POST is refused with 400/404/405 (the spec's
//! backwards-compatibility rule).

use std::io::BufReader;
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::client::{content_type, off_thread, preview, read_body, within, Bound, Client};
use super::sse_reader::SseReader;
use crate::transport::queue::{self, QueueReceiver, QueueSender};
use crate::transport::recent_ids::{server_request_id, RecentIds};
use crate::transport::{Delivery, Incoming, Transport};
use elicit_core::error::{ElicitError, ServerError};

/// How long the server has to send its `endpoint` event.
const ENDPOINT_WAIT: Duration = Duration::from_secs(15);

pub(crate) struct SseTransport {
    client: Arc<Client>,
    /// Where messages are POSTed (from the `endpoint` event).
    endpoint: String,
    rx: QueueReceiver<Delivery>,
    /// Our own way into `rx`, for [`Transport::waker`].
    wake: QueueSender<Delivery>,
}

impl SseTransport {
    /// Opens the event stream and waits for its `endpoint` event, each
    /// within the client's timeout (Ctrl-C ends either wait).
    pub(crate) fn connect(url: &str, client: Client) -> Result<Self, ElicitError> {
        let client = Arc::new(client);
        let getter = client.clone();
        let target = url.to_string();
        let response = off_thread(&client, move || {
            let url = target.as_str();
            getter.execute(url, "opening the server's event stream", &|agent| {
                let mut req = Bound::Head(getter.timeout).apply(agent.get(url));
                for (k, v) in getter.base_headers("GET", url) {
                    req = req.header(k, v);
                }
                req.header("Accept", "text/event-stream").call()
            })
        })??;
        let status = response.status().as_u16();
        let ct = content_type(&response);
        if status != 200 || ct != "text/event-stream" {
            let bytes = read_body(response.into_body().into_reader()).unwrap_or_default();
            return Err(ElicitError::Server(ServerError::NotEventStream {
                url: elicit_core::text::sanitize::sanitize_line(url),
                status,
                content_type: if ct.is_empty() {
                    "no content type".into()
                } else {
                    elicit_core::text::sanitize::sanitize_line(&ct)
                },
                body: preview(&bytes),
            }));
        }
        let (tx, rx) = queue::bounded::<Delivery>();
        let wake = tx.clone();
        let (endpoint_tx, endpoint_rx) = mpsc::channel::<Result<String, String>>();
        let base = url.to_string();
        let reader_client = client.clone();
        let body = response.into_body();
        std::thread::spawn(move || {
            read_events(&reader_client, &base, body, &tx, &endpoint_tx);
        });
        let wait = ENDPOINT_WAIT.min(client.timeout);
        let started = Instant::now();
        let interrupts = elicit_platform::handlers::ctrl_c_for_server();
        let endpoint = loop {
            match endpoint_rx.recv_timeout(Duration::from_millis(50)) {
                Ok(Ok(e)) => break e,
                Ok(Err(e)) => return Err(ElicitError::Server(ServerError::BadEndpoint(e))),
                Err(mpsc::RecvTimeoutError::Timeout) if started.elapsed() < wait => {}
                Err(_) => {
                    return Err(ElicitError::Server(ServerError::NoEndpointEvent {
                        waited: wait,
                    }))
                }
            }
            if elicit_platform::handlers::ctrl_c_for_server() != interrupts {
                return Err(ElicitError::Server(ServerError::Interrupted));
            }
        };
        Ok(SseTransport {
            client,
            endpoint,
            rx,
            wake,
        })
    }

    /// Sends without recording (the caller recorded it already), within
    /// the client's timeout and `deadline`, Ctrl-C ending the wait.
    pub(crate) fn send_unlogged(
        &mut self,
        message: &Value,
        deadline: Option<Instant>,
    ) -> Result<(), ElicitError> {
        let body = serde_json::to_vec(message).expect("values serialise");
        let endpoint = self.endpoint.clone();
        let client = self.client.clone();
        let what = match message.get("method").and_then(Value::as_str) {
            Some(m) => format!("sending {m}"),
            None => "sending a reply to the server".into(),
        };
        let bound = Bound::Ack(within(client.timeout, deadline));
        let doing = what.clone();
        let (status, bytes) = off_thread(&self.client, move || {
            let endpoint = endpoint.as_str();
            let response = client.execute(endpoint, &doing, &|agent| {
                let mut req = bound.apply(agent.post(endpoint));
                for (k, v) in client.base_headers("POST", endpoint) {
                    req = req.header(k, v);
                }
                req.header("Content-Type", "application/json")
                    .send(&body[..])
            })?;
            let status = response.status().as_u16();
            let bytes = read_body(response.into_body().into_reader()).unwrap_or_default();
            Ok::<_, ElicitError>((status, bytes))
        })??;
        match status {
            200..=299 => Ok(()),
            404 => Err(ElicitError::Server(ServerError::SessionExpired {
                during: Some(what.to_string()),
            })),
            _ => Err(ElicitError::Server(ServerError::HttpStatus {
                what: what.to_string(),
                status,
                body: preview(&bytes),
            })),
        }
    }
}

/// Reads the event stream: the first `endpoint` event, then messages.
fn read_events(
    client: &Client,
    base: &str,
    body: ureq::Body,
    tx: &QueueSender<Delivery>,
    endpoint_tx: &Sender<Result<String, String>>,
) {
    let mut endpoint_sent = false;
    // A replayed event, or a server request sent again, is acted on once.
    let mut seen_events = RecentIds::default();
    let mut seen_requests = RecentIds::default();
    let sse = SseReader::new(BufReader::new(body.into_reader()));
    for event in sse {
        let ev = match event {
            Ok(ev) => ev,
            Err(e) => {
                let _ = tx.send(
                    Err(ElicitError::Server(ServerError::StreamBroke(e.to_string()))),
                    0,
                );
                return;
            }
        };
        match ev.event.as_str() {
            "endpoint" if !endpoint_sent => {
                endpoint_sent = true;
                let _ = endpoint_tx.send(resolve_endpoint(base, ev.data.trim()));
            }
            "message" if !ev.data.is_empty() => {
                if ev.own_id && !ev.id.as_deref().is_none_or(|id| seen_events.first_time(id)) {
                    continue;
                }
                let (parsed, weight) = crate::transport::message_limits::parse_weighed(&ev.data);
                let delivery = match parsed {
                    Ok(v) => {
                        client.record("recv", Ok(&v));
                        let again =
                            server_request_id(&v).is_some_and(|id| !seen_requests.first_time(&id));
                        if again {
                            continue;
                        }
                        Ok(Incoming::Message(v))
                    }
                    Err(e) => {
                        client.record("recv", Err(&ev.data));
                        Ok(Incoming::Malformed {
                            line: crate::transport::message_limits::excerpt(&ev.data),
                            error: e,
                        })
                    }
                };
                // Waits while the queue is full: the stream is not read meanwhile.
                if tx.send(delivery, weight).is_err() {
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
    let _ = tx.send(Ok(Incoming::Closed), 0);
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
            elicit_core::text::sanitize::sanitize_line(&joined.origin().ascii_serialization())
        ));
    }
    Ok(joined.to_string())
}

impl Transport for SseTransport {
    fn send(&mut self, message: &Value) -> Result<(), ElicitError> {
        self.send_by(message, None)
    }

    fn send_by(&mut self, message: &Value, deadline: Option<Instant>) -> Result<(), ElicitError> {
        self.client.record("send", Ok(message));
        self.send_unlogged(message, deadline)
    }

    fn receive(&mut self, timeout: Option<Duration>) -> Result<Incoming, ElicitError> {
        crate::transport::receive_delivery(&self.rx, timeout)
    }

    fn close(&mut self, _grace: Duration) {}

    fn waker(&self) -> Option<crate::transport::Waker> {
        let wake = self.wake.clone();
        Some(Arc::new(move || {
            wake.send_if_empty(Ok(Incoming::TimedOut));
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
