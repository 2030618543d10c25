//! What a result must carry in each revision, beyond its method's own
//! members: 2026-07-28 adds `resultType` to every result and the caching
//! hints `ttlMs` and `cacheScope` to the cacheable ones (SEP-2549); the
//! handshake revisions have none of them. One table, read both ways:
//! [`complete_result`] fills in what a result elicit sends as a server
//! (`elicit mock`, the proxy's own replies) lacks, and [`missing_members`]
//! names what a server's result lacks (`--strict`).

use serde_json::{json, Map, Value};

use super::wire::{
    CACHEABLE, CACHE_SCOPE, CACHE_SCOPE_PRIVATE, RESULT_COMPLETE, RESULT_INPUT_REQUIRED,
    RESULT_TYPE, TTL_MS,
};
use super::Revision;

/// The members only 2026-07-28 results have.
const MODERN_ONLY: [&str; 3] = [RESULT_TYPE, TTL_MS, CACHE_SCOPE];

/// Whether `result` asks for input (`resultType: "input_required"`): such
/// a result is never cached, so it carries no caching hints.
fn asks_input(result: &Map<String, Value>) -> bool {
    result.get(RESULT_TYPE).and_then(Value::as_str) == Some(RESULT_INPUT_REQUIRED)
}

/// Whether `value` is what `member` must hold: a non-negative integer
/// `ttlMs`, a `cacheScope` of `private` or `public`, a string `resultType`.
fn valid(member: &str, value: &Value) -> bool {
    match member {
        TTL_MS => value.as_u64().is_some(),
        CACHE_SCOPE => matches!(value.as_str(), Some("private" | "public")),
        _ => value.is_string(),
    }
}

/// The envelope members a result of `method` must carry in `revision`.
pub fn required_members(method: &str, revision: Revision) -> &'static [&'static str] {
    if revision < Revision::V2026_07_28 {
        &[]
    } else if CACHEABLE.contains(&method) {
        &MODERN_ONLY
    } else {
        &MODERN_ONLY[..1]
    }
}

/// The members `result` (the `result` of a reply to `method`) lacks, or
/// holds with a value of the wrong kind, in `revision`; a result that is
/// not an object lacks them all.
pub fn missing_members(method: &str, revision: Revision, result: &Value) -> Vec<&'static str> {
    let empty = Map::new();
    let obj = result.as_object().unwrap_or(&empty);
    required_members(method, revision)
        .iter()
        .copied()
        .filter(|m| *m == RESULT_TYPE || !asks_input(obj))
        .filter(|m| !obj.get(*m).is_some_and(|v| valid(m, v)))
        .collect()
}

/// Makes `result` (the `result` of a reply to `method`) valid in
/// `revision` as far as the envelope goes: in 2026-07-28 a missing or
/// malformed `resultType` becomes `complete`, and a cacheable result gets
/// `ttlMs: 0` and `cacheScope: "private"` (nothing cached, nothing shared)
/// unless it says otherwise; in a handshake revision the 2026-07-28 members
/// (say, of a result recorded under 2026-07-28) are taken out.
pub fn complete_result(method: &str, revision: Revision, result: &mut Value) {
    let Some(obj) = result.as_object_mut() else {
        return;
    };
    if revision < Revision::V2026_07_28 {
        for m in MODERN_ONLY {
            obj.remove(m);
        }
        return;
    }
    for member in missing_members(method, revision, &Value::Object(obj.clone())) {
        let value = match member {
            TTL_MS => json!(0),
            CACHE_SCOPE => json!(CACHE_SCOPE_PRIVATE),
            _ => json!(RESULT_COMPLETE),
        };
        obj.insert(member.into(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elicitation::protocol::wire;

    #[test]
    fn a_2026_list_result_gets_its_type_and_caching_hints_and_keeps_its_own() {
        let mut r = json!({"tools": []});
        assert_eq!(
            missing_members(wire::TOOLS_LIST, Revision::V2026_07_28, &r),
            ["resultType", "ttlMs", "cacheScope"]
        );
        complete_result(wire::TOOLS_LIST, Revision::V2026_07_28, &mut r);
        assert_eq!(
            r,
            json!({"tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "private"})
        );
        let mut kept =
            json!({"tools": [], "resultType": "complete", "ttlMs": 60000, "cacheScope": "public"});
        let before = kept.clone();
        complete_result(wire::TOOLS_LIST, Revision::V2026_07_28, &mut kept);
        assert_eq!(kept, before);
        let bad =
            json!({"tools": [], "resultType": "complete", "ttlMs": -1, "cacheScope": "everyone"});
        assert_eq!(
            missing_members(wire::TOOLS_LIST, Revision::V2026_07_28, &bad),
            ["ttlMs", "cacheScope"]
        );
    }

    #[test]
    fn calls_get_only_a_type_and_input_required_results_no_hints() {
        let mut r = json!({"content": []});
        complete_result(wire::TOOLS_CALL, Revision::V2026_07_28, &mut r);
        assert_eq!(r, json!({"content": [], "resultType": "complete"}));
        let asking = json!({"resultType": "input_required", "requestState": "s"});
        assert!(missing_members(wire::RESOURCES_READ, Revision::V2026_07_28, &asking).is_empty());
    }

    #[test]
    fn a_handshake_revision_requires_nothing_and_loses_the_2026_members() {
        let mut r =
            json!({"tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "private"});
        assert!(missing_members(wire::TOOLS_LIST, Revision::V2025_11_25, &json!({})).is_empty());
        complete_result(wire::TOOLS_LIST, Revision::V2025_11_25, &mut r);
        assert_eq!(r, json!({"tools": []}));
    }
}
