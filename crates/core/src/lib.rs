//! elicit's elicitation stages, with no terminal, socket or signal code:
//! the input shapes an elicitation arrives in, the protocol types, the
//! suspension contract (Request / Answer), the schema model that drives
//! prompting, coercion, validation and lint, scripted answers and answer
//! rules, resolution and output ([`elicitation`]); what may reach a person ([`text`]); the
//! spec's rules ([`lint`]); the error kinds every stage returns ([`error`]);
//! bounded reads of untrusted input ([`bounded`]); and durations as people
//! type them ([`duration`]).
#![warn(missing_docs)]

pub mod bounded;
pub mod duration;
pub mod elicitation;
pub mod error;
pub mod lint;
pub mod text;
