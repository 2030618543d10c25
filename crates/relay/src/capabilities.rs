//! The capability rewrite: what the relay declares to the server on the
//! client's behalf, bounded by the revision the client asked for.

use serde_json::{json, Map, Value};

use super::Modes;
use elicit_core::elicitation::protocol::wire;
use elicit_session::mcp::modes::ElicitModes;

/// The modes elicit may declare to a server that the client asked to speak
/// `version` with: what that revision defines, no more. URL mode came
/// with 2025-11-25 and elicitation itself with 2025-06-18; a server that
/// agrees to an older revision must not be led to send what it has not.
/// An unknown (newer) version keeps every mode asked for.
pub(super) fn modes_in_revision(modes: ElicitModes, version: Option<&str>) -> ElicitModes {
    match version {
        Some(v) if v < wire::V2025_06_18 => ElicitModes {
            form: false,
            url: false,
        },
        Some(wire::V2025_06_18) => ElicitModes {
            form: modes.form,
            url: false,
        },
        _ => modes,
    }
}

/// The capability rewrite: adds the modes of `modes` (`--modes`) the
/// client lacks to `capabilities.elicitation` (`{}` means form only, so it
/// is spelled out when url is added). Returns the modes the client declared
/// itself and whether `caps` was changed (None when `caps` is not an
/// object).
pub(super) fn add_elicitation_modes(caps: &mut Value, modes: ElicitModes) -> Option<(Modes, bool)> {
    let caps = caps.as_object_mut()?;
    let declared = match caps.get("elicitation") {
        Some(Value::Object(e)) if e.is_empty() => Modes {
            form: true,
            url: false,
        },
        Some(Value::Object(e)) => Modes {
            form: e.contains_key("form"),
            url: e.contains_key("url"),
        },
        _ => Modes::default(),
    };
    if (declared.form || !modes.form) && (declared.url || !modes.url) {
        return Some((declared, false));
    }
    let mut e = match caps.get("elicitation") {
        Some(Value::Object(e)) => e.clone(),
        _ => Map::new(),
    };
    if declared.form || modes.form {
        e.entry("form").or_insert_with(|| json!({}));
    }
    if modes.url {
        e.entry("url").or_insert_with(|| json!({}));
    }
    caps.insert("elicitation".into(), Value::Object(e));
    Some((declared, true))
}
