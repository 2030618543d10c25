//! The default command: resolve one elicitation document (or `--lines`).

use std::path::Path;

use elicit::elicitation::resolve::{outcome_exit_code, Resolver, SchemaCache};
use elicit::error::ElicitError;
use elicit::text::sanitize::sanitize_block;
use elicit::{elicitation::input, elicitation::output, ScriptedAnswers};

use super::{load_answers, person, print_line, read_input, report, warn, Person};
use crate::cli::ResolveArgs;

pub fn run(args: &ResolveArgs) -> i32 {
    if args.exit_with_parent {
        elicit::platform::process::end_with_parent();
    }
    let scripted = match load_answers(&args.answers) {
        Ok(a) => a,
        Err(e) => return report(&e),
    };
    let rules = match super::load_rules(&args.answers) {
        Ok(r) => r,
        Err(e) => return report(&e),
    };
    let mut person = match choose_person(args) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if let (Person::Page(page), false) = (&person, args.lines) {
        page.ends_after_answers(); // one document, then elicit exits
    }
    if let Person::Terminal(_) = person {
        // Nothing else to do on SIGTERM/SIGHUP/SIGQUIT here: put the
        // terminal back and die of the signal.
        elicit::signals::restore_on_fatal_signals();
    }
    let mut person =
        super::answering(rules, &args.answers, args.verbose).in_front_of(person.resolver());
    if args.lines {
        return run_lines(args, &scripted, &mut person);
    }
    let bytes = match read_input(args.file.as_deref()) {
        Ok(b) => b,
        Err(e) => return report(&e),
    };
    let text = match input::decode(&bytes) {
        Ok(t) => t,
        Err(e) => return report(&e),
    };
    let mut cache = SchemaCache::single_use();
    match elicit::elicitation::resolve_text(text, &scripted, &mut person, &mut cache, args.pretty) {
        Ok(resolved) => {
            for w in &resolved.warnings {
                warn(w);
            }
            let code = print_line(&resolved.output);
            if code != 0 {
                return code;
            }
            if args.exit_status {
                outcome_exit_code(resolved.results.iter().map(|(_, r)| r))
            } else {
                0
            }
        }
        Err(failure) => {
            // A JSON-RPC request the server got wrong (its shape, its params,
            // its schema) gets a JSON-RPC error on stdout, so a pipeline can
            // hand it straight back.
            if let (Some(id), Some(code)) = (&failure.reply_id, failure.error.rpc_code()) {
                print_line(&output::render_rpc_error(
                    id,
                    code,
                    &failure.error,
                    None,
                    args.pretty,
                ));
            }
            report(&failure.error)
        }
    }
}

/// Who answers what the scripted answers leave open. One idea, one name
/// everywhere: `--prompt-timeout` as in `call` and `proxy`, `--timeout`
/// kept as it was.
fn choose_person(args: &ResolveArgs) -> Result<Person, i32> {
    match (args.prompt_timeout, args.timeout) {
        (Some(_), Some(_)) => Err(report(&ElicitError::Usage(
            "--timeout and --prompt-timeout are the same setting here: give one".into(),
        ))),
        (Some(t), None) => Ok(person(&args.answers, Some(t), "--prompt-timeout")),
        (None, t) => Ok(person(&args.answers, t, "--timeout")),
    }
}

fn run_lines(args: &ResolveArgs, scripted: &ScriptedAnswers, person: &mut dyn Resolver) -> i32 {
    // run_lines buffers the input itself (it must see when its buffer runs
    // dry, to flush the answers so far).
    let reader: Box<dyn std::io::Read> = match args.file.as_deref() {
        Some(p) if p != Path::new("-") => match std::fs::File::open(p) {
            Ok(f) => Box::new(f),
            Err(e) => return report(&ElicitError::io(format!("cannot open {}", p.display()), e)),
        },
        _ => Box::new(std::io::stdin().lock()),
    };
    let out = std::io::stdout().lock();
    let result = elicit::elicitation::lines::run_lines(
        reader,
        out,
        scripted,
        person,
        |line, err, warnings| {
            if warnings.is_empty() {
                eprintln!("elicit: line {line}: {}", sanitize_block(&err.to_string()));
            } else {
                for w in warnings {
                    warn(&format!("line {line}: {w}"));
                }
            }
        },
    );
    match result {
        Ok(summary) if summary.failed > 0 => {
            eprintln!(
                "elicit: {} of {} lines failed",
                summary.failed, summary.lines
            );
            2
        }
        Ok(summary) => {
            if args.exit_status {
                summary.outcome_code
            } else {
                0
            }
        }
        Err(ElicitError::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => 1,
        Err(e) => report(&e),
    }
}
