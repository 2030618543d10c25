//! elicit: resolve MCP elicitations (`elicitation/create`) at a terminal,
//! on a local browser page, or from scripts, for one document or for live
//! servers.
//!
//! This library gathers the workspace's crates under the module paths the
//! binary and users know; each crate is usable alone. They follow the data's
//! one-way trip, and a backwards import does not compile:
//!
//! - `elicit-core` ([`elicitation`], [`text`], [`lint`], [`error`],
//!   [`bounded`], [`duration`]): the pure stages (input shapes, protocol
//!   types, the suspension contract, the schema model, scripted answers,
//!   resolution, output), what may reach a person, the spec's rules, the
//!   error kinds, durations as people type them;
//! - `elicit-ui` ([`terminal`], [`page`], [`person`]): the person at a
//!   terminal (`TerminalResolver`) and with a browser (`BrowserResolver`),
//!   and which of them answers;
//! - `elicit-session` ([`mcp`], [`transport`], [`auth`]): talking to one
//!   server (the client session, the tool call) over stdio, Streamable HTTP
//!   and legacy SSE, with sign-in;
//! - `elicit-relay` ([`mcp::relay`], [`mcp::proxy`]): `elicit proxy`, above
//!   the session;
//! - `elicit-cassette` ([`cassette`], [`answers`]): the test workflow
//!   (recorded flows, replay, diff, explore, the mock server, the suite
//!   runner) and answer files, above the session, apart from the relay;
//! - `elicit-platform` ([`platform`], [`signals`], [`opener`]): the one
//!   seam to the operating system.
//!
//! This library is the package `elicit-lib` (a dependency on it is still
//! `use elicit::…`); the command is the package `elicit-mcp`, whose binary
//! (`src/bin/elicit/`) only parses flags and dispatches: clap stays there,
//! out of this library.
#![warn(missing_docs)]

pub use elicit_cassette::answers;
pub use elicit_core::{bounded, duration, elicitation, error, lint, text};
pub use elicit_park as park;
pub use elicit_platform as platform;
pub use elicit_platform::{handlers as signals, opener};
pub use elicit_session::{auth, transport};
pub use elicit_ui::{page, person, terminal};

pub use elicit_core::elicitation::answers::ScriptedAnswers;
pub use elicit_core::elicitation::contract::{
    answer_to_elicit_result, elicitation_to_request, Answer, Request,
};
pub use elicit_core::elicitation::protocol::{Action, ElicitResult, ElicitationParams, Mode};
pub use elicit_core::elicitation::schema::{FieldKind, FormField, FormSchema};
pub use elicit_core::elicitation::{json_kind, resolve_document, resolve_text, Resolved};
pub use elicit_core::error::{ElicitError, FieldError};

/// Live sessions (`elicit_session::mcp`), with the proxy (`elicit-relay`)
/// under its earlier paths `mcp::relay` and `mcp::proxy`.
pub mod mcp {
    pub use elicit_relay::proxy;
    pub use elicit_session::mcp::*;
    /// The relay core of `elicit proxy` (`elicit-relay`).
    pub mod relay {
        pub use elicit_relay::*;
    }
}

/// Cassettes (`elicit-cassette`), with the answer rules under their
/// earlier path `cassette::rules`.
pub mod cassette {
    pub use elicit_cassette::*;

    /// Answer files with rules, under their earlier path: the matching is
    /// [`crate::elicitation::answer_rules`], the reading [`crate::answers`].
    pub mod rules {
        pub use elicit_cassette::answers::*;
        pub use elicit_core::elicitation::answer_rules::*;
    }
}

/// The Rust examples of the architecture guide, run as doc tests so they
/// stay true.
// The guide is the repository's (docs/ARCHITECTURE.md), outside this package: only
// `cargo test --doc` in the repository reads it, never a build of the published crate.
#[doc = include_str!("../../../docs/ARCHITECTURE.md")]
#[cfg(doctest)]
pub struct ArchitectureDoctests;
