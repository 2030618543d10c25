//! The holder: the background process that keeps a parked call's session.
//! It listens on its private endpoint from the start, runs the call (the
//! caller's session, with a [`Holder`] as its person), and when a question
//! is left open it parks: tells whoever waits (the `call --park` that
//! started it, or the `respond` that answered last), then waits for an
//! answer that fits the form, or for the expiry, which cancels the
//! question and ends the call. Whatever the call prints goes to its own
//! files and is handed over when it parks or ends.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value};

use elicit_core::elicitation::answers::{FormPlan, ScriptedAnswers};
use elicit_core::elicitation::contract::{Answer, REASON_CANCELLED};
use elicit_core::elicitation::protocol::Mode;
use elicit_core::elicitation::resolve::{finish, Elicitation, Pending, Resolver};
use elicit_core::error::ElicitError;
use elicit_core::text::url_safety::assess_url;
use elicit_platform::local::{Channel, Endpoint};

use crate::place::Files;
use crate::protocol::{self, FromHolder, ToHolder};
use crate::stderr::Captured;
use crate::ParkError;

/// How long a command has to send its one request line.
const REQUEST_WAIT: Duration = Duration::from_secs(5);
/// How long one write to a command may wait (one that stops reading
/// must not hold the call).
const WRITE_WAIT: Duration = Duration::from_secs(10);
/// How often a command that waits on a running call hears that it still
/// runs ([`crate::client`] gives up after a silence several times this).
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(2);
/// After an expiry, how long the server has to take the cancel before it
/// is ended all the same.
const EXPIRY_GRACE: Duration = Duration::from_secs(2);
/// The most of the call's stdout handed over (a result).
const STDOUT_SHOWN: u64 = 70 << 20;

/// Where the call stands.
enum Phase {
    /// Not parked yet.
    Running,
    /// Waiting for an answer, since then.
    Parked { object: Value, since: Instant },
    /// A `respond`'s answers are being checked.
    Claimed { object: Value, since: Instant },
    /// Expired: nothing more is taken.
    Expired,
}

/// What the holder's threads share.
struct Shared {
    phase: Phase,
    /// Who is told when the call parks or ends.
    watcher: Option<Channel>,
    id: String,
}

/// What the endpoint's thread hands the call.
enum Event {
    /// The `call --park` that started the holder waits.
    Watching,
    /// A `respond`'s answers, and where to reply.
    Claim {
        answers: Vec<String>,
        reply: Channel,
    },
}

/// How a holder is set up.
pub struct HolderOptions {
    /// The call's id.
    pub id: String,
    /// How long a question waits before it expires (`--park-for`).
    pub park_for: Duration,
    /// The server as the parked object names it when it gave no name.
    pub server: String,
    /// Ends the call's servers after an expiry (run just before the
    /// holder exits with [`crate::EXIT_GONE`]).
    pub end_servers: Box<dyn Fn() + Send + Sync>,
    /// The holder's stderr is a pipe whose other end is its stdin (as
    /// `call --park` starts it): what the call says there is kept, bounded,
    /// and handed over. Without it nothing of stderr is handed over.
    pub stderr_on_stdin: bool,
}

/// The holder of one parked call, and the person its session asks.
pub struct Holder {
    shared: Arc<Mutex<Shared>>,
    events: Receiver<Event>,
    files: Files,
    park_for: Duration,
    server: String,
    end_servers: Arc<dyn Fn() + Send + Sync>,
    /// The call's stderr, kept until handed over.
    stderr: Option<Captured>,
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

impl Holder {
    /// Listens at the call's endpoint in `folder`.
    pub fn start(folder: &Path, options: HolderOptions) -> Result<Holder, ParkError> {
        let files = Files::of(folder, &options.id);
        let endpoint = Endpoint::bind(&files.socket)
            .map_err(|e| ParkError::failed(format!("cannot listen for answers: {e}")))?;
        let shared = Arc::new(Mutex::new(Shared {
            phase: Phase::Running,
            watcher: None,
            id: options.id.clone(),
        }));
        let (tx, events) = mpsc::channel();
        let serving = Arc::clone(&shared);
        std::thread::spawn(move || serve(endpoint, &serving, &tx));
        let beating = Arc::clone(&shared);
        std::thread::spawn(move || heartbeat(&beating));
        Ok(Holder {
            shared,
            events,
            files,
            park_for: options.park_for,
            server: options.server,
            end_servers: Arc::from(options.end_servers),
            stderr: options
                .stderr_on_stdin
                .then(|| Captured::start(std::io::stdin())),
        })
    }

    /// Waits up to `limit` for the starting command to watch; `false` when
    /// it never came (the call is not run then).
    pub fn wait_for_watcher(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(Event::Watching) => return true,
                Ok(Event::Claim { mut reply, .. }) => {
                    let _ = protocol::send(&mut reply, &busy("it is starting"));
                }
                Err(_) => return false,
            }
        }
    }

    /// The call ended with `exit` (what it printed is in its files): tells
    /// whoever waits, removes the call's files and returns `exit`.
    pub fn finish(mut self, exit: i32) -> i32 {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let stdout = read_from(&self.files.out, 0, STDOUT_SHOWN);
        let stderr = self.new_stderr();
        let watcher = lock(&self.shared).watcher.take();
        self.files.remove();
        if let Some(mut watcher) = watcher {
            let _ = protocol::send(
                &mut watcher,
                &FromHolder::Finished {
                    stdout,
                    stderr,
                    exit,
                },
            );
        }
        exit
    }

    /// What the call wrote on stderr since it was last handed over.
    fn new_stderr(&mut self) -> String {
        self.stderr.as_mut().map(Captured::take).unwrap_or_default()
    }

    /// Parks `elicitation`: tells the watcher, then waits for answers that
    /// fit or for the expiry.
    fn park(&mut self, elicitation: &Elicitation, pending: &Pending) -> Answer {
        let since = Instant::now();
        let object = self.parked_object(elicitation);
        let stderr = self.new_stderr();
        let watcher = {
            let mut shared = lock(&self.shared);
            shared.phase = Phase::Parked {
                object: object.clone(),
                since,
            };
            shared.watcher.take()
        };
        if let Some(mut watcher) = watcher {
            let parked = FromHolder::Parked {
                parked: object.clone(),
                stderr,
            };
            let _ = protocol::send(&mut watcher, &parked);
        }
        let deadline = since + self.park_for;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let (answers, mut reply) = match self.events.recv_timeout(left) {
                Ok(Event::Claim { answers, reply }) => (answers, reply),
                Ok(Event::Watching) => continue,
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                    return self.expire(elicitation);
                }
            };
            match check(elicitation, pending, &answers) {
                Ok(answer) => {
                    let mut shared = lock(&self.shared);
                    shared.phase = Phase::Running;
                    shared.watcher = Some(reply);
                    return answer;
                }
                Err(e) => {
                    let refused = FromHolder::Refused {
                        message: e.to_string(),
                        exit: e.exit_code(),
                    };
                    let _ = protocol::send(&mut reply, &refused);
                    lock(&self.shared).phase = Phase::Parked {
                        object: object.clone(),
                        since,
                    };
                }
            }
        }
    }

    /// The question expired: nobody can answer it any more, it is
    /// cancelled, and the call is ended after a short grace.
    fn expire(&mut self, elicitation: &Elicitation) -> Answer {
        lock(&self.shared).phase = Phase::Expired;
        let _ = std::fs::remove_file(&self.files.socket);
        let files = self.files.clone();
        let end_servers = Arc::clone(&self.end_servers);
        std::thread::spawn(move || {
            std::thread::sleep(EXPIRY_GRACE);
            end_servers();
            files.remove();
            std::process::exit(crate::EXIT_GONE);
        });
        Answer::refused(&elicitation.request.id, REASON_CANCELLED)
    }

    /// The object `call --park` prints for `elicitation`.
    fn parked_object(&self, elicitation: &Elicitation) -> Value {
        let id = lock(&self.shared).id.clone();
        let expires = SystemTime::now() + self.park_for;
        let mut object = json!({
            "parked": id,
            "expires": humantime::format_rfc3339_seconds(expires).to_string(),
            "server": elicitation.server.clone().unwrap_or_else(|| self.server.clone()),
            "tool": elicitation.tool,
            "elicitation": elicitation.request,
        });
        if let (Mode::Url, Some(url)) = (elicitation.mode(), &elicitation.params.url) {
            let assessed = assess_url(url);
            object["host"] = json!(assessed.host_unicode.or(assessed.host_ascii));
            let warnings: Vec<String> = assessed.warnings.iter().map(|w| w.to_string()).collect();
            object["warnings"] = json!(warnings);
        }
        object["respond"] = json!(format!("elicit respond {id}"));
        object
    }
}

impl Resolver for Holder {
    fn resolve(
        &mut self,
        elicitation: &Elicitation,
        pending: Pending,
    ) -> Result<Answer, ElicitError> {
        if matches!(lock(&self.shared).phase, Phase::Expired) {
            return Ok(Answer::refused(&elicitation.request.id, REASON_CANCELLED));
        }
        Ok(self.park(elicitation, &pending))
    }
}

/// The answers a `respond` sent, with what the call's own `-a` already
/// gave, as the Answer to send: every field settled and valid, or the
/// reasons it is not.
fn check(
    elicitation: &Elicitation,
    pending: &Pending,
    answers: &[String],
) -> Result<Answer, ElicitError> {
    let mut given = Vec::new();
    if let Pending::Form { values, .. } = pending {
        if !values.is_empty() {
            given.push(Value::Object(values.clone()).to_string());
        }
    }
    given.extend(answers.iter().cloned());
    let scripted = ScriptedAnswers::parse(&given, |path| {
        Err(std::io::Error::other(format!(
            "{path}: elicit respond reads files; the parked call does not"
        )))
    })?;
    let id = elicitation.request.id.as_str();
    let answer = match (&elicitation.form, elicitation.mode()) {
        (Some(form), Mode::Form) => match scripted.plan_form(form, true)? {
            FormPlan::Decided(action, content) => Answer::from_action(id, action, Some(content)),
            FormPlan::NeedsPerson { missing, .. } => {
                return Err(ElicitError::NeedsAnswers {
                    fields: missing,
                    detail: Some("answer them with -a NAME=VALUE".into()),
                })
            }
        },
        _ => match scripted.plan_url()? {
            Some(action) => Answer::from_action(id, action, None),
            None => {
                return Err(ElicitError::NeedsUrlAnswer {
                    detail: "answer with -a accept, -a decline or -a cancel".into(),
                })
            }
        },
    };
    finish(elicitation, answer.clone())?;
    Ok(answer)
}

/// While the call runs for a command that waits on it (the `call --park`
/// that started it, or the `respond` whose answer it took), tells that
/// command now and then that the holder lives: a holder that was stopped
/// or hangs is then noticed within a bound instead of waited on for ever.
/// The lock is held while writing, so a beat never splits another message.
fn heartbeat(shared: &Mutex<Shared>) {
    loop {
        std::thread::sleep(HEARTBEAT);
        let mut state = lock(shared);
        if !matches!(state.phase, Phase::Running) {
            continue;
        }
        if let Some(watcher) = state.watcher.as_mut() {
            if protocol::send(watcher, &FromHolder::Working).is_err() {
                state.watcher = None;
            }
        }
    }
}

/// Takes the commands that reach the endpoint, one request each.
fn serve(endpoint: Endpoint, shared: &Mutex<Shared>, events: &Sender<Event>) {
    loop {
        let Ok(channel) = endpoint.accept() else {
            return;
        };
        let _ = channel.set_read_timeout(Some(REQUEST_WAIT));
        let _ = channel.set_write_timeout(Some(WRITE_WAIT));
        let Ok(reply) = channel.try_clone() else {
            continue;
        };
        let mut reader = protocol::reader(channel);
        if let Ok(Some(request)) = protocol::receive(&mut reader, protocol::TO_HOLDER_LIMIT) {
            take(request, reply, shared, events);
        }
    }
}

/// One request: watching, describing, or answers for the parked question
/// (taken by the first `respond` only).
fn take(request: ToHolder, mut reply: Channel, shared: &Mutex<Shared>, events: &Sender<Event>) {
    let mut state = lock(shared);
    match request {
        ToHolder::Watch if state.watcher.is_none() && matches!(state.phase, Phase::Running) => {
            state.watcher = Some(reply);
            let _ = events.send(Event::Watching);
        }
        ToHolder::Watch => {
            drop(state);
            let _ = protocol::send(&mut reply, &busy("it is watched already"));
        }
        ToHolder::Describe => {
            let described = match &state.phase {
                Phase::Parked { object, since } | Phase::Claimed { object, since } => {
                    FromHolder::Described {
                        parked: Some(object.clone()),
                        age: since.elapsed().as_secs(),
                    }
                }
                _ => FromHolder::Described {
                    parked: None,
                    age: 0,
                },
            };
            drop(state);
            let _ = protocol::send(&mut reply, &described);
        }
        ToHolder::Answer { answers } => {
            let phase = std::mem::replace(&mut state.phase, Phase::Running);
            let (object, since) = match phase {
                Phase::Parked { object, since } => (object, since),
                other => {
                    let why = match &other {
                        Phase::Claimed { .. } => "another elicit respond is answering it",
                        Phase::Expired => "it expired",
                        _ => "it is running, not waiting for an answer",
                    };
                    state.phase = other;
                    drop(state);
                    let _ = protocol::send(&mut reply, &busy(why));
                    return;
                }
            };
            state.phase = Phase::Claimed { object, since };
            let _ = events.send(Event::Claim { answers, reply });
        }
    }
}

fn busy(why: &str) -> FromHolder {
    FromHolder::Busy {
        message: format!("the parked call takes no answer now: {why}"),
    }
}

/// At most `limit` bytes of the file at `path` from `from`, as text.
fn read_from(path: &Path, from: u64, limit: u64) -> String {
    let mut bytes = Vec::new();
    if let Ok(mut file) = std::fs::File::open(path) {
        if file.seek(SeekFrom::Start(from)).is_ok() {
            let _ = file.take(limit).read_to_end(&mut bytes);
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use elicit_core::elicitation::protocol::ElicitationParams;
    use elicit_core::elicitation::resolve::SchemaCache;
    use serde_json::Map;

    fn form() -> Elicitation {
        let params = ElicitationParams::form(
            "Who?",
            json!({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0}},"required":["name"]}),
        );
        Elicitation::prepare(params, &mut SchemaCache::single_use()).unwrap()
    }

    fn open(e: &Elicitation) -> Pending {
        Pending::Form {
            values: Map::new(),
            missing: e
                .form
                .as_ref()
                .unwrap()
                .fields
                .iter()
                .map(|f| f.name.clone())
                .collect(),
        }
    }

    #[test]
    fn answers_that_fit_the_form_make_the_answer_and_others_say_why_not() {
        let e = form();
        let ok = check(&e, &open(&e), &["name=Ada".into(), "age=3".into()]).unwrap();
        assert_eq!(ok.data.unwrap()["age"], json!(3));
        let bad = check(&e, &open(&e), &["name=Ada".into(), "age=-1".into()]).unwrap_err();
        assert_eq!(bad.exit_code(), 2);
        assert!(bad.to_string().contains("age"), "{bad}");
        let missing = check(&e, &open(&e), &["age=1".into()]).unwrap_err();
        assert!(missing.to_string().contains("name"), "{missing}");
        let declined = check(&e, &open(&e), &["decline".into()]).unwrap();
        assert!(!declined.ok);
    }

    #[test]
    fn of_two_responds_at_once_one_wins_and_the_other_is_told() {
        let dir = tempfile::tempdir().unwrap();
        let options = HolderOptions {
            id: "0123456789ab".into(),
            park_for: Duration::from_secs(30),
            server: "a server".into(),
            end_servers: Box::new(|| {}),
            stderr_on_stdin: false,
        };
        let mut holder = Holder::start(dir.path(), options).unwrap();
        let socket = Files::of(dir.path(), "0123456789ab").socket;
        let e = form();
        let pending = open(&e);
        let asking = std::thread::spawn(move || {
            let answer = holder.resolve(&e, pending).unwrap();
            (holder, answer)
        });
        // Until the question is parked, an answer would be turned away.
        loop {
            let mut probe = Channel::connect(&socket).unwrap();
            protocol::send(&mut probe, &ToHolder::Describe).unwrap();
            let mut reader = protocol::reader(probe);
            if let Some(FromHolder::Described {
                parked: Some(_), ..
            }) = protocol::receive(&mut reader, protocol::FROM_HOLDER_LIMIT).unwrap()
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let ask = |answer: &str| {
            let mut channel = Channel::connect(&socket).unwrap();
            let answers = vec!["name=Ada".to_string(), format!("age={answer}")];
            protocol::send(&mut channel, &ToHolder::Answer { answers }).unwrap();
            protocol::reader(channel)
        };
        let mut first = ask("1");
        let mut second = ask("2");
        // A second answer the holder took in too would wait for ever.
        second
            .get_ref()
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let told: Option<FromHolder> =
            protocol::receive(&mut second, protocol::FROM_HOLDER_LIMIT).unwrap();
        assert!(
            matches!(&told, Some(FromHolder::Busy { message }) if message.contains("takes no answer")),
            "{told:?}"
        );
        let (holder, answer) = asking.join().unwrap();
        assert_eq!(answer.data.unwrap()["age"], json!(1));
        holder.finish(0);
        let ended = loop {
            let said: Option<FromHolder> =
                protocol::receive(&mut first, protocol::FROM_HOLDER_LIMIT).unwrap();
            if !matches!(said, Some(FromHolder::Working)) {
                break said;
            }
        };
        assert!(
            matches!(ended, Some(FromHolder::Finished { exit: 0, .. })),
            "{ended:?}"
        );
        assert!(!dir.path().join("0123456789ab.sock").exists());
    }

    #[test]
    fn what_the_call_already_answered_counts() {
        let e = form();
        let mut values = Map::new();
        values.insert("name".into(), json!("Ada"));
        let pending = Pending::Form {
            values,
            missing: vec!["age".into()],
        };
        let ok = check(&e, &pending, &["age=4".into()]).unwrap();
        assert_eq!(ok.data.unwrap()["name"], json!("Ada"));
    }
}
