//! Reading a schema object's keywords ([`SchemaObject::member`]): below
//! every file that reads a schema.

use serde_json::{Map, Value};

/// A keyword of a schema object, by name. Form schemas are many small
/// objects (a property holds a handful of keywords), and serde_json's
/// ordered map finds a key by hashing it with SipHash, about 200
/// instructions a lookup: comparing a few keys is several times cheaper,
/// and a form's parse makes a few hundred lookups. Larger objects are
/// looked up by hash as before.
pub(crate) trait SchemaObject {
    fn member(&self, key: &str) -> Option<&Value>;
}

impl SchemaObject for Map<String, Value> {
    fn member(&self, key: &str) -> Option<&Value> {
        if self.len() <= 8 {
            self.iter().find_map(|(k, v)| (k == key).then_some(v))
        } else {
            self.get(key)
        }
    }
}
