//! The protocol revisions elicit knows, as one type.

use super::wire;

/// An MCP protocol revision elicit knows: the one type the lint rules,
/// the `--protocol` choice and cassettes name a revision by (the wire's
/// spelling is [`Revision::as_str`], from [`wire`](super::wire)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Revision {
    /// MCP 2025-06-18.
    V2025_06_18,
    /// MCP 2025-11-25.
    V2025_11_25,
    /// MCP 2026-07-28.
    V2026_07_28,
}

impl Revision {
    pub(crate) const ALL: [Revision; 3] = [
        Revision::V2025_06_18,
        Revision::V2025_11_25,
        Revision::V2026_07_28,
    ];
    pub(crate) const NEWEST: Revision = Revision::V2026_07_28;

    /// The revision's date, as on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Revision::V2025_06_18 => wire::V2025_06_18,
            Revision::V2025_11_25 => wire::V2025_11_25,
            Revision::V2026_07_28 => wire::V2026_07_28,
        }
    }

    /// Whether a client speaks this revision statelessly (`server/discover`,
    /// the revision and capabilities on every request) rather than over
    /// the `initialize` handshake the earlier revisions open a session with.
    pub fn is_stateless(self) -> bool {
        self == Revision::V2026_07_28
    }

    /// The revision a negotiated protocol version names, if elicit knows it.
    pub fn from_version(version: &str) -> Option<Revision> {
        Revision::ALL.into_iter().find(|r| r.as_str() == version)
    }
}

impl std::fmt::Display for Revision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
