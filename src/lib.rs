//! elicit: resolve MCP elicitations (`elicitation/create`) at a terminal,
//! on a local browser page, or from scripts, for one document or for live
//! servers.
//!
//! The folders follow the data's one-way trip:
//!
//! - [`elicitation`]: the pure stages (input shapes, protocol types, the
//!   suspension contract, the schema model, scripted answers, resolution,
//!   output), with no terminal, socket or signal code;
//! - [`text`]: what may reach a person (sanitising server text, URL checks);
//! - [`terminal`]: the person at a terminal (`TerminalResolver`);
//! - [`page`]: the person with a browser, on a local page (`BrowserResolver`);
//! - [`mcp`]: live sessions (the client, `call`, the proxies' relay core),
//!   over [`transport`] (stdio, Streamable HTTP, legacy SSE), with sign-in
//!   from [`auth`];
//! - [`lint`]: the spec's rules checked on an elicitation (`elicit lint`,
//!   and `--strict` through [`mcp::strict`]), on the schema model;
//! - [`error`]: the error kinds every stage returns.
//!
//! The binary (`src/bin/elicit/`) only parses flags and dispatches.

pub mod auth;
pub mod bounded;
pub mod cassette;
pub mod elicitation;
pub mod error;
pub mod lint;
pub mod mcp;
pub mod opener;
pub mod page;
pub mod platform;
pub mod signals;
pub mod terminal;
pub mod text;
pub mod transport;

pub use elicitation::answers::ScriptedAnswers;
pub use elicitation::contract::{answer_to_elicit_result, elicitation_to_request, Answer, Request};
pub use elicitation::protocol::{Action, ElicitResult, ElicitationParams, Mode};
pub use elicitation::schema::{FieldKind, FormField, FormSchema};
pub use elicitation::{json_kind, resolve_document, resolve_text, Resolved};
pub use error::{ElicitError, FieldError};

/// The Rust examples of the architecture guide, run as doc tests so they
/// stay true.
#[doc = include_str!("../docs/ARCHITECTURE.md")]
#[cfg(doctest)]
pub struct ArchitectureDoctests;
