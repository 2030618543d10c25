//! `elicit mock`: recorded cassettes served as an MCP server (the
//! library's `cassette::mock`), over stdio or Streamable HTTP.

use elicit::cassette::mock::{self, Mock};
use elicit::cassette::Cassette;
use elicit::text::sanitize::sanitize_line;

use crate::cli::MockArgs;

pub fn run(args: &MockArgs) -> i32 {
    let files = match elicit::cassette::suite::cassette_files(&args.paths) {
        Ok(f) if f.is_empty() => {
            return super::report::usage("no cassettes (*.cassette.json) found")
        }
        Ok(f) => f,
        Err(e) => return super::report::usage(&e),
    };
    let mut cassettes = Vec::new();
    for path in &files {
        match Cassette::load(path) {
            Ok(c) => cassettes.push(c),
            Err(e) => return super::report::usage(&e.to_string()),
        }
    }
    let mut served = Mock::new(cassettes, args.strict);
    let Some(port) = args.http else {
        // Its client's child: a client gone leaves no server behind.
        elicit::platform::process::end_with_parent();
        let stdin = std::io::stdin();
        return match mock::stdio::serve(&mut served, stdin.lock(), std::io::stdout().lock()) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("elicit mock: {}", sanitize_line(&e.to_string()));
                1
            }
        };
    };
    elicit::signals::install_interrupt_handler();
    match mock::http::serve(served, port, args.timeout) {
        Ok(addr) => {
            eprintln!(
                "elicit mock: serving {} cassette(s) on http://{addr}/mcp",
                files.len()
            );
            while !elicit::signals::interrupted() {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            130
        }
        Err(e) => super::report::usage(&format!("--http {port}: {e}")),
    }
}
