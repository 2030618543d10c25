//! The rule table: every rule `elicit lint` and `--strict` report, with its
//! severity, the spec text it comes from, and an example that triggers it
//! and its fix. `docs/lint-rules.md` and `--explain` are generated from
//! this table; the examples are the fixtures `tests/it/lint.rs` checks.

use serde::Serialize;

use super::Revision;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing breaks.
    Info,
    /// A SHOULD of the spec, a deprecation, or something clients are known
    /// to mishandle.
    Warning,
    /// Breaks a MUST of the revision.
    Error,
}

impl Severity {
    /// The severity as shown and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Where a rule's requirement is written in the spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The restricted schema of a form.
    Schema,
    /// Client capabilities.
    Capabilities,
    /// The params every elicitation has (`mode`, `message`).
    Requests,
    /// Form mode requests.
    FormRequests,
    /// URL mode requests.
    UrlRequests,
    /// URL elicitation completion.
    Completion,
    /// The URL elicitation required error.
    UrlRequiredError,
    /// Safe URL handling.
    SafeUrl,
    /// Form mode security.
    FormSecurity,
    /// The trust & safety box at the top of the page.
    UserInteraction,
    /// Error handling.
    ErrorHandling,
    /// `InputRequiredResult` (2026-07-28 multi round-trip requests).
    InputRequired,
    /// The members every result has (`resultType`, and a cacheable
    /// result's `ttlMs` and `cacheScope` in 2026-07-28).
    Results,
}

impl Section {
    /// The section's heading in `revision`'s spec page.
    pub fn title(self, revision: Revision) -> &'static str {
        let old = revision == Revision::V2025_06_18;
        match self {
            Section::Schema if old => "Request Schema",
            Section::Schema => "Requested Schema",
            Section::Capabilities => "Capabilities",
            Section::Requests | Section::FormRequests if old => "Creating Elicitation Requests",
            Section::Requests => "Elicitation Requests",
            Section::FormRequests => "Form Mode Elicitation Requests",
            Section::UrlRequests => "URL Mode Elicitation Requests",
            Section::Completion => "Completion Notifications for URL Mode Elicitation",
            Section::UrlRequiredError => "URL Elicitation Required Error",
            // 2025-06-18 has its "MUST NOT request sensitive information"
            // and its URL rules (none) under one heading.
            Section::SafeUrl | Section::FormSecurity | Section::UserInteraction if old => {
                "Security Considerations"
            }
            Section::SafeUrl => "Safe URL Handling",
            Section::FormSecurity => "Form Mode Security",
            Section::UserInteraction => "User Interaction Model",
            Section::ErrorHandling => "Error Handling",
            Section::InputRequired => "InputRequiredResult",
            Section::Results => "General fields",
        }
    }

    /// The spec page, relative to the revision's root.
    pub fn page(self) -> &'static str {
        match self {
            Section::InputRequired => "basic/patterns/mrtr",
            Section::Results => "basic/index",
            _ => "client/elicitation",
        }
    }

    /// The section's address on modelcontextprotocol.io.
    pub fn url(self, revision: Revision) -> String {
        let anchor: String = self
            .title(revision)
            .to_lowercase()
            .chars()
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        format!(
            "https://modelcontextprotocol.io/specification/{}/{}#{anchor}",
            revision.as_str(),
            self.page()
        )
    }
}

/// What a rule looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One elicitation (or the document carrying it): `elicit lint` and
    /// `--strict` both check it.
    Document,
    /// A live session only (`--strict`): what the server did over time.
    Session,
}

/// One rule.
#[derive(Debug)]
pub struct Rule {
    /// Kebab-case and stable: scripts and `--allow` name rules by it.
    pub id: &'static str,
    /// How bad breaking it is.
    pub severity: Severity,
    /// What it looks at.
    pub scope: Scope,
    /// The first revision the rule applies to.
    pub since: Revision,
    /// The first revision it no longer applies to.
    pub until: Option<Revision>,
    /// The spec section it comes from.
    pub section: Section,
    /// What it checks, in one line.
    pub checks: &'static str,
    /// Why: the spec's words, or the client behaviour it prevents.
    pub why: &'static str,
    /// A document that triggers it (a fixture of `tests/it/lint.rs`), or for
    /// a session rule, what the server does.
    pub example: &'static str,
    /// The example fixed.
    pub fix: &'static str,
    /// The `--protocol` the example is linted with, when the revision it
    /// shows is not the one the rule is about.
    pub protocol: Option<Revision>,
}

impl Rule {
    /// Whether the rule holds in `revision`.
    pub fn applies_to(&self, revision: Revision) -> bool {
        revision >= self.since && self.until.is_none_or(|u| revision < u)
    }

    /// The newest revision the rule applies to.
    pub(crate) fn newest_revision(&self) -> Revision {
        Revision::ALL
            .into_iter()
            .rev()
            .find(|r| self.applies_to(*r))
            .unwrap_or(self.since)
    }

    /// The revisions the rule applies to, in words.
    pub fn revisions(&self) -> String {
        let all: Vec<&str> = Revision::ALL
            .iter()
            .filter(|r| self.applies_to(**r))
            .map(|r| r.as_str())
            .collect();
        if all.len() == Revision::ALL.len() {
            "all".into()
        } else {
            all.join(", ")
        }
    }
}

macro_rules! fixture {
    ($id:literal) => {
        include_str!(concat!("../../lint-rules/", $id, ".json"))
    };
}

macro_rules! fixed {
    ($id:literal) => {
        include_str!(concat!("../../lint-rules/", $id, ".fix.json"))
    };
}

macro_rules! rule {
    ($id:literal, $sev:ident, $since:ident, $until:expr, $section:ident, $checks:literal, $why:literal) => {
        Rule {
            id: $id,
            severity: Severity::$sev,
            scope: Scope::Document,
            since: Revision::$since,
            until: $until,
            section: Section::$section,
            checks: $checks,
            why: $why,
            example: fixture!($id),
            fix: fixed!($id),
            protocol: None,
        }
    };
    ($id:literal, $sev:ident, $since:ident, $until:expr, $section:ident, $checks:literal, $why:literal, protocol = $p:ident) => {
        Rule {
            protocol: Some(Revision::$p),
            ..rule!($id, $sev, $since, $until, $section, $checks, $why)
        }
    };
}

const ALL_REVISIONS: Option<Revision> = None;
const BEFORE_2026: Option<Revision> = Some(Revision::V2026_07_28);
const ONLY_2025_06_18: Option<Revision> = Some(Revision::V2025_11_25);

/// Every rule, in the order the docs list them.
pub static RULES: &[Rule] = &[
    // The form's schema.
    rule!("form-nested-property", Error, V2025_06_18, ALL_REVISIONS, Schema,
        "A property of `requestedSchema` is an object, or an array of objects.",
        "\"Form mode elicitation schemas are limited to flat objects with primitive properties only\"; complex nested structures and arrays of objects are not supported. Typed clients (rmcp) refuse the whole request."),
    rule!("property-type-unsupported", Error, V2025_06_18, ALL_REVISIONS, Schema,
        "A property has no `type`, or one that is not string, number, integer, boolean or a multi-select array.",
        "\"The schema is restricted to these primitive types\": a client has no widget for anything else and may refuse the request."),
    rule!("property-schema-invalid", Error, V2025_06_18, ALL_REVISIONS, Schema,
        "A property schema is not valid JSON Schema (e.g. `\"minLength\": \"3\"`).",
        "The requested schema is a JSON Schema; a client that validates it, or compiles it to check answers, rejects the request."),
    rule!("format-unknown", Error, V2025_06_18, ALL_REVISIONS, Schema,
        "A string property has a `format` other than email, uri, date or date-time.",
        "\"Supported formats: email, uri, date, date-time\". The schema types `format` as exactly these four; rmcp refuses the whole request over any other."),
    rule!("pattern-unsupported", Warning, V2025_06_18, ALL_REVISIONS, Schema,
        "A string property has `pattern`.",
        "`pattern` is not part of the spec's StringSchema (it appeared only in an example); most clients ignore it, so the server must not rely on it being enforced."),
    rule!("bounds-inverted", Error, V2025_06_18, ALL_REVISIONS, Schema,
        "`minimum` is above `maximum`, `minLength` above `maxLength`, or `minItems` above `maxItems`.",
        "No value satisfies the property: a required field can never be answered, and clients that validate answers against the schema (as the spec says they SHOULD) reject every accept."),
    rule!("integer-bound-not-whole", Warning, V2025_06_18, ALL_REVISIONS, Schema,
        "An `integer` property has a fractional `minimum` or `maximum`.",
        "Typed clients read integer bounds as integers: rmcp fails to parse the request."),
    rule!("required-not-a-property", Error, V2025_06_18, ALL_REVISIONS, Schema,
        "`required` names a property that `properties` does not define.",
        "A client only asks for the properties it is given, so the response can never contain the required name and a validating server rejects every accept."),
    rule!("required-invalid", Error, V2025_06_18, ALL_REVISIONS, Schema,
        "`required` is not an array of strings.",
        "The schema defines `required` as a list of property names; clients drop or refuse anything else."),
    rule!("schema-type-not-object", Error, V2025_06_18, ALL_REVISIONS, Schema,
        "`requestedSchema` has no `\"type\": \"object\"`, or no `properties` object.",
        "The requested schema is an object schema with `type: \"object\"` and `properties` (both required)."),
    rule!("schema-keyword-unknown", Info, V2025_06_18, ALL_REVISIONS, Schema,
        "`requestedSchema` has a keyword besides `type`, `properties`, `required` (and `$schema` from 2025-11-25).",
        "The spec's schema has only these; clients ignore the rest (the Python SDK's `title` is harmless, but never shown)."),
    rule!("property-keyword-unknown", Info, V2025_06_18, ALL_REVISIONS, Schema,
        "A property has a keyword outside MCP's form subset (e.g. `examples`, `$ref`, `exclusiveMinimum`).",
        "\"Other advanced JSON Schema features are intentionally not supported\": clients ignore them, so what they say is neither shown nor enforced."),
    rule!("kind-not-in-revision", Error, V2025_06_18, ONLY_2025_06_18, Schema,
        "A multi-select (`type: \"array\"`) or titled single select (`oneOf`) in a 2025-06-18 request.",
        "2025-06-18 has only string, number, boolean and `enum` (with `enumNames`); the other enum kinds arrived in 2025-11-25, and older clients refuse or mis-render them."),
    // Enums.
    rule!("enum-names-deprecated", Warning, V2025_11_25, ALL_REVISIONS, Schema,
        "A single select uses the legacy `enumNames` for its labels.",
        "`enumNames` is not JSON Schema; from 2025-11-25 the legacy titled enum is deprecated (\"use TitledSingleSelectEnumSchema instead; will be removed\"). Use `oneOf` of `{const, title}`."),
    rule!("enum-names-length-mismatch", Error, V2025_06_18, ALL_REVISIONS, Schema,
        "`enumNames` does not have one label per `enum` value.",
        "Labels are matched to values by position; with a different count some choices are shown with the wrong label or none."),
    rule!("enum-option-invalid", Error, V2025_11_25, ALL_REVISIONS, Schema,
        "An entry of `oneOf` (single select) or `items.anyOf` (multi-select) is not `{\"const\": string, \"title\": string}`.",
        "The titled enum schemas require both `const` and `title` as strings on every option."),
    rule!("enum-empty", Error, V2025_06_18, ALL_REVISIONS, Schema,
        "A select offers no choices (`enum: []`, `oneOf: []`).",
        "Nothing can be picked: a required select can never be answered."),
    rule!("enum-duplicate-value", Warning, V2025_06_18, ALL_REVISIONS, Schema,
        "A select lists the same value twice.",
        "Two options send the same value, so the server cannot tell them apart; pickers that key options by value show one."),
    rule!("enum-shape-ambiguous", Warning, V2025_11_25, ALL_REVISIONS, Schema,
        "A property has both `enum` and `oneOf`.",
        "Untitled selects use `enum`, titled ones `oneOf`; with both, clients disagree on which list they show."),
    rule!("multiselect-items-oneof", Warning, V2025_11_25, ALL_REVISIONS, Schema,
        "A titled multi-select lists its options in `items.oneOf` instead of `items.anyOf`.",
        "TitledMultiSelectEnumSchema puts the options in `items.anyOf`; `oneOf` is accepted by some SDKs only."),
    rule!("multiselect-items-type", Error, V2025_11_25, ALL_REVISIONS, Schema,
        "An untitled multi-select's `items` lacks `\"type\": \"string\"`.",
        "UntitledMultiSelectEnumSchema requires `items: {type: \"string\", enum: [...]}`."),
    // Defaults.
    rule!("default-not-in-enum", Error, V2025_06_18, ALL_REVISIONS, Schema,
        "The `default` of a select (or an item of a multi-select's default) is not one of its values.",
        "An enum default must be one of the allowed values (SEP-1034): a client cannot pre-select it, and an accept that keeps it fails validation."),
    rule!("default-invalid", Error, V2025_06_18, ALL_REVISIONS, Schema,
        "A `default` that breaks its own property's type or constraints.",
        "Clients that support defaults SHOULD pre-populate fields with them; one that is not a valid answer is either dropped or sent and rejected."),
    rule!("default-not-in-revision", Warning, V2025_06_18, ONLY_2025_06_18, Schema,
        "A `default` on a string, number or enum property in a 2025-06-18 request.",
        "2025-06-18 defines `default` on booleans only (the others came with 2025-11-25): older clients ignore it."),
    // Secrets and URLs in forms.
    rule!("form-requests-secret", Warning, V2025_06_18, ALL_REVISIONS, UserInteraction,
        "A form field whose name, title or format looks like a secret (password, API key, token, PIN, card number). A heuristic: a description that merely mentions a PIN is not a secret field.",
        "\"Servers MUST NOT use form mode elicitation to request sensitive information such as passwords, API keys, access tokens, or payment credentials\"; from 2025-11-25 such input MUST go through URL mode."),
    rule!("form-contains-url", Warning, V2025_11_25, ALL_REVISIONS, SafeUrl,
        "A form-mode request has a link in its message or in a field's title or description.",
        "Servers \"SHOULD NOT include URLs intended to be clickable in any field of a form mode elicitation request\": use URL mode, which gets a consent step."),
    // The params.
    rule!("message-missing", Error, V2025_06_18, ALL_REVISIONS, Requests,
        "The request has no `message` (or it is not a string).",
        "\"All elicitation requests MUST include\" a `message`: a human-readable explanation of why the interaction is needed."),
    rule!("message-empty", Warning, V2025_06_18, ALL_REVISIONS, Requests,
        "`message` is empty or only whitespace.",
        "The person is asked without being told why; clients SHOULD make clear what is requested and why."),
    rule!("params-invalid", Error, V2025_06_18, ALL_REVISIONS, Requests,
        "Params elicit cannot read at all: an unknown `mode`, a form without `requestedSchema`, a URL request without `url`, a field of the wrong JSON type.",
        "The request breaks the params' schema; a client answers -32602 (Invalid params)."),
    rule!("params-mode-mismatch", Warning, V2025_11_25, ALL_REVISIONS, Requests,
        "A form request carries `url` or `elicitationId`, or a URL request carries `requestedSchema`.",
        "Form and URL params are different shapes; a client reads the mode and ignores the other's fields, which then do nothing."),
    rule!("params-unknown-key", Info, V2025_06_18, ALL_REVISIONS, Requests,
        "The params have a member the spec does not define.",
        "Clients ignore it."),
    rule!("mode-not-in-revision", Error, V2025_06_18, ONLY_2025_06_18, Requests,
        "A URL-mode request in 2025-06-18.",
        "URL mode was introduced in 2025-11-25; a 2025-06-18 client treats every request as a form and finds no schema."),
    rule!("field-not-in-revision", Warning, V2025_06_18, ALL_REVISIONS, Requests,
        "A param the revision does not have: `mode`, `elicitationId` or `task` in 2025-06-18; `elicitationId`, `task` or `_meta` in 2026-07-28.",
        "A client of that revision ignores it (2026-07-28 removed `elicitationId`: the server links a URL elicitation to its retry through `requestState`)."),
    rule!("url-missing-elicitation-id", Error, V2025_11_25, BEFORE_2026, UrlRequests,
        "A URL-mode request without `elicitationId` (or with an empty one).",
        "URL mode elicitation requests MUST include `elicitationId` in 2025-11-25: completion notifications and -32042 errors refer to it."),
    rule!("url-not-https", Warning, V2025_11_25, ALL_REVISIONS, SafeUrl,
        "A URL-mode request's `url` is plain http to a host that is not this machine.",
        "Servers \"SHOULD use HTTPS URLs for non-development environments\"; clients warn about http."),
    rule!("url-scheme-forbidden", Error, V2025_11_25, ALL_REVISIONS, SafeUrl,
        "A URL-mode request's `url` is not http or https (`javascript:`, `file:`, `data:` …).",
        "The URL is opened in a browser on the user's consent; clients must handle URLs so users cannot unknowingly follow malicious links, and elicit (like other careful clients) never opens other schemes."),
    rule!("url-invalid", Error, V2025_11_25, ALL_REVISIONS, UrlRequests,
        "A URL-mode request's `url` is not a valid absolute URL, or holds spaces, control or invisible characters.",
        "\"The `url` parameter MUST contain a valid URL.\""),
    rule!("url-has-userinfo", Warning, V2025_11_25, ALL_REVISIONS, SafeUrl,
        "A URL-mode request's `url` has `user@` (or `user:password@`) before the host.",
        "Servers MUST NOT put credentials in the URL nor send pre-authenticated URLs; `https://bank.example@evil.example/` is also the classic way to disguise a host."),
    // The document carrying the elicitations.
    rule!("shape-not-in-revision", Error, V2025_06_18, ALL_REVISIONS, Requests,
        "The elicitation travels in a shape the revision does not have: a server-to-client JSON-RPC request in 2026-07-28, an `input_required` result before it, a -32042 error outside 2025-11-25.",
        "2026-07-28 removed server-to-client requests and -32042: elicitations ride in `InputRequiredResult`, which the earlier revisions do not have.",
        protocol = V2026_07_28),
    rule!("url-required-entry-not-url", Error, V2025_11_25, BEFORE_2026, UrlRequiredError,
        "An entry of a -32042 error's `data.elicitations` is not a URL-mode elicitation.",
        "\"Any elicitations returned in the error MUST be URL mode elicitations and have an `elicitationId` property.\""),
    rule!("result-type-missing", Error, V2026_07_28, ALL_REVISIONS, InputRequired,
        "A result with `inputRequests` but no `\"resultType\": \"input_required\"`.",
        "Servers MUST include `resultType` so the client knows the result asks for input rather than completes the request."),
    rule!("input-required-empty", Error, V2026_07_28, ALL_REVISIONS, InputRequired,
        "An `input_required` result with neither `inputRequests` nor `requestState`.",
        "\"Servers MUST include at least one of `inputRequests` or `requestState` in every `InputRequiredResult` response.\""),
    rule!("request-state-not-string", Error, V2026_07_28, ALL_REVISIONS, InputRequired,
        "`requestState` is not a string.",
        "`requestState` is \"an opaque string meaningful only to the server\"; clients that type it as a string fail to echo anything else."),
    rule!("request-state-too-large", Warning, V2026_07_28, ALL_REVISIONS, InputRequired,
        "`requestState` is longer than 16 KiB.",
        "The client echoes `requestState` on every retry of the request; large state slows each round trip and runs into the request-size limits of HTTP stacks and proxies. Keep state server-side and send a reference."),
    // Sessions (`--strict`).
    Rule {
        id: "session-mode-undeclared",
        severity: Severity::Error,
        scope: Scope::Session,
        since: Revision::V2025_11_25,
        until: None,
        section: Section::Capabilities,
        checks: "The server sent an elicitation of a mode the client did not declare (see `--modes`).",
        why: "\"Servers MUST NOT send elicitation requests with modes that are not supported by the client.\" The client answers -32602.",
        example: "elicit declares `{\"elicitation\": {\"form\": {}}}` (`--modes form`) and the server sends `{\"mode\": \"url\", …}`.",
        protocol: None,
        fix: "Check the client's declared modes before eliciting; fall back (or return an error the user can act on) when URL mode is missing.",
    },
    Rule {
        id: "session-no-capability",
        severity: Severity::Error,
        scope: Scope::Session,
        since: Revision::V2025_06_18,
        until: None,
        section: Section::Capabilities,
        checks: "The server sent an elicitation although the client declared no `elicitation` capability (`--modes none`).",
        why: "Only clients that declare the capability support elicitation; in 2026-07-28 the server MUST NOT put an elicitation in `inputRequests` unless the client declared it.",
        example: "elicit declares no `elicitation` (`--modes none`) and the server sends `elicitation/create`.",
        protocol: None,
        fix: "Check `capabilities.elicitation` (per request in 2026-07-28) and return a tool error, or -32021 in 2026-07-28.",
    },
    Rule {
        id: "session-url-completion-missing",
        // The spec lets servers leave it out (a MAY): worth knowing, no fault.
        severity: Severity::Info,
        scope: Scope::Session,
        since: Revision::V2025_11_25,
        until: Some(Revision::V2026_07_28),
        section: Section::Completion,
        checks: "A URL elicitation was accepted, but no `notifications/elicitation/complete` with its `elicitationId` came before the session ended.",
        why: "Servers MAY send it, and clients use it to retry or update their UI; without it the person is left to guess when the out-of-band step is done.",
        example: "The server sends a URL elicitation with `elicitationId: \"e-1\"`, elicit answers accept, and the tool result arrives with no completion notification.",
        protocol: None,
        fix: "Send `{\"method\": \"notifications/elicitation/complete\", \"params\": {\"elicitationId\": \"e-1\"}}` when the out-of-band interaction finishes.",
    },
    Rule {
        id: "session-question-changed",
        severity: Severity::Warning,
        scope: Scope::Session,
        since: Revision::V2026_07_28,
        until: None,
        section: Section::InputRequired,
        checks: "A retry of an `input_required` request was answered with the same `inputRequests` key asking a different question.",
        why: "The retry carries the answers to the previous round's keys; a key whose question changed each round cannot be settled, and the client loops.",
        example: "Round 1 asks `inputRequests.profile` for `{name}`, round 2 asks `inputRequests.profile` for `{name, age}`.",
        protocol: None,
        fix: "Give each question its own key, or accept the answer to the question that was asked.",
    },
    Rule {
        id: "session-result-incomplete",
        severity: Severity::Error,
        scope: Scope::Session,
        since: Revision::V2026_07_28,
        until: None,
        section: Section::Results,
        checks: "A result lacks what its revision requires of every result: `resultType` on each, and `ttlMs` (an integer of at least 0) and `cacheScope` (`private` or `public`) on a cacheable one (`server/discover`, `tools/list` and the other lists, `resources/read`).",
        why: "Servers MUST include `resultType`, and 2026-07-28's cacheable results require their caching hints (SEP-2549); the Python SDK's client rejects a `tools/list` result without them, so it can neither list nor call the server's tools.",
        example: "elicit sends `tools/list` with `_meta` naming 2026-07-28 and the server answers `{\"resultType\": \"complete\", \"tools\": […]}`.",
        protocol: None,
        fix: "Answer `{\"resultType\": \"complete\", \"ttlMs\": 0, \"cacheScope\": \"private\", \"tools\": […]}` (a longer `ttlMs`, or `public`, when the list is the same for every caller).",
    },
    Rule {
        id: "session-concurrent-elicitations",
        severity: Severity::Warning,
        scope: Scope::Session,
        since: Revision::V2025_06_18,
        until: Some(Revision::V2026_07_28),
        section: Section::Requests,
        checks: "The server sent an elicitation while another one it had sent was still unanswered.",
        why: "A client shows one elicitation at a time (there is one person); 2026-07-28 carries several in one `InputRequiredResult` instead, which is the only revision with a way to ask several at once.",
        example: "The server sends `elicitation/create` id 1 and, before the reply, id 2.",
        protocol: None,
        fix: "Await each elicitation's result before sending the next, or ask for everything in one form.",
    },
];

/// The rule called `id`.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}
