//! `elicit call`: connect to a server, pick a tool and its arguments, call
//! it with every elicitation on the way resolved, print the result.

use std::time::Duration;

use elicit::error::ElicitError;
use elicit::session::call::{ask_arguments, call_tool, input_schema, tool_arguments, tool_choices};
use elicit::session::client::McpClient;
use elicit::session::handler::ElicitHandler;
use elicit::transport::{self, ConnectOptions, MessageLog, ServerTarget};

use super::{json_text, load_answers, person, print_line, report_chain, Person};
use crate::cli::CallArgs;

pub fn run(args: &CallArgs) -> i32 {
    match call(args) {
        Ok(code) => code,
        Err(e) => report_chain(&e),
    }
}

/// `elicit call`: start the server, connect, pick the tool and its
/// arguments, call it, print the result.
fn call(args: &CallArgs) -> anyhow::Result<i32> {
    use anyhow::Context;
    let scripted = load_answers(&args.answers)?;
    let mut person = person(&args.answers, args.prompt_timeout);
    elicit::terminal::tty::install_interrupt_handler();
    elicit::transport::process_group::exit_on_signals();
    let log = args.log.as_deref().map(MessageLog::create).transpose()?;
    let target = ServerTarget::from_args(args.url.as_deref(), &args.command)?;
    let server = transport::connect(
        &target,
        ConnectOptions {
            server_log: args.server_log.clone(),
            log,
        },
    )
    .context("starting the server")?;
    let picker = match &person {
        Person::Terminal(_) => true,
        Person::Nobody(_) => false,
    };
    let mut handler = ElicitHandler::new(&scripted, person.resolver());
    let mut client = McpClient::connect(
        server,
        args.protocol,
        Some(args.timeout),
        args.verbose,
        &mut handler,
    )
    .context("connecting to the server")?;
    if let Some(name) = &handler.server_name {
        if args.verbose {
            eprintln!(
                "elicit: connected to {} ({:?})",
                elicit::sanitize::sanitize_line(name),
                client.generation
            );
        }
    }
    let tools = client
        .list_tools(&mut handler)
        .context("listing the server's tools")?;
    let choices = tool_choices(&tools);
    let seen_early = handler.seen_fields.clone();
    let tool = match &args.tool {
        Some(t) => t.clone(),
        None if picker => {
            drop(handler);
            let Person::Terminal(term) = &person else {
                unreachable!("picker is true only with a terminal")
            };
            if choices.is_empty() {
                return Err(ElicitError::Server("the server lists no tools".into()).into());
            }
            let labels: Vec<String> = choices.iter().map(|(_, label)| label.clone()).collect();
            match term.pick("Which tool?", &labels)? {
                Some(i) => choices[i].0.clone(),
                None => return Err(ElicitError::Usage("no tool picked".into()).into()),
            }
        }
        None => {
            let names: Vec<&str> = choices.iter().map(|(n, _)| n.as_str()).collect();
            return Err(ElicitError::Usage(format!(
                "no --tool given and no terminal to pick one; the server's tools: {}",
                names.join(", ")
            ))
            .into());
        }
    };
    let mut handler = ElicitHandler::new(&scripted, person.resolver());
    handler.server_name = client.server_name();
    handler.seen_fields = seen_early;
    let schema = input_schema(&tools, &tool);
    if schema.is_none() && args.verbose {
        eprintln!(
            "elicit: the server does not list a tool named {}; calling it anyway",
            elicit::sanitize::sanitize_line(&tool)
        );
    }
    let mut arguments = tool_arguments(schema, args.args_json.as_deref(), &args.arg)?;
    // A tool picked on the terminal gets its arguments asked the same way.
    if args.tool.is_none() && args.args_json.is_none() && args.arg.is_empty() {
        if let Some(schema) = schema {
            if let Some(asked) = ask_arguments(&tool, schema, &mut handler)? {
                arguments = asked;
            }
        }
    }
    let result = call_tool(&mut client, &mut handler, &tool, &arguments);
    for name in handler.unused_answers() {
        super::warn(&elicit::session::handler::unused_answer_warning(&name));
    }
    let result = result.with_context(|| {
        format!(
            "calling the tool {}",
            elicit::sanitize::sanitize_line(&tool)
        )
    })?;
    client.server.close(Duration::from_secs(2));
    let code = print_line(&json_text(&result, args.pretty));
    if code != 0 {
        return Ok(code);
    }
    Ok(
        if result.get("isError").and_then(|e| e.as_bool()) == Some(true) {
            1
        } else {
            0
        },
    )
}
