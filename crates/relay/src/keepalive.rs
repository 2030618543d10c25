//! Keeping a client's request alive while a person answers: a client's
//! request timeout starts with its `tools/call` and knows nothing of the
//! elicitation the server blocks on meanwhile, so clients that reset the
//! timeout on progress (the TypeScript SDK's `resetTimeoutOnProgress`) are
//! sent `notifications/progress` for the request's `progressToken` at a
//! steady interval while elicit's person answers.
//!
//! The spec requires a token's `progress` to increase with every
//! notification, and the server may send its own for the same token: a
//! keep-alive carries a value a tiny step above the last one the client got
//! (the server's or elicit's), so a server counting in whole steps never
//! meets it, and a server value that is no longer above what the client got
//! is withheld rather than sent backwards. Each keep-alive is decided and
//! written under the client writer's lock ([`Sides::to_client_if`]), after
//! which the request's reply (whose arrival forgets the request first) can
//! no longer be overtaken: none is sent after the request's result.

use std::cell::Cell;
use std::sync::Weak;
use std::time::Duration;

use serde_json::{json, Value};

use super::envelope::RequestId;
use super::state::Watched;
use super::{Relay, Sides, Taken};
use elicit_core::elicitation::protocol::wire;

/// How often a request in flight hears that a person is still answering.
/// Below the shortest request timeout clients are known to use with
/// `resetTimeoutOnProgress`, and cheap: one short line.
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(2);

/// The step a keep-alive's `progress` goes above the last value the client
/// got: small enough that a server counting in whole (or tenth) steps never
/// meets elicit's values, big enough to stay exact in an `f64` for values
/// into the billions.
const STEP: f64 = 1.0 / (1u64 << 20) as f64;

/// What a keep-alive says beside its value.
const MESSAGE: &str = "elicit: waiting for a person to answer the server's question";

/// The progress token in a client request's `_meta`, if it gave one.
fn token_of(msg: &Value) -> Option<&Value> {
    msg.pointer("/params/_meta")
        .and_then(|m| m.get(wire::PROGRESS_TOKEN))
        .filter(|t| t.is_string() || t.is_number())
}

/// The smallest value elicit sends after `last`.
fn above(last: Option<f64>) -> f64 {
    match last {
        None => 0.0,
        Some(l) => (l + STEP).max(l.next_up()),
    }
}

impl<S: Sides> Relay<S> {
    /// A client request with a progress token, under its id: kept alive
    /// until its reply (or its cancellation) while a person answers.
    pub(crate) fn watch_progress(&self, id: &RequestId, msg: &Value) {
        if let Some(token) = token_of(msg) {
            let watched = Watched {
                token: token.clone(),
                last: None,
            };
            self.lock().progress.insert(id.clone(), watched);
        }
    }

    /// A server `notifications/progress` for a token elicit keeps alive:
    /// passed on (decided and written under the client writer's lock, as a
    /// keep-alive is) when its value is above what the client got, else
    /// withheld. `None` for any other token: relayed as it came.
    pub(crate) fn server_progress(&self, msg: &Value) -> Option<Taken> {
        let token = msg.pointer("/params/progressToken")?;
        let value = msg.pointer("/params/progress").and_then(Value::as_f64)?;
        if !self.lock().progress.values().any(|w| &w.token == token) {
            return None;
        }
        let passed = Cell::new(false);
        self.side.to_client_if(&|| {
            let mut st = self.lock();
            let watched = st.progress.values_mut().find(|w| &w.token == token)?;
            if watched.last.is_some_and(|l| value <= l) {
                return None;
            }
            watched.last = Some(value);
            passed.set(true);
            Some(msg.clone())
        });
        if !passed.get() {
            self.note(&format!(
                "withheld the server's progress {value} for token {}: the client already had a higher value",
                super::notes::quote(&token.to_string())
            ));
        }
        Some(Taken::Withheld)
    }

    /// Whether a person is answering one of the server's questions now.
    fn person_answering(&self) -> bool {
        // One lock at a time: neither is held while taking the other.
        let resolving = self.resolving.lock().unwrap_or_else(|e| e.into_inner()).2;
        resolving > 0 && !self.lock().client_gone
    }

    /// One keep-alive for each request in flight with a progress token,
    /// when a person is answering.
    fn keep_alive(&self) {
        if !self.person_answering() {
            return;
        }
        let ids: Vec<RequestId> = self.lock().progress.keys().cloned().collect();
        for id in ids {
            self.side.to_client_if(&|| {
                if !self.person_answering() {
                    return None;
                }
                let mut st = self.lock();
                let watched = st.progress.get_mut(&id)?;
                let value = above(watched.last);
                watched.last = Some(value);
                Some(
                    json!({"jsonrpc": "2.0", "method": wire::PROGRESS, "params": {
                    "progressToken": watched.token, "progress": value, "message": MESSAGE}}),
                )
            });
        }
    }
}

/// The keep-alive thread: every `interval`, a keep-alive for each request
/// in flight with a progress token while a person answers. Ends with the
/// relay.
pub(super) fn keep_alive<S: Sides>(relay: Weak<Relay<S>>, interval: Duration) {
    loop {
        std::thread::sleep(interval);
        let Some(relay) = relay.upgrade() else {
            return;
        };
        relay.keep_alive();
    }
}

#[cfg(test)]
#[path = "keepalive_tests.rs"]
mod tests;
