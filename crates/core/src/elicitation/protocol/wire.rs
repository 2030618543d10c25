//! Every name and number of the MCP wire elicit relies on, in one place:
//! methods, `_meta` keys, protocol revisions, JSON-RPC error codes and the
//! size limit of a message. Code elsewhere names these constants, never the
//! bare strings or numbers, so that a revision's change is one edit here.
//!
//! elicit's own policy limits (rounds of `input_required`, stream resumes,
//! requests in flight) are not the wire's: they stay beside the code that
//! enforces them.
//!
//! This file imports nothing, so that every layer may use it, `error/`
//! included, without a cycle.

// Methods.

/// An elicitation request, in every revision.
pub const ELICITATION_METHOD: &str = "elicitation/create";
/// The handshake's first request (up to 2025-11-25).
pub const INITIALIZE: &str = "initialize";
/// The notification that ends the handshake.
pub const INITIALIZED: &str = "notifications/initialized";
/// 2026-07-28's request for what the server supports (no handshake).
pub const SERVER_DISCOVER: &str = "server/discover";
/// Lists a server's tools.
pub const TOOLS_LIST: &str = "tools/list";
/// Calls a tool.
pub const TOOLS_CALL: &str = "tools/call";
pub(crate) const PROMPTS_GET: &str = "prompts/get";
pub(crate) const RESOURCES_READ: &str = "resources/read";
/// Checks that the other side is alive.
pub const PING: &str = "ping";
/// A URL-mode elicitation's out-of-band completion (2025-11-25).
pub const ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";
/// A request's cancellation.
pub const CANCELLED: &str = "notifications/cancelled";
/// Progress on a request that gave a `progressToken` in its `_meta`.
pub const PROGRESS: &str = "notifications/progress";
/// The `_meta` member a request names its progress token in.
pub const PROGRESS_TOKEN: &str = "progressToken";
/// A task's status, as the server notifies it (2025-11-25 tasks).
pub const TASK_STATUS: &str = "notifications/tasks/status";
/// A task's final result, waited for (2025-11-25 tasks): the server delivers
/// the task's own requests (its elicitations) while this waits.
pub const TASKS_RESULT: &str = "tasks/result";
/// Asks a server to stop a task (2025-11-25 tasks).
pub const TASKS_CANCEL: &str = "tasks/cancel";
/// A task's current state, polled (the 2026-07-28 tasks extension): its
/// status, its questions while `input_required`, its result once done.
pub const TASKS_GET: &str = "tasks/get";
/// The answers to a task's questions (the 2026-07-28 tasks extension:
/// `taskId` and `inputResponses`).
pub const TASKS_UPDATE: &str = "tasks/update";
/// The 2026-07-28 tasks extension (SEP-2663), as named in `extensions` of
/// the client's and the server's capabilities.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Client requests that may come back `input_required` (2026-07-28).
pub const RETRYABLE: [&str; 3] = [TOOLS_CALL, PROMPTS_GET, RESOURCES_READ];

// Result envelopes.

/// The member every 2026-07-28 result carries, saying what it is.
pub const RESULT_TYPE: &str = "resultType";
/// `resultType` of a result that completes its request (2026-07-28).
pub const RESULT_COMPLETE: &str = "complete";
/// `resultType` of a result that asks for input first (2026-07-28).
pub const RESULT_INPUT_REQUIRED: &str = "input_required";
/// A cacheable result's freshness in milliseconds (2026-07-28, SEP-2549).
pub const TTL_MS: &str = "ttlMs";
/// A cacheable result's sharing scope (2026-07-28, SEP-2549).
pub const CACHE_SCOPE: &str = "cacheScope";
/// The `cacheScope` of a result that may be reused only by whoever asked.
pub const CACHE_SCOPE_PRIVATE: &str = "private";
/// The methods whose 2026-07-28 results are cacheable, so carry
/// [`TTL_MS`] and [`CACHE_SCOPE`]: `server/discover`, every list, and
/// `resources/read`.
pub const CACHEABLE: [&str; 6] = [
    SERVER_DISCOVER,
    TOOLS_LIST,
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    RESOURCES_READ,
];

// `_meta` keys.

/// What every `_meta` key of the protocol starts with.
pub const META_PREFIX: &str = "io.modelcontextprotocol/";
/// Per-request protocol version (2026-07-28).
pub const VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";
/// Per-request client capabilities (2026-07-28).
pub const CAPS_META: &str = "io.modelcontextprotocol/clientCapabilities";
/// Per-request client name and version (2026-07-28).
pub const CLIENT_INFO_META: &str = "io.modelcontextprotocol/clientInfo";
/// The server's name and version on a 2026-07-28 result.
pub const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";
/// Ties a message to a task (2025-11-25); echoed into the result.
pub(crate) const RELATED_TASK_META: &str = "io.modelcontextprotocol/related-task";

// Revisions.

/// The revision that added elicitation (forms only).
pub const V2025_06_18: &str = "2025-06-18";
/// The newest handshake revision.
pub const V2025_11_25: &str = "2025-11-25";
/// The stateless revision: no handshake, elicitations in `input_required`
/// results, the standard request headers over HTTP.
pub const V2026_07_28: &str = "2026-07-28";

// JSON-RPC error codes.

/// A message that is not JSON (`elicit mock` answers one with it).
pub const PARSE_ERROR: i64 = -32700;

/// JSON-RPC: the request is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: the method does not exist here.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: the params are not valid for the method.
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC: an error inside the receiver.
pub const INTERNAL_ERROR: i64 = -32603;
/// A request refused because too many already wait for the server (a
/// server error, JSON-RPC 2.0 §5.1; elicit's proxy sends it).
pub const TOO_MANY_IN_FLIGHT: i64 = -32000;
/// A request the server did not answer in time (the code the MCP SDKs use).
pub const REQUEST_TIMED_OUT: i64 = -32001;
/// `MissingRequiredClientCapabilityError` as a draft of 2026-07-28
/// numbered it; servers built on that draft still send it.
pub const DRAFT_MISSING_CAPABILITY: i64 = -32003;
/// `HeaderMismatchError` (2026-07-28): a request's headers do not match
/// its body.
pub const HEADER_MISMATCH: i64 = -32020;
/// `MissingRequiredClientCapabilityError` (2026-07-28).
pub const MISSING_CAPABILITY: i64 = -32021;
/// `UnsupportedProtocolVersionError` (2026-07-28).
pub const UNSUPPORTED_VERSION: i64 = -32022;
/// `URLElicitationRequiredError` (2025-11-25).
pub const URL_ELICITATION_REQUIRED: i64 = -32042;

// Size.

/// The most one message may take, on every channel (a document, a `--lines`
/// line, a line from a stdio server, an HTTP body, an SSE event): elicit
/// holds no more of a message than this.
pub const MAX_MESSAGE_BYTES: u64 = 64 * 1024 * 1024;
/// Most JSON values (and object keys) in one message or file elicit reads,
/// counted over its bytes before parsing: parsed, at most some 200 MiB.
pub const MAX_JSON_VALUES: usize = 500_000;
