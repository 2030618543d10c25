//! The README's example: server-everything's form, answered by elicit
//! (`ELICIT_UI`, `ELICIT_ANSWERS`, … as for the `elicit` command).
//! `cargo run --example everything` (needs npx).
use elicit_rmcp::{ElicitHandler, Options};
use rmcp::{model::CallToolRequestParams, transport::TokioChildProcess, ServiceExt};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let handler = ElicitHandler::new(Options::from_env()?)?; // ELICIT_UI, ELICIT_ANSWERS, …
    let mut server = tokio::process::Command::new("npx");
    server.args(["-y", "@modelcontextprotocol/server-everything", "stdio"]);
    let client = handler.serve(TokioChildProcess::new(server)?).await?;
    let result = client
        .call_tool(CallToolRequestParams::new("trigger-elicitation-request"))
        .await?;
    println!("{}", serde_json::to_string_pretty(&result)?);
    client.cancel().await?;
    Ok(())
}
