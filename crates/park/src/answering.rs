//! A person answers parked calls (`respond --ui`, `pending --ui browser`):
//! each parked question read back as an elicitation, resolved by the
//! person the binary picks, and sent to its holder as `respond` sends
//! answers (the holder checks it against the form again). A call that
//! parks again is asked again; a question whose call expires first is
//! left unanswered.

use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use elicit_core::elicitation::answers::ScriptedAnswers;
use elicit_core::elicitation::protocol::{Action, ElicitResult, ElicitationParams};
use elicit_core::elicitation::resolve::{self, Elicitation, Resolver, SchemaCache};

use crate::client::{self, Outcome, Parked};
use crate::ParkError;

/// The parked question of a parked object (what `call --park` printed),
/// as an elicitation to resolve.
pub fn question(parked: &Value) -> Result<Elicitation, ParkError> {
    let request = &parked["elicitation"];
    let prompt = request["prompt"].as_str().unwrap_or_default();
    let params = match (request["kind"].as_str(), request["url"].as_str()) {
        (Some("authorization"), Some(url)) => ElicitationParams::url(prompt, url),
        _ => ElicitationParams::form(prompt, request["data"]["schema"].clone()),
    };
    let mut e = Elicitation::prepare(params, &mut SchemaCache::single_use())
        .map_err(|e| ParkError::failed(format!("the parked question cannot be read: {e}")))?;
    e.server = parked["server"].as_str().map(str::to_string);
    e.tool = parked["tool"].as_str().map(str::to_string);
    Ok(e)
}

/// When the parked question expires, as an instant of this process's
/// clock (now, if the object says nothing readable).
pub fn expiry(parked: &Value) -> Instant {
    let left = parked["expires"]
        .as_str()
        .and_then(|text| humantime::parse_rfc3339_weak(text).ok())
        .and_then(|at| at.duration_since(SystemTime::now()).ok())
        .unwrap_or(Duration::ZERO);
    Instant::now() + left
}

/// What became of one call a person was asked to answer.
#[derive(Debug)]
pub enum Ended {
    /// The call ended after the answers: what `elicit call` would have
    /// printed, and its status.
    Finished {
        /// Standard output.
        stdout: String,
        /// Standard error.
        stderr: String,
        /// The exit status.
        exit: i32,
    },
    /// Nobody answered before the question expired (nothing was sent).
    Expired,
    /// The answer could not be given (the call was gone, answered
    /// elsewhere, or the person could not be asked).
    Failed(ParkError),
}

/// One call a person was asked to answer: its id, what it was (the last
/// parked object) and what became of it.
#[derive(Debug)]
pub struct Answered {
    /// The call's id.
    pub id: String,
    /// The last parked object of the call.
    pub parked: Value,
    /// What became of it.
    pub ended: Ended,
}

/// Makes the resolver for a question that stops waiting at the given
/// instant (the call's expiry).
pub type PersonFor<'a> = dyn Fn(Instant) -> Box<dyn Resolver + Send> + Sync + 'a;

/// Asks the person about every call at once (each on a thread of its own:
/// `person` must show several questions together, as the page does), and
/// sends each answer to its holder; a call that parks again is asked
/// again. Returns what became of each, in the order given.
pub fn answer_all(calls: Vec<Parked>, person: &PersonFor<'_>) -> Vec<Answered> {
    std::thread::scope(|scope| {
        let asking: Vec<_> = calls
            .into_iter()
            .filter_map(|call| Some((call.id, call.parked?)))
            .map(|(id, parked)| scope.spawn(move || answer_one(id, parked, person)))
            .collect();
        asking
            .into_iter()
            .filter_map(|thread| thread.join().ok())
            .collect()
    })
}

/// Asks about call `id` until it ends, expires or fails.
fn answer_one(id: String, mut parked: Value, person: &PersonFor<'_>) -> Answered {
    loop {
        let step = ask_and_send(&id, &parked, person);
        match step {
            Ok(Outcome::Parked { parked: next, .. }) => parked = next,
            Ok(Outcome::Finished {
                stdout,
                stderr,
                exit,
            }) => {
                let ended = Ended::Finished {
                    stdout,
                    stderr,
                    exit,
                };
                return Answered { id, parked, ended };
            }
            Err(Unsent::Expired) => {
                let ended = Ended::Expired;
                return Answered { id, parked, ended };
            }
            Err(Unsent::Failed(e)) => {
                let ended = Ended::Failed(e);
                return Answered { id, parked, ended };
            }
        }
    }
}

/// Why nothing came back from one question.
enum Unsent {
    Expired,
    Failed(ParkError),
}

/// Resolves the parked question and sends the answer.
fn ask_and_send(id: &str, parked: &Value, person: &PersonFor<'_>) -> Result<Outcome, Unsent> {
    let elicitation = question(parked).map_err(Unsent::Failed)?;
    let deadline = expiry(parked);
    let mut resolver = person(deadline);
    match ask(&elicitation, deadline, &mut resolver) {
        Ok(Some(result)) => {
            client::respond(id, vec![result.to_value().to_string()]).map_err(Unsent::Failed)
        }
        Ok(None) => Err(Unsent::Expired),
        Err(e) => Err(Unsent::Failed(e)),
    }
}

/// The person's answer to a parked question, as the ElicitResult to send;
/// `None` when the question expired first (`person` gives a cancel at
/// `deadline`), so that nothing is sent for it.
pub fn ask(
    elicitation: &Elicitation,
    deadline: Instant,
    person: &mut dyn Resolver,
) -> Result<Option<ElicitResult>, ParkError> {
    let result =
        resolve::resolve(elicitation, &ScriptedAnswers::default(), true, person).map_err(|e| {
            ParkError {
                message: e.to_string(),
                exit: e.exit_code(),
            }
        })?;
    if result.action == Action::Cancel && Instant::now() >= deadline {
        return Ok(None);
    }
    Ok(Some(result))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_parked_object_reads_back_as_its_question_and_expiry() {
        let expires = SystemTime::now() + Duration::from_secs(120);
        let parked = json!({
            "parked": "0123456789ab",
            "server": "s", "tool": "t",
            "expires": humantime::format_rfc3339_seconds(expires).to_string(),
            "elicitation": {"kind": "input", "prompt": "Who?",
                "data": {"schema": {"type": "object", "properties": {"name": {"type": "string"}}}}}
        });
        let e = question(&parked).unwrap();
        assert_eq!(e.params.message, "Who?");
        assert_eq!(e.tool.as_deref(), Some("t"));
        assert_eq!(e.form.as_ref().unwrap().fields[0].name, "name");
        let left = expiry(&parked).saturating_duration_since(Instant::now());
        assert!(left > Duration::from_secs(100) && left <= Duration::from_secs(120));
        assert!(expiry(&json!({})) <= Instant::now());
    }
}
