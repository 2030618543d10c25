//! `elicit call --park`, `elicit respond`, `elicit pending` and the parked
//! call's holder (`elicit __park-hold`, which `call --park` starts): the
//! flags and the printing around `elicit_park`.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use elicit::elicitation::resolve::{self, NoTerminal, Resolver};
use elicit::page::{BrowserResolver, PageOptions};
use elicit::park::answering::{self, Answered, Ended};
use elicit::park::client::{self, Outcome};
use elicit::park::holder::{Holder, HolderOptions};
use elicit::park::{ParkError, EXIT_PARKED};
use elicit::text::sanitize::{sanitize_block, sanitize_line};
use elicit::ScriptedAnswers;

use super::{json_text, print_line};
use crate::cli::{HoldArgs, PendingArgs, RespondArgs};

/// How long a holder waits for the `call --park` that started it.
const WATCHER_WAIT: Duration = Duration::from_secs(30);
/// How long the servers of an expired call have to end before SIGKILL.
const END_GRACE: Duration = Duration::from_secs(2);
/// The variable that hands the holder its call's words (a JSON list): a
/// process's environment is its user's alone to read, where its command
/// line is anyone's (`ps`), and the words may hold a client secret or an
/// `Authorization` header for as long as the call stays parked.
const HELD_CALL: &str = "ELICIT_PARK_HELD_CALL";

/// `elicit call --park`: the same call, run by a holder in the background;
/// prints the parked object (exit 5) or what the call printed.
pub fn launch() -> i32 {
    let words: Vec<OsString> = std::env::args_os().collect();
    let Some(at) = words.iter().position(|w| w == "call") else {
        return report(ParkError::usage("--park is a flag of elicit call"));
    };
    let call_words = words[at + 1..].to_vec();
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return report(ParkError::failed(format!("cannot find elicit itself: {e}"))),
    };
    let words: Option<Vec<&str>> = call_words.iter().map(|w| w.to_str()).collect();
    let Some(words) = words else {
        return report(ParkError::usage(
            "--park takes the call's words in UTF-8 only",
        ));
    };
    let words = serde_json::Value::from(words).to_string();
    print_outcome(client::launch(|id| {
        let mut command = Command::new(&exe);
        command
            .arg("__park-hold")
            .arg("--park-id")
            .arg(id)
            .env(HELD_CALL, &words);
        command
    }))
}

/// The holder's whole command line: `elicit __park-hold --park-id ID` and
/// the call's words from [`HELD_CALL`], which is taken out of the
/// environment so that nothing the call starts (its server) inherits it.
/// Any other command line is given back as it is.
pub fn with_held_call(args: Vec<OsString>) -> Vec<OsString> {
    if args.get(1).is_none_or(|word| word != "__park-hold") {
        return args;
    }
    let Some(words) = std::env::var_os(HELD_CALL) else {
        return args;
    };
    // Still one thread here: nothing reads the environment meanwhile.
    std::env::remove_var(HELD_CALL);
    let words: Vec<String> = words
        .to_str()
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default();
    args.into_iter()
        .chain(words.into_iter().map(OsString::from))
        .collect()
}

/// The holder: the call, its open questions parked until answered or
/// expired; what it printed goes to whoever waits.
pub fn hold(args: &HoldArgs) -> i32 {
    let folder = match elicit::park::place::folder() {
        Ok(folder) => folder,
        Err(e) => return report(e),
    };
    let server = match (&args.call.target.url, &args.call.target.command) {
        (Some(url), _) => url.clone(),
        (None, command) => command.join(" "),
    };
    let options = HolderOptions {
        id: args.id.clone(),
        park_for: args.call.park_for,
        server,
        end_servers: Box::new(|| elicit::transport::process_group::terminate_all(END_GRACE)),
        stderr_on_stdin: true,
    };
    let mut holder = match Holder::start(&folder, options) {
        Ok(holder) => holder,
        Err(e) => return report(e),
    };
    if !holder.wait_for_watcher(WATCHER_WAIT) {
        return holder.finish(1);
    }
    let code = super::call::run_with(&args.call, Some(&mut holder));
    holder.finish(code)
}

/// `elicit respond ID`: the answer, checked by the holder against the form,
/// then what the call prints next.
pub fn respond(args: &RespondArgs) -> i32 {
    if let Err(e) = elicit::park::place::check_id(&args.id) {
        return report(e);
    }
    match respond_answers(args) {
        Ok(answers) => print_outcome(client::respond(&args.id, answers)),
        Err(e) => report(e),
    }
}

/// The answers to send, from `-a`, `--answers`, `--ui` or stdin.
fn respond_answers(args: &RespondArgs) -> Result<Vec<String>, ParkError> {
    if args.ui.is_some() || args.answers_file.is_some() {
        return asked_answer(args).map(|answer| vec![answer]);
    }
    if !args.answers.is_empty() {
        // `@FILE` is read here, by the user's own command.
        return args
            .answers
            .iter()
            .map(|a| match a.strip_prefix('@') {
                Some(path) => super::read_answer_file(path)
                    .map_err(|e| ParkError::usage(format!("cannot read {path:?}: {e}"))),
                None => Ok(a.clone()),
            })
            .collect();
    }
    if std::io::stdin().is_terminal() {
        return Err(ParkError::usage(
            "no answer: give -a NAME=VALUE (or accept, decline, cancel), --answers FILE, --ui terminal|browser, or the Answer JSON on stdin",
        ));
    }
    let bytes = super::read_input(None).map_err(|e| ParkError::usage(e.to_string()))?;
    let text =
        elicit::elicitation::input::decode(&bytes).map_err(|e| ParkError::usage(e.to_string()))?;
    Ok(vec![text.trim().to_string()])
}

/// The answer answer rules (`--answers`) or a person (`--ui`) give the
/// parked question, as an ElicitResult's JSON.
fn asked_answer(args: &RespondArgs) -> Result<String, ParkError> {
    let described = client::describe(&args.id)?;
    let Some(parked) = described.parked else {
        return Err(ParkError::gone(&args.id));
    };
    let elicitation = answering::question(&parked)?;
    let deadline = answering::expiry(&parked);
    let usage = |e: elicit::error::ElicitError| ParkError {
        message: e.to_string(),
        exit: e.exit_code(),
    };
    let scripted = ScriptedAnswers::default();
    let result = match (&args.answers_file, args.ui) {
        (Some(path), _) => {
            let rules = elicit::answers::AnswerRules::load(path)
                .map_err(|e| ParkError::usage(format!("--answers {e}")))?;
            let nobody = NoTerminal {
                detail: "no rule of --answers matches it".into(),
            };
            let mut rules = elicit::answers::Answering::new()
                .rules(Some(rules.into()))
                .in_front_of(nobody);
            resolve::resolve(&elicitation, &scripted, true, &mut rules).map_err(usage)?
        }
        (None, ui) => {
            let mut person = person_until(ui.unwrap_or_default().into(), deadline);
            answering::ask(&elicitation, deadline, person.resolver())?.ok_or_else(|| ParkError {
                message: "the parked question expired before an answer".into(),
                exit: elicit::park::EXIT_GONE,
            })?
        }
    };
    Ok(result.to_value().to_string())
}

/// Who answers at `respond --ui`: nobody past the call's expiry.
fn person_until(ui: elicit::person::Ui, deadline: std::time::Instant) -> elicit::person::Person {
    let page = ui == elicit::person::Ui::Browser;
    let left = deadline.saturating_duration_since(std::time::Instant::now());
    let person = elicit::person::choose(&elicit::person::PersonOptions {
        ui,
        no_input: false,
        server: None,
        // The page is given the expiry itself (not a timeout to announce).
        timeout: (!page).then_some(left),
        timeout_flag: "--park-for",
        browser: None,
        no_open: false,
        ci: false,
        wording: elicit::person::FLAGS,
    });
    match person {
        elicit::person::Person::Page(p) => elicit::person::Person::Page(p.until(deadline)),
        other => other,
    }
}

/// `elicit pending`: the user's parked calls.
pub fn pending(args: &PendingArgs) -> i32 {
    let calls = match client::pending() {
        Ok(listing) => {
            for (id, why) in &listing.silent {
                eprintln!("elicit: parked call {id} is left out: {why}");
            }
            listing.calls
        }
        Err(e) => return report(e),
    };
    if args.ui.is_some() && calls.iter().any(|call| call.parked.is_some()) {
        return answer_on_page(args, calls);
    }
    let listed: Vec<Value> = calls
        .iter()
        .filter_map(|call| {
            let parked = call.parked.as_ref()?;
            Some(json!({
                "id": call.id,
                "server": parked["server"],
                "tool": parked["tool"],
                "question": parked["elicitation"]["prompt"],
                "age": call.age,
                "expires": parked["expires"],
                "elicitation": parked["elicitation"],
                "respond": parked["respond"],
            }))
        })
        .collect();
    if args.json {
        return print_line(&json_text(&listed, false));
    }
    if listed.is_empty() {
        eprintln!("elicit: no parked calls");
        return 0;
    }
    for call in &listed {
        let text = |v: &Value| sanitize_line(v.as_str().unwrap_or("-"));
        println!(
            "{}  {}s  {} {}: {} (expires {})",
            text(&call["id"]),
            call["age"],
            text(&call["server"]),
            text(&call["tool"]),
            text(&call["question"]),
            text(&call["expires"]),
        );
    }
    0
}

/// `elicit pending --ui browser`: every parked question on one page, each
/// answer sent as `respond` sends it; then what became of each call.
fn answer_on_page(args: &PendingArgs, calls: Vec<client::Parked>) -> i32 {
    let page = match BrowserResolver::new(PageOptions {
        browser: args.browser.clone(),
        no_open: args.no_open,
        ..PageOptions::default()
    }) {
        Ok(page) => page,
        Err(e) => return report(ParkError::failed(e.to_string())),
    };
    let person = move |deadline| Box::new(page.clone().until(deadline)) as Box<dyn Resolver + Send>;
    let answered = answering::answer_all(calls, &person);
    let code = answered
        .iter()
        .map(|call| match &call.ended {
            Ended::Finished { exit, .. } => *exit,
            Ended::Expired => elicit::park::EXIT_GONE,
            Ended::Failed(e) => e.exit,
        })
        .find(|&code| code != 0)
        .unwrap_or(0);
    let listed: Vec<Value> = answered.iter().map(ended_object).collect();
    if args.json {
        return match print_line(&json_text(&listed, false)) {
            0 => code,
            failed => failed,
        };
    }
    for (call, object) in answered.iter().zip(&listed) {
        print_ended(call, object);
    }
    code
}

/// What became of one call, as `pending --ui browser --json` lists it.
fn ended_object(call: &Answered) -> Value {
    let mut object = json!({
        "id": call.id,
        "server": call.parked["server"],
        "tool": call.parked["tool"],
    });
    match &call.ended {
        Ended::Finished {
            stdout,
            stderr,
            exit,
        } => {
            object["state"] = json!("finished");
            object["exit"] = json!(exit);
            object["result"] = serde_json::from_str(stdout).unwrap_or_else(|_| json!(stdout));
            object["stderr"] = json!(stderr);
        }
        Ended::Expired => object["state"] = json!("expired"),
        Ended::Failed(e) => {
            object["state"] = json!("failed");
            object["exit"] = json!(e.exit);
            object["error"] = json!(e.message);
        }
    }
    object
}

/// One call's line (and its result) for a person.
fn print_ended(call: &Answered, object: &Value) {
    let text = |v: &Value| sanitize_line(v.as_str().unwrap_or("-"));
    let what = match &call.ended {
        Ended::Finished { exit, .. } => format!("answered; the call ended with status {exit}"),
        Ended::Expired => "not answered; the question expired".to_string(),
        Ended::Failed(e) => format!("not answered: {}", sanitize_line(&e.message)),
    };
    println!(
        "{}  {} {}: {what}",
        text(&object["id"]),
        text(&object["server"]),
        text(&object["tool"]),
    );
    if let Ended::Finished { stdout, stderr, .. } = &call.ended {
        eprint!("{}", sanitize_block(stderr));
        print!("{}", sanitize_block(stdout));
    }
}

/// Prints how a call came back: the parked object (exit 5), or what the
/// call printed and its status.
fn print_outcome(outcome: Result<Outcome, ParkError>) -> i32 {
    match outcome {
        Ok(Outcome::Parked { parked, stderr }) => {
            eprint!("{stderr}");
            match print_line(&json_text(&parked, false)) {
                0 => EXIT_PARKED,
                failed => failed,
            }
        }
        Ok(Outcome::Finished {
            stdout,
            stderr,
            exit,
        }) => {
            eprint!("{stderr}");
            let mut out = std::io::stdout().lock();
            match out.write_all(stdout.as_bytes()).and_then(|()| out.flush()) {
                Ok(()) => exit,
                Err(e) => report(ParkError::failed(format!("cannot write the result: {e}"))),
            }
        }
        Err(e) => report(e),
    }
}

fn report(e: ParkError) -> i32 {
    eprintln!("elicit: {}", sanitize_block(&e.message));
    e.exit
}
