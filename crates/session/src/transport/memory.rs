//! An in-memory [`Transport`], for unit tests of what runs over the seam
//! (the client, the remote relay): [`pair`] gives the transport and the
//! handle a test plays the server with.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::{Incoming, Transport, Waker};
use elicit_core::error::{ElicitError, ServerError};

/// The transport's end: what it sends reaches the [`MemoryServer`], what
/// that sends arrives here.
pub struct MemoryTransport {
    incoming: Receiver<Incoming>,
    /// Our own way into `incoming`, for the [`Transport::waker`].
    wake: Sender<Incoming>,
    outgoing: Sender<Value>,
    gate: Arc<Gate>,
    closed: Arc<AtomicBool>,
}

/// The server's end, driven by a test.
pub struct MemoryServer {
    to_transport: Sender<Incoming>,
    from_transport: Receiver<Value>,
    gate: Arc<Gate>,
    closed: Arc<AtomicBool>,
}

/// Holds `send` while the server "stalls" (a POST that never completes).
#[derive(Default)]
struct Gate {
    stalled: Mutex<bool>,
    changed: Condvar,
}

/// A connected transport and server.
pub fn pair() -> (MemoryTransport, MemoryServer) {
    let (to_transport, incoming) = mpsc::channel();
    let (outgoing, from_transport) = mpsc::channel();
    let gate = Arc::new(Gate::default());
    let closed = Arc::new(AtomicBool::new(false));
    (
        MemoryTransport {
            incoming,
            wake: to_transport.clone(),
            outgoing,
            gate: gate.clone(),
            closed: closed.clone(),
        },
        MemoryServer {
            to_transport,
            from_transport,
            gate,
            closed,
        },
    )
}

impl MemoryServer {
    /// Sends a message to the transport.
    pub fn send(&self, message: Value) {
        let _ = self.to_transport.send(Incoming::Message(message));
    }

    /// The next message the transport sent, waiting up to `timeout`.
    pub fn receive(&self, timeout: Duration) -> Option<Value> {
        self.from_transport.recv_timeout(timeout).ok()
    }

    /// While stalled, the transport's `send` blocks (until released).
    pub fn stall_sends(&self, stalled: bool) {
        *self.gate.stalled.lock().expect("gate lock") = stalled;
        self.gate.changed.notify_all();
    }

    /// Whether the transport was closed.
    pub fn was_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// The server goes away: the transport receives [`Incoming::Closed`].
    pub fn hang_up(&self) {
        let _ = self.to_transport.send(Incoming::Closed);
    }
}

impl Transport for MemoryTransport {
    fn send(&mut self, message: &Value) -> Result<(), ElicitError> {
        let mut stalled = self.gate.stalled.lock().expect("gate lock");
        while *stalled {
            stalled = self.gate.changed.wait(stalled).expect("gate lock");
        }
        drop(stalled);
        self.outgoing
            .send(message.clone())
            .map_err(|_| ElicitError::Server(ServerError::InMemoryGone))
    }

    fn receive(&mut self, timeout: Option<Duration>) -> Result<Incoming, ElicitError> {
        let got = match timeout {
            Some(t) => self.incoming.recv_timeout(t),
            None => self
                .incoming
                .recv()
                .map_err(|_| RecvTimeoutError::Disconnected),
        };
        match got {
            Ok(m) => Ok(m),
            Err(RecvTimeoutError::Timeout) => Ok(Incoming::TimedOut),
            Err(RecvTimeoutError::Disconnected) => Ok(Incoming::Closed),
        }
    }

    fn close(&mut self, _grace: Duration) {
        self.closed.store(true, Ordering::SeqCst);
    }

    fn waker(&self) -> Option<Waker> {
        let wake = self.wake.clone();
        Some(Arc::new(move || {
            let _ = wake.send(Incoming::TimedOut);
        }))
    }
}
