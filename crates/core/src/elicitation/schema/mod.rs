//! The one form model: a `requestedSchema` parsed once, in the server's
//! property order, into [`FormField`]s. Prompting, coercion of scripted
//! answers and validation all read this model. A property schema inside
//! MCP's form subset is checked by the model itself (`native`, with the
//! `jsonschema` crate's rules, held to it by the property tests); any other
//! is compiled once by the `jsonschema` crate from the server's own property
//! schema. Both report through one `Violation` wording.
//!
//! Parsing is lenient on purpose: people use elicit to see what their server
//! sends, so an unknown `format`, `$schema`, extra keywords or a property
//! shape MCP does not allow never fail the whole request. An unsupported
//! shape becomes a [`FieldKind::Raw`] field answered with raw JSON.

mod check;
mod coerce;
mod edges;
mod form;
mod formats;
mod model;
mod native;
mod object;
#[cfg(test)]
mod oracle_tests;
mod parse;
mod words;

pub(crate) use coerce::exact_integer;
pub use edges::{slug_of, Edge};
pub use form::{FormSchema, MAX_FIELDS};
pub use model::{Choice, FieldKind, FormField, StringFormat};

#[cfg(test)]
mod tests {
    use super::check::same_in_draft7;
    use super::coerce::{exact_integer, NotInteger};

    #[test]
    fn only_schemas_that_mean_the_same_are_compiled_as_draft_7() {
        use serde_json::json;
        assert!(same_in_draft7(
            &json!({"type":"string","minLength":1,"format":"email"})
        ));
        assert!(same_in_draft7(
            &json!({"type":"array","items":{"anyOf":[{"const":"a","title":"A"}]},"maxItems":2})
        ));
        assert!(same_in_draft7(
            &json!({"type":"number","exclusiveMinimum":0})
        ));
        assert!(!same_in_draft7(&json!({"type":"string","format":"uuid"})));
        assert!(!same_in_draft7(&json!({"$ref":"#/$defs/x","maxLength":3})));
        assert!(!same_in_draft7(
            &json!({"type":"array","prefixItems":[{"type":"string"}]})
        ));
        assert!(!same_in_draft7(
            &json!({"type":"array","items":[{"type":"string"}]})
        ));
        assert!(!same_in_draft7(
            &json!({"type":"number","exclusiveMinimum":true})
        ));
    }

    #[test]
    fn exact_integer_decides_on_the_decimal_text() {
        let ok = |t: &str, want: &str| {
            assert_eq!(
                exact_integer(t).map(|n| n.to_string()),
                Ok(want.into()),
                "{t}"
            )
        };
        ok("0", "0");
        ok("-0", "0");
        ok("-0.0", "0");
        ok("0e-400", "0");
        ok("0.000e99999999999", "0");
        ok("2.0", "2");
        ok("1e2", "100");
        ok("1.5e1", "15");
        ok("150e-1", "15");
        ok("9007199254740993.0", "9007199254740993");
        ok("9007199254740993", "9007199254740993");
        ok("-9223372036854775808", "-9223372036854775808");
        ok("-9223372036854775808.000", "-9223372036854775808");
        ok("18446744073709551615", "18446744073709551615");
        ok("1.8446744073709551615e19", "18446744073709551615");
        ok("00012", "12");
        let not_whole = |t: &str| assert_eq!(exact_integer(t), Err(NotInteger::Fraction), "{t}");
        not_whole("0.99999999999999999999");
        not_whole("2.00000000000000001");
        not_whole("1e-400");
        not_whole("1e-99999999999999999999");
        not_whole("-0.5");
        not_whole("15e-1");
        not_whole("abc");
        not_whole("");
        not_whole("1e");
        let too_big = |t: &str| assert_eq!(exact_integer(t), Err(NotInteger::OutOfRange), "{t}");
        too_big("-9223372036854775809");
        too_big("18446744073709551616");
        too_big("1e20");
        too_big("1e400");
        too_big("1e99999999999999999999");
        too_big("-1e19");
        too_big("99999999999999999999");
    }
}
