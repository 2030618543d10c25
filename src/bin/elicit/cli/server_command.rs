//! `elicit proxy python server.py -v`, without `--`: some clients (MCP
//! Inspector's CLI) swallow a `--` in a server's command line, so the
//! proxy runs a command the way `env` and `timeout` do: its own options
//! first, then the first word that is no option and no URL starts the
//! server's command, and every word after it is the command's (`-v`
//! included). A command after `--` and a URL are read as before.

use std::ffi::OsString;

use clap::CommandFactory;

/// `args` with `--` put before the server's command of an `elicit proxy`
/// line written without one; any other line as it was.
pub fn dashes_before_command(mut args: Vec<OsString>) -> Vec<OsString> {
    let mut cli = super::Cli::command();
    cli.build();
    let Some(proxy) = cli.find_subcommand("proxy") else {
        return args;
    };
    let Some(sub) = first_word(&cli, &args, 1).filter(|&at| args[at] == "proxy") else {
        return args;
    };
    let Some(at) = first_word(proxy, &args, sub + 1) else {
        return args;
    };
    let word = args[at].to_string_lossy();
    let lower = word.get(..8).unwrap_or(&word).to_ascii_lowercase();
    if word == "--" || lower.starts_with("http://") || lower.starts_with("https://") {
        return args;
    }
    args.insert(at, "--".into());
    args
}

/// The index of the first word from `from` on that is neither one of
/// `command`'s options nor an option's value (`--` counts as a word).
fn first_word(command: &clap::Command, args: &[OsString], from: usize) -> Option<usize> {
    let mut at = from;
    while at < args.len() {
        let word = args[at].to_string_lossy();
        let takes_value = if word == "--" || word == "-" {
            return Some(at);
        } else if let Some(long) = word.strip_prefix("--").filter(|l| !l.is_empty()) {
            !long.contains('=') && long_takes_value(command, long)
        } else if let Some(shorts) = word.strip_prefix('-').filter(|s| !s.is_empty()) {
            // A cluster (`-va`): the first that takes a value takes the
            // rest of the word, or the next word when it is last.
            shorts
                .char_indices()
                .find(|(_, c)| short_takes_value(command, *c))
                .is_some_and(|(i, c)| i + c.len_utf8() == shorts.len())
        } else {
            return Some(at);
        };
        at += if takes_value { 2 } else { 1 };
    }
    None
}

fn long_takes_value(command: &clap::Command, long: &str) -> bool {
    command
        .get_arguments()
        .find(|a| {
            a.get_long() == Some(long) || a.get_all_aliases().is_some_and(|l| l.contains(&long))
        })
        .is_some_and(|a| a.get_action().takes_values())
}

fn short_takes_value(command: &clap::Command, short: char) -> bool {
    command
        .get_arguments()
        .find(|a| a.get_short() == Some(short))
        .is_some_and(|a| a.get_action().takes_values())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(line: &str) -> String {
        let args = line.split(' ').map(OsString::from).collect();
        let out: Vec<String> = dashes_before_command(args)
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        out.join(" ")
    }

    #[test]
    fn the_first_word_that_is_no_option_starts_the_command() {
        for (line, expected) in [
            (
                "elicit proxy python server.py -v",
                "elicit proxy -- python server.py -v",
            ),
            (
                "elicit proxy -v -a accept --server-log /dev/null python s.py --x",
                "elicit proxy -v -a accept --server-log /dev/null -- python s.py --x",
            ),
            (
                "elicit proxy --answer=accept -aname=Ada node s.js",
                "elicit proxy --answer=accept -aname=Ada -- node s.js",
            ),
            (
                "elicit --color never proxy python",
                "elicit --color never proxy -- python",
            ),
            // As before: a command after `--`, a URL, another subcommand.
            (
                "elicit proxy -v -- python s.py",
                "elicit proxy -v -- python s.py",
            ),
            (
                "elicit proxy https://example.com/mcp -v",
                "elicit proxy https://example.com/mcp -v",
            ),
            (
                "elicit call python server.py",
                "elicit call python server.py",
            ),
            ("elicit proxy -v", "elicit proxy -v"),
            (
                "elicit proxy --no-input -- true",
                "elicit proxy --no-input -- true",
            ),
        ] {
            assert_eq!(fixed(line), expected, "{line}");
        }
    }
}
