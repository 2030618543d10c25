//! elicit's resolvers for people: the form and URL consent at a terminal
//! ([`terminal::TerminalResolver`]) and the local browser page
//! ([`page::BrowserResolver`]). Both implement
//! [`elicit_core::elicitation::resolve::Resolver`]. Which of them answers
//! is chosen once, for the command and for embedding clients alike
//! ([`person`]).
#![warn(missing_docs)]

pub mod page;
pub mod person;
pub mod terminal;
