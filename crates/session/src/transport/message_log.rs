//! `--log FILE`: every message a session or a proxy moves, both ways, as
//! JSON lines.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use serde_json::{json, Value};

use elicit_core::error::ElicitError;

/// Records every message, both ways, as JSON lines:
/// `{"dir":"send"|"recv","time":RFC 3339,"message":…}` (or `"raw"` for a
/// line that was not JSON). A recorded session can be replayed as fixtures.
#[derive(Clone)]
pub struct MessageLog {
    file: Arc<Mutex<File>>,
}

impl MessageLog {
    /// A log written to `path`.
    pub fn create(path: &Path) -> Result<Self, ElicitError> {
        let file = File::create(path)
            .map_err(|e| ElicitError::io(format!("cannot create log {}", path.display()), e))?;
        Ok(MessageLog {
            file: Arc::new(Mutex::new(file)),
        })
    }

    /// Writes one message (or a line that was not one) sent or received (`dir`: `send` or `recv`).
    pub fn record(&self, dir: &str, message: Result<&Value, &str>) {
        let time = humantime::format_rfc3339_millis(SystemTime::now()).to_string();
        let entry = match message {
            Ok(m) => json!({"dir": dir, "time": time, "message": m}),
            Err(raw) => json!({"dir": dir, "time": time, "raw": raw}),
        };
        self.write_entry(&entry);
    }

    /// Records a proxied line: `dir` is relative to the server (`send` /
    /// `recv`), `party` who wrote (`client`, `elicit`) or got it
    /// (`client`, `elicit`).
    pub fn record_party(&self, dir: &str, party: &str, message: Result<&Value, &str>) {
        let key = if dir == "send" { "by" } else { "to" };
        let time = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
        let entry = match message {
            Ok(m) => json!({"dir": dir, key: party, "time": time, "message": m}),
            Err(raw) => json!({"dir": dir, key: party, "time": time, "raw": raw}),
        };
        self.write_entry(&entry);
    }

    /// One `write` per entry: formatting a `Value` straight onto the file
    /// (`writeln!`) made a system call for every token, a few hundred per
    /// message, and let a reader of the growing log see half an entry.
    pub(crate) fn write_entry(&self, entry: &Value) {
        let mut line = entry.to_string().into_bytes();
        line.push(b'\n');
        if let Ok(mut f) = self.file.lock() {
            let _ = f.write_all(&line);
        }
    }
}
