//! What the session learns from the traffic (its id, the negotiated
//! version, the tools' headers): plain data, below every file that reads
//! or writes it.

use std::collections::HashMap;

/// Session facts learnt from the traffic.
#[derive(Default)]
pub(super) struct State {
    pub(super) session_id: Option<String>,
    /// The version the initialize result named (2025 era).
    pub(super) protocol_version: Option<String>,
    /// Tool name -> its `Mcp-Param-*` headers: (name part, property path).
    pub(super) tool_headers: HashMap<String, Vec<(String, Vec<String>)>>,
    /// The standalone GET stream was opened (once per session).
    pub(super) get_stream_opened: bool,
    /// Tools set aside for a bad `x-mcp-header` annotation: name -> why.
    pub(super) rejected: HashMap<String, String>,
    /// Requests whose replies teach something: id (JSON text) -> method.
    pub(super) watched: HashMap<String, String>,
    pub(super) closed: bool,
}
