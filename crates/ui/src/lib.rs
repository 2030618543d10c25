//! elicit's resolvers for people: the form and URL consent at a terminal
//! ([`terminal::TerminalResolver`]) and the local browser page
//! ([`page::BrowserResolver`]). Both implement
//! [`elicit_core::elicitation::resolve::Resolver`].
#![warn(missing_docs)]

pub mod page;
pub mod terminal;
