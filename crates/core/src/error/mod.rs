//! elicit's typed errors. Each variant's message is written for the person
//! at the terminal: it names the field, line or value at fault and, where
//! there is one, what to do instead.

use std::fmt;

pub mod server;
pub mod sign_in;

pub use server::ServerError;
pub use sign_in::AuthError;

/// A problem with one form field's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field's name.
    pub field: String,
    /// What is wrong with its value.
    pub reason: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.reason)
    }
}

/// Everything that can go wrong between reading an elicitation and printing
/// its result.
#[derive(Debug, thiserror::Error)]
pub enum ElicitError {
    /// The input is not JSON. Line and column are 1-based, as editors count.
    #[error("invalid JSON at line {line}, column {column}: {message}")]
    Json {
        /// Line (1-based).
        line: usize,
        /// Column (1-based).
        column: usize,
        /// serde_json's message.
        message: String,
    },

    #[error("input is empty: expected an elicitation as JSON")]
    /// The input held nothing but white space.
    EmptyInput,

    #[error("input is not valid UTF-8 (first bad byte at offset {offset})")]
    /// The input is not UTF-8; `offset` is the first bad byte's.
    NotUtf8 {
        /// The offset of the first bad byte.
        offset: usize,
    },

    #[error("input is {size} bytes, over the limit of {limit} bytes")]
    /// The input is over the size limit.
    TooLarge {
        /// The size in bytes, as far as known.
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },

    /// Too large, read from a stream whose full size is unknown (a pipe):
    /// reading stopped at the limit.
    #[error("input is more than {limit} bytes, over the limit")]
    /// A stream grew over the size limit while being read.
    TooLargeStream {
        /// The limit in bytes.
        limit: u64,
    },

    /// JSON, but not any of the shapes elicit reads.
    #[error("{message}")]
    /// JSON of no shape elicit knows.
    UnknownShape {
        /// The message, as shown.
        message: String,
    },

    #[error("unknown elicitation mode {mode:?}: expected \"form\" or \"url\"")]
    /// A `mode` other than `form` or `url`.
    UnknownMode {
        /// The mode, as given.
        mode: String,
    },

    #[error("unsupported method {method:?}: elicit only resolves \"elicitation/create\"")]
    /// A JSON-RPC method other than `elicitation/create`.
    UnknownMethod {
        /// The request's method.
        method: String,
    },

    #[error("invalid elicitation params: {message}")]
    /// Params that do not make an elicitation.
    InvalidParams {
        /// The message, as shown.
        message: String,
    },

    /// An `--answer` that cannot be read at all.
    #[error("bad --answer {answer:?}: {reason}")]
    /// An `--answer` that cannot apply; the answer as given and why.
    BadAnswer {
        /// The answer, as given.
        answer: String,
        /// Why, in words.
        reason: String,
    },

    /// Answers that conflict with each other or with the request's mode.
    #[error("{0}")]
    Usage(String),

    /// Accepted content that does not satisfy the schema. Every failing field
    /// is listed, not just the first.
    #[error("{}", validation_message(.0))]
    Validation(Vec<FieldError>),

    /// Fields are left to ask and no terminal can ask them.
    #[error("{}", needs_answers_message(.fields, .detail.as_deref()))]
    NeedsAnswers {
        /// The fields left to ask.
        fields: Vec<String>,
        /// Why no terminal can ask them, if known.
        detail: Option<String>,
    },

    /// A URL elicitation with no scripted answer and no terminal.
    #[error(
        "a URL elicitation needs a person ({detail}); pass --answer accept, decline or cancel"
    )]
    NeedsUrlAnswer {
        /// What went wrong, as shown.
        detail: String,
    },

    #[error("terminal error: {0}")]
    /// The terminal failed (a prompt could not be drawn or read).
    Terminal(String),

    /// A live server misbehaved, refused, or could not be reached (or
    /// signed in to): exited, sent malformed JSON, never answered.
    #[error(transparent)]
    Server(ServerError),

    #[error("{context}: {source}")]
    /// An I/O failure, with what was being done.
    Io {
        /// What was being done, in words.
        context: String,
        #[source]
        /// The failure.
        source: std::io::Error,
    },
}

fn validation_message(errors: &[FieldError]) -> String {
    let mut s = String::from("the answers do not satisfy the requested schema:");
    for e in errors {
        s.push_str("\n  - ");
        s.push_str(&e.to_string());
    }
    s
}

/// How the page's resolver begins the detail of an error when it had no
/// terminal and no browser opened its page: the message then says "no
/// terminal" once and names the ways to the page as well.
pub const NO_BROWSER_DETAIL: &str = "no terminal, and no browser opened the page";

/// The ways to the page a desktop client's user has, for a hint.
const PAGE_FIXES: &str = "or show the page: --browser COMMAND (or ELICIT_BROWSER) opens it in that browser, --no-open prints its address on stderr to open by hand";

fn needs_answers_message(fields: &[String], detail: Option<&str>) -> String {
    let (why, page) = match detail {
        Some(d) if d.starts_with(NO_BROWSER_DETAIL) => (d.to_string(), format!("; {PAGE_FIXES}")),
        Some(d) => (format!("no terminal to ask on ({d})"), String::new()),
        None => ("no terminal to ask on".to_string(), String::new()),
    };
    if fields.is_empty() {
        return format!(
            "this form asks for approval only and there is {why}\nhint: answer it with --answer accept, decline or cancel{page}"
        );
    }
    format!(
        "{} left to answer and {why}: {}\nhint: give them with --answer NAME=VALUE (--answer accept takes the defaults) or answer rules with --answers FILE{page}; --no-input never asks",
        if fields.len() == 1 { "1 field is" } else { "fields are" },
        fields.join(", ")
    )
}

/// JSON-RPC error codes elicit sends back for a bad request (the wire's
/// constants, under the name callers know them by).
pub mod rpc_code {
    pub use crate::elicitation::protocol::wire::{
        INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR,
    };
}

impl ElicitError {
    /// The process exit status for this error: 2 for usage or invalid input,
    /// 1 for anything else (terminal or I/O trouble).
    pub fn exit_code(&self) -> i32 {
        match self {
            ElicitError::Terminal(_) | ElicitError::Io { .. } | ElicitError::Server(_) => 1,
            _ => 2,
        }
    }

    /// The JSON-RPC error code to send back to the server when the input was
    /// a JSON-RPC request, or `None` when the fault is ours (bad answers, no
    /// terminal), not the server's.
    ///
    /// An unsupported method gets `-32601` (method not found), as JSON-RPC
    /// requires; a bad mode or bad params get `-32602` (invalid params), as
    /// the MCP spec requires for an undeclared mode.
    pub fn rpc_code(&self) -> Option<i64> {
        match self {
            ElicitError::UnknownMode { .. } | ElicitError::InvalidParams { .. } => {
                Some(rpc_code::INVALID_PARAMS)
            }
            ElicitError::UnknownMethod { .. } => Some(rpc_code::METHOD_NOT_FOUND),
            _ => None,
        }
    }

    /// An [`ElicitError::Io`] with its context.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        ElicitError::Io {
            context: context.into(),
            source,
        }
    }
}
