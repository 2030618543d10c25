//! What can go wrong in the handler, and the JSON-RPC error each failure
//! is sent to the server as: in its own file, below the handler and the
//! conversions that return it.

use rmcp::model::ErrorData;

use elicit_core::error::ElicitError;

/// What can go wrong, setting up or answering an elicitation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An environment variable that does not parse.
    #[error("{var}={value:?}: {reason}")]
    Env {
        /// The variable.
        var: &'static str,
        /// Its value (lossy when not UTF-8).
        value: String,
        /// Why it does not parse.
        reason: String,
    },
    /// A scripted answer ([`crate::Options::answer`]) that does not parse.
    #[error("scripted answers: {0}")]
    Answers(#[source] ElicitError),
    /// The answer rules file cannot be read.
    #[error("answer rules {path}: {message}")]
    Rules {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it (with its JSON pointer).
        message: String,
    },
    /// The server asked in a mode the handler did not declare.
    #[error("elicitation mode {mode:?} not supported by this client (it declared {declared})")]
    UndeclaredMode {
        /// The mode asked.
        mode: &'static str,
        /// The modes declared (`form,url`, `form`, `url`, `none`).
        declared: &'static str,
    },
    /// rmcp's types and elicit's did not convert (a bug, if ever).
    #[error("converting between rmcp's and elicit's elicitation types: {0}")]
    Convert(#[source] serde_json::Error),
    /// elicit could not resolve the elicitation: invalid params, nobody
    /// to ask ([`ElicitError::NeedsAnswers`], [`ElicitError::NeedsUrlAnswer`]),
    /// answers that do not fit the form, a broken terminal.
    #[error(transparent)]
    Elicit(ElicitError),
    /// The resolver's thread ended without an answer.
    #[error("the resolver stopped without an answer: {0}")]
    Resolver(String),
    /// The server cancelled the request while a person was being asked.
    #[error("the server cancelled the elicitation")]
    Cancelled,
}

impl Error {
    /// The JSON-RPC error sent to the server for this failure: -32602
    /// (invalid params) for the server's mistakes (bad params, an unknown
    /// or undeclared mode), -32603 (internal error) for the rest.
    pub fn to_error_data(&self) -> ErrorData {
        let message = self.to_string();
        let server_fault = match self {
            Error::UndeclaredMode { .. } => true,
            Error::Elicit(e) => e.rpc_code().is_some(),
            _ => false,
        };
        if server_fault {
            ErrorData::invalid_params(message, None)
        } else {
            ErrorData::internal_error(message, None)
        }
    }

    /// Whether this says nobody may answer (no scripted answer, rule or
    /// person for what was asked).
    pub fn is_nobody_to_ask(&self) -> bool {
        matches!(
            self,
            Error::Elicit(ElicitError::NeedsAnswers { .. } | ElicitError::NeedsUrlAnswer { .. })
        )
    }
}

impl From<Error> for ErrorData {
    fn from(e: Error) -> ErrorData {
        e.to_error_data()
    }
}
