//! What a server sends twice is acted on once: an SSE event whose id was
//! seen before (a replay after a resumption, or a hostile repeat), and a
//! server request whose id was already delivered (MCP: a request id is
//! never reused within a session). Without this, one elicitation replayed
//! ten times was asked ten times.
//!
//! Only the most recent ids are remembered ([`MAX_REMEMBERED`]), so a
//! server sending endless fresh ids cannot grow the set.

use std::collections::{HashSet, VecDeque};

/// How many ids of each kind are remembered.
pub const MAX_REMEMBERED: usize = 4096;

/// A bounded set of recently seen ids.
#[derive(Debug, Default)]
pub(crate) struct RecentIds {
    order: VecDeque<String>,
    set: HashSet<String>,
}

impl RecentIds {
    /// Records `id`; false when it was seen already (a repeat: drop it).
    pub(crate) fn first_time(&mut self, id: &str) -> bool {
        if self.set.contains(id) {
            return false;
        }
        if self.order.len() >= MAX_REMEMBERED {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
        self.order.push_back(id.to_string());
        self.set.insert(id.to_string());
        true
    }
}

/// The id of a server request (a message with a method and an id), as
/// JSON text.
pub(crate) fn server_request_id(msg: &serde_json::Value) -> Option<String> {
    msg.get("method")?;
    msg.get("id")
        .filter(|i| !i.is_null())
        .map(|i| i.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_caught_and_the_memory_is_bounded() {
        let mut ids = RecentIds::default();
        assert!(ids.first_time("a"));
        assert!(!ids.first_time("a"));
        for n in 0..MAX_REMEMBERED {
            assert!(ids.first_time(&n.to_string()));
        }
        assert!(ids.set.len() <= MAX_REMEMBERED);
        assert!(ids.first_time("a"), "the oldest is forgotten");
    }

    #[test]
    fn only_requests_have_a_server_request_id() {
        let req = serde_json::json!({"jsonrpc":"2.0","id":"e-1","method":"ping"});
        assert_eq!(server_request_id(&req).as_deref(), Some("\"e-1\""));
        let reply = serde_json::json!({"jsonrpc":"2.0","id":1,"result":{}});
        assert_eq!(server_request_id(&reply), None);
        let note = serde_json::json!({"jsonrpc":"2.0","method":"notifications/x"});
        assert_eq!(server_request_id(&note), None);
    }
}
