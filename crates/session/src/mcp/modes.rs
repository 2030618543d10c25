//! `--modes`: which elicitation modes elicit declares to a server, so an
//! author can see how the server behaves for a client that supports fewer.

use serde_json::{json, Map, Value};

/// The modes elicit declares (`--modes form|url|form,url|none`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElicitModes {
    /// Form mode is declared.
    pub form: bool,
    /// URL mode is declared.
    pub url: bool,
}

impl Default for ElicitModes {
    /// Both: the modes elicit really handles.
    fn default() -> Self {
        ElicitModes {
            form: true,
            url: true,
        }
    }
}

impl ElicitModes {
    /// No elicitation at all.
    pub const NONE: ElicitModes = ElicitModes {
        form: false,
        url: false,
    };

    /// Reads `form`, `url`, `form,url` (either order) or `none`.
    pub fn parse(text: &str) -> Result<ElicitModes, String> {
        if text.trim() == "none" {
            return Ok(ElicitModes::NONE);
        }
        let mut modes = ElicitModes::NONE;
        for part in text.split(',').map(str::trim) {
            match part {
                "form" => modes.form = true,
                "url" => modes.url = true,
                other => {
                    return Err(format!(
                        "unknown elicitation mode {other:?}: expected form, url, form,url or none"
                    ))
                }
            }
        }
        Ok(modes)
    }

    /// Whether any elicitation capability is declared.
    pub fn any(self) -> bool {
        self.form || self.url
    }

    /// Whether an elicitation of `mode` (`None`: form) was declared.
    pub fn declares(self, mode: Option<&str>) -> bool {
        match mode {
            Some("url") => self.url,
            _ => self.form,
        }
    }

    /// The `capabilities.elicitation` object, `None` for `none`. Form
    /// alone is still spelled out (`{"form": {}}`), which every revision
    /// from 2025-11-25 reads as form only, as it reads `{}`.
    pub fn capability(self) -> Option<Value> {
        if !self.any() {
            return None;
        }
        let mut e = Map::new();
        if self.form {
            e.insert("form".into(), json!({}));
        }
        if self.url {
            e.insert("url".into(), json!({}));
        }
        Some(Value::Object(e))
    }

    /// In words, for messages: `form`, `url`, `form,url`, `none`.
    pub fn describe(self) -> &'static str {
        match (self.form, self.url) {
            (true, true) => "form,url",
            (true, false) => "form",
            (false, true) => "url",
            (false, false) => "none",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_declare() {
        assert_eq!(
            ElicitModes::parse("form,url").unwrap(),
            ElicitModes::default()
        );
        assert_eq!(
            ElicitModes::parse("url, form").unwrap(),
            ElicitModes::default()
        );
        assert_eq!(ElicitModes::parse("none").unwrap(), ElicitModes::NONE);
        let form = ElicitModes::parse("form").unwrap();
        assert!(form.declares(None) && form.declares(Some("form")) && !form.declares(Some("url")));
        assert_eq!(form.capability(), Some(json!({"form": {}})));
        assert_eq!(ElicitModes::NONE.capability(), None);
        assert!(ElicitModes::parse("popup").is_err());
        assert!(ElicitModes::parse("").is_err());
    }
}
