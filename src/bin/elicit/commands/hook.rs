//! `elicit hook claude-code`: a command for Claude Code's `Elicitation`
//! hook. The hook input is one more shape elicit reads
//! ([`elicit::elicitation::input::Shape::ClaudeCodeHook`]); this adds what
//! a hook needs around it: answer rules first, nothing printed (so Claude
//! Code asks itself) when nobody may answer, and a record of what was
//! answered.
//!
//! Exit statuses: 0 whenever the hook did its job (answered, or left the
//! question to Claude Code); 1 for a bad input. Never 2, which Claude Code
//! reads as "deny".

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::Path;

use serde_json::{json, Map, Value};

use elicit::elicitation::resolve::SchemaCache;
use elicit::elicitation::{input, output};
use elicit::error::ElicitError;
use elicit::text::sanitize::sanitize_block;
use elicit::{Action, ElicitResult};

use super::{load_answers, person, print_line, read_input, warn, Person};
use crate::cli::{ClaudeCodeHookArgs, HookFallback};

/// The hook's exit status for a failure: a non-blocking error in Claude
/// Code (2 would deny the elicitation).
const EXIT_HOOK_ERROR: i32 = 1;

fn fail(e: &ElicitError) -> i32 {
    eprintln!("elicit: {}", sanitize_block(&e.to_string()));
    EXIT_HOOK_ERROR
}

/// Whether `args` (the whole command line) run `elicit hook …`: its first
/// word after the global `--color WHEN` is `hook`.
pub fn is_hook_run(args: &[OsString]) -> bool {
    let mut words = args.iter().skip(1);
    while let Some(word) = words.next() {
        if word == "--color" {
            words.next();
        } else if !word.to_string_lossy().starts_with("--color=") {
            return word == "hook";
        }
    }
    false
}

/// A hook run whose flags or environment clap refused: said on stderr
/// (with the variable when the value came from one), nothing on stdout,
/// and exit 0, so Claude Code shows its own dialog: one typo in a hook's
/// settings must not deny every elicitation.
pub fn bad_flags(e: &clap::Error, args: &[OsString]) -> i32 {
    let said = e.render().to_string();
    let said = said.trim().trim_start_matches("error: ");
    eprintln!("elicit: {}", sanitize_block(said));
    for var in variables_at_fault(e, args) {
        eprintln!("elicit: the value comes from {var} in the hook's environment");
    }
    eprintln!("elicit: the hook's flags or environment are wrong; Claude Code asks instead");
    0
}

/// The environment variables of `elicit hook claude-code` that `e` is
/// about: the one behind a refused value its flag did not give, or those
/// that are not text.
fn variables_at_fault(e: &clap::Error, args: &[OsString]) -> Vec<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    use clap::CommandFactory;
    let mut cli = crate::cli::Cli::command();
    cli.build();
    let Some(hook) = cli
        .find_subcommand("hook")
        .and_then(|h| h.find_subcommand("claude-code"))
    else {
        return Vec::new();
    };
    let refused = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) => arg.clone(),
        _ => String::new(),
    };
    let given = |long: &str| {
        let flag = format!("--{long}");
        args.iter().any(|a| {
            let a = a.to_string_lossy();
            a == flag || a.starts_with(&format!("{flag}="))
        })
    };
    let mut found = Vec::new();
    for arg in hook.get_arguments() {
        let (Some(long), Some(var)) = (arg.get_long(), arg.get_env()) else {
            continue;
        };
        let Some(value) = std::env::var_os(var) else {
            continue;
        };
        let at_fault = match e.kind() {
            ErrorKind::InvalidUtf8 => value.to_str().is_none(),
            _ => !given(long) && refused.split(' ').next() == Some(&format!("--{long}")),
        };
        if at_fault {
            found.push(OsStr::to_string_lossy(var).into_owned());
        }
    }
    found
}

pub fn claude_code(args: &ClaudeCodeHookArgs) -> i32 {
    // Claude Code's hook timeout kills the shell around the hook, not the
    // hook: elicit's page must not live on, reparented, for nobody.
    elicit::platform::process::end_with_parent();
    let bytes = match read_input(args.file.as_deref()) {
        Ok(b) => b,
        Err(e) => return fail(&e),
    };
    let text = match input::decode(&bytes) {
        Ok(t) => t,
        Err(e) => return fail(&e),
    };
    let event = match input::parse_json(text) {
        Ok(v) => v,
        Err(e) => return fail(&e),
    };
    match event.get("hook_event_name").and_then(Value::as_str) {
        Some("Elicitation") => answer(args, text, &event),
        Some("ElicitationResult") => {
            // Claude Code says what was answered; the hook only keeps it.
            if let Some(path) = &args.record {
                if let Err(e) = append_record(path, &result_record(&event)) {
                    return fail(&e);
                }
            }
            0
        }
        other => fail(&ElicitError::UnknownShape {
            message: format!(
                "not a Claude Code Elicitation or ElicitationResult hook input (hook_event_name: {}); configure it under hooks.Elicitation",
                other.map_or_else(|| "missing".to_string(), |e| format!("{e:?}"))
            ),
        }),
    }
}

/// An `Elicitation` event: rules and `-a`, then a person (the page, as a
/// hook has no terminal); nobody to ask leaves it to Claude Code.
fn answer(args: &ClaudeCodeHookArgs, text: &str, event: &Value) -> i32 {
    let scripted = match load_answers(&args.answers) {
        Ok(a) => a,
        Err(e) => return fail(&e),
    };
    let rules = match super::load_rules(&args.answers) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let mut who = person(&args.answers, Some(args.prompt_timeout), "--prompt-timeout");
    if let Person::Page(page) = &who {
        page.ends_after_answers(); // Claude Code runs a hook per elicitation
    }
    // A rule that does not match falls through to the person (or to
    // nobody): with the hook, "nobody" means Claude Code asks, not decline.
    let mut answering = elicit::answers::Answering::new()
        .rules(rules)
        .in_front_of(who.resolver());
    let mut cache = SchemaCache::single_use();
    let resolved =
        elicit::elicitation::resolve_text(text, &scripted, &mut answering, &mut cache, false);
    let result = match resolved {
        Ok(resolved) => {
            for w in &resolved.warnings {
                warn(w);
            }
            let Some((_, result)) = resolved.results.into_iter().next() else {
                return fail(&ElicitError::UnknownShape {
                    message: "the hook input carries no elicitation".into(),
                });
            };
            result
        }
        Err(failure) => match failure.error {
            ElicitError::NeedsAnswers { .. } | ElicitError::NeedsUrlAnswer { .. } => {
                let why = match &failure.error {
                    ElicitError::NeedsAnswers { fields, .. } if !fields.is_empty() => {
                        format!("no rule or person for {}", fields.join(", "))
                    }
                    _ => "no rule or person".to_string(),
                };
                let why = sanitize_block(&why);
                let Some(fallback) = args.fallback else {
                    eprintln!("elicit: nobody may answer here ({why}); Claude Code asks instead");
                    return 0;
                };
                eprintln!("elicit: nobody may answer here ({why}); --fallback answers it");
                let action = match fallback {
                    HookFallback::Decline => Action::Decline,
                    HookFallback::Cancel => Action::Cancel,
                };
                ElicitResult::new(action)
            }
            other => return fail(&other),
        },
    };
    if let Some(path) = &args.record {
        if let Err(e) = append_record(path, &answer_record(event, &result)) {
            return fail(&e);
        }
    }
    print_line(&output::claude_code_hook_output(&result).to_string())
}

/// A line of `--record`: the event's name and those of its `keys` it has.
fn record_line(name: &str, event: &Value, keys: &[&str]) -> Map<String, Value> {
    let mut line = Map::new();
    line.insert("event".into(), name.into());
    for key in keys {
        if let Some(v) = event.get(*key) {
            line.insert((*key).into(), v.clone());
        }
    }
    line
}

/// A line of `--record` for an answer this hook gave.
fn answer_record(event: &Value, result: &ElicitResult) -> Value {
    let keys = [
        "mcp_server_name",
        "message",
        "mode",
        "url",
        "elicitation_id",
        "requested_schema",
    ];
    let mut line = record_line("Elicitation", event, &keys);
    line.insert("answered_by".into(), "elicit".into());
    line.insert("result".into(), result.to_value());
    Value::Object(line)
}

/// A line of `--record` for Claude Code's `ElicitationResult` event.
fn result_record(event: &Value) -> Value {
    let keys = [
        "mcp_server_name",
        "action",
        "mode",
        "elicitation_id",
        "content",
    ];
    Value::Object(record_line("ElicitationResult", event, &keys))
}

/// Appends one JSON line to the record, created readable by its owner only
/// (answers may hold what a person typed); one another user could read (a
/// file planted in a shared folder, a link) is refused.
fn append_record(path: &Path, line: &Value) -> Result<(), ElicitError> {
    let mut stamped =
        json!({"time": humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()});
    if let (Some(s), Some(l)) = (stamped.as_object_mut(), line.as_object()) {
        s.extend(l.clone());
    }
    let mut text = stamped.to_string();
    text.push('\n');
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    elicit::platform::fs::open_private_for_writing(&options, path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| ElicitError::io(format!("cannot write the record {}", path.display()), e))
}
