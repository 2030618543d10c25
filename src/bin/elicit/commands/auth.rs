//! `elicit auth list|logout`: the library does the work, this prints it.

use elicit::text::sanitize::sanitize_block;

use super::print_line;
use crate::cli::AuthCommand;

pub fn run(action: AuthCommand) -> i32 {
    let out = match action {
        AuthCommand::List => elicit::auth::list(None),
        AuthCommand::Logout { url } => elicit::auth::logout(url.as_deref(), None),
    };
    match out {
        // Issuers and scopes come from servers: sanitised like all server text.
        Ok(text) => print_line(&sanitize_block(text.trim_end())),
        Err(e) => {
            eprintln!("elicit: {}", sanitize_block(&e.to_string()));
            1
        }
    }
}
