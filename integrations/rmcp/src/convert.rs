//! rmcp's elicitation types to elicit's and back, through their JSON: both
//! are the MCP wire shapes (`elicitation/create` params, `ElicitResult`).

use rmcp::model::{ElicitRequestParams, ElicitResult as RmcpResult};
use serde_json::Value;

use elicit_core::elicitation::protocol::{ElicitResult, ElicitationParams};

use crate::error::Error;

/// rmcp's `elicitation/create` params as elicit reads them.
///
/// Form mode keeps `message`, `requestedSchema` (as rmcp serialises its
/// typed schema) and `_meta`; URL mode keeps `message`, `url`,
/// `elicitationId` and `_meta`. rmcp writes an absent `elicitationId`
/// (protocol 2026-07-28 removed it) as `""`: that is dropped, as absent.
pub fn to_elicit_params(params: &ElicitRequestParams) -> Result<ElicitationParams, Error> {
    let mut value = serde_json::to_value(params).map_err(Error::Convert)?;
    if let Some(obj) = value.as_object_mut() {
        if obj.get("elicitationId").and_then(Value::as_str) == Some("") {
            obj.remove("elicitationId");
        }
        // An empty `_meta` says nothing; elicit would carry it along.
        if obj
            .get("_meta")
            .and_then(Value::as_object)
            .is_some_and(|m| m.is_empty())
        {
            obj.remove("_meta");
        }
    }
    ElicitationParams::from_owned(value).map_err(Error::Elicit)
}

/// elicit's result as rmcp's: `action`, `content` (only on a form
/// accept: elicit sends none for a URL accept, as the spec requires) and
/// `_meta` (the related task a result must echo).
pub fn to_rmcp_result(result: &ElicitResult) -> Result<RmcpResult, Error> {
    serde_json::from_value(result.to_value()).map_err(Error::Convert)
}

#[cfg(test)]
mod tests {
    use super::*;
    use elicit_core::elicitation::protocol::{Action, Mode};
    use serde_json::json;

    fn rmcp_params(v: Value) -> ElicitRequestParams {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_form_keeps_its_message_schema_and_meta() {
        let schema = json!({"type":"object","properties":{
            "name":{"type":"string","title":"Name","minLength":1},
            "age":{"type":"integer","minimum":0,"maximum":150},
            "color":{"type":"string","enum":["red","green"]},
            "ok":{"type":"boolean","default":true}},"required":["name"]});
        let p = rmcp_params(
            json!({"mode":"form","message":"Who?","requestedSchema":schema,
            "_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}}),
        );
        let e = to_elicit_params(&p).unwrap();
        assert_eq!(e.mode(), Mode::Form);
        assert_eq!(e.message, "Who?");
        let got = e.requested_schema.clone().unwrap();
        for field in ["name", "age", "color", "ok"] {
            assert!(got["properties"].get(field).is_some(), "{field}: {got}");
        }
        assert_eq!(got["properties"]["age"]["maximum"], json!(150));
        assert_eq!(got["required"], json!(["name"]));
        assert_eq!(
            e.related_task(),
            Some(&json!({"taskId":"t1"})),
            "the related task is kept so the result echoes it"
        );
        assert_eq!(e.url, None);
    }

    #[test]
    fn a_form_without_mode_is_a_form() {
        let p = rmcp_params(json!({"message":"Region?","requestedSchema":
            {"type":"object","properties":{"region":{"type":"string"}}}}));
        let e = to_elicit_params(&p).unwrap();
        assert_eq!(e.mode(), Mode::Form);
        assert_eq!(e.mode.as_deref(), Some("form"));
    }

    #[test]
    fn a_url_keeps_its_url_and_id_and_drops_an_empty_id() {
        let p = rmcp_params(
            json!({"mode":"url","message":"Sign in","url":"https://example.com/a?b=1",
            "elicitationId":"el-1"}),
        );
        let e = to_elicit_params(&p).unwrap();
        assert_eq!(e.mode(), Mode::Url);
        assert_eq!(e.url.as_deref(), Some("https://example.com/a?b=1"));
        assert_eq!(e.elicitation_id.as_deref(), Some("el-1"));
        assert_eq!(e.requested_schema, None);

        let p = rmcp_params(json!({"mode":"url","message":"Sign in","url":"https://example.com/"}));
        let e = to_elicit_params(&p).unwrap();
        assert_eq!(e.elicitation_id, None);
        assert_eq!(e.meta, None);
    }

    #[test]
    fn results_keep_action_content_and_meta() {
        let mut accept = ElicitResult::new(Action::Accept);
        accept.content = json!({"name":"Ada","age":36,"tags":["a","b"],"ok":false})
            .as_object()
            .cloned();
        let r = to_rmcp_result(&accept).unwrap();
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"action":"accept","content":{"name":"Ada","age":36,"tags":["a","b"],"ok":false}})
        );
        for (action, word) in [(Action::Decline, "decline"), (Action::Cancel, "cancel")] {
            let mut res = ElicitResult::new(action);
            res.meta = json!({"io.modelcontextprotocol/related-task":{"taskId":"t1"}})
                .as_object()
                .cloned();
            let r = to_rmcp_result(&res).unwrap();
            assert_eq!(
                serde_json::to_value(&r).unwrap(),
                json!({"action":word,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}})
            );
        }
        let url_accept = to_rmcp_result(&ElicitResult::new(Action::Accept)).unwrap();
        assert_eq!(url_accept.content, None);
    }
}
