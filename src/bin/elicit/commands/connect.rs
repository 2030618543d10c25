//! What `call`, `test` and `proxy` share to reach a server: the sign-in
//! hook and the `--strict` checker.

use std::time::Duration;

use elicit::error::ElicitError;
use elicit::lint::{Levels, Revision};
use elicit::mcp::client::ProtocolChoice;
use elicit::mcp::strict::{Strict, EXIT_STRICT};
use elicit::transport;

use super::{person, Person};
use crate::cli::{AnswerArgs, SignInArgs};

/// Whether the person passed their own `Authorization` header: then it is
/// theirs to manage, and elicit does not sign in over it.
pub fn own_authorization(headers: &[(String, String)]) -> bool {
    headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
}

/// The sign-in hook for a remote server: elicit's sign-in
/// ([`elicit::auth::Authenticator`]) with the person at the terminal as
/// the one who consents (the URL flow), or, without a terminal or with
/// `--no-input`, `--browser PROGRAM` launched directly.
///
/// The wait for the browser is `--prompt-timeout` when given; else, when
/// nobody is at the terminal, `wait` (`--timeout` of `call`); else the
/// sign-in's own default wait (`DEFAULT_WAIT` in `elicit::auth`): a person
/// typing a password needs longer than a server gets to answer.
pub fn sign_in_hook(
    sign_in: &SignInArgs,
    answers: &AnswerArgs,
    server_url: &str,
    prompt_timeout: Option<Duration>,
    wait: Option<Duration>,
) -> Box<dyn elicit::transport::http::Authenticator> {
    let who = person(answers, prompt_timeout, "--prompt-timeout");
    let nobody = matches!(who, Person::Nobody(_));
    let wait = prompt_timeout.or(if nobody { wait } else { None });
    let mut opts = sign_in.clone().into_options(answers, wait);
    opts.no_input |= nobody;
    let mut auth = elicit::auth::Authenticator::new(opts, transport::http::new_agent());
    match who {
        Person::Terminal(t) => auth.set_person(Box::new(t)),
        // The consent is shown on the page like a URL elicitation.
        Person::Page(p) => auth.set_person(Box::new(p)),
        Person::Nobody(_) => {}
    }
    Box::new(elicit::auth::hook::SignInHook::new(auth, server_url))
}

/// The `--strict` checker, when asked for: findings on stderr as they come.
/// An unknown rule in `--allow`/`--deny` is reported: `Err` holds the exit
/// status.
pub fn strict_checker(
    checks: &crate::cli::StrictArgs,
    protocol: ProtocolChoice,
) -> Result<Option<Strict>, i32> {
    if !checks.strict {
        return Ok(None);
    }
    let levels = Levels::new(&checks.allow, &checks.deny)
        .map_err(|message| super::report(&ElicitError::Usage(message)))?;
    let revision = match protocol {
        ProtocolChoice::Only(revision) => revision,
        ProtocolChoice::Auto => Revision::V2026_07_28,
    };
    Ok(Some(Strict::new(levels, checks.modes, revision, true)))
}

/// The exit status once `--strict` has had its say: the summary is
/// printed, and an error finding makes it 5 (a usage error stays 2).
pub fn strict_exit(strict: Option<&Strict>, code: i32) -> i32 {
    let Some(strict) = strict else {
        return code;
    };
    strict.finish();
    if strict.has_errors() && code != 2 {
        EXIT_STRICT
    } else {
        code
    }
}
