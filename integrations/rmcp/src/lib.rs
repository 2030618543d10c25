//! Answer MCP elicitations in an [rmcp] client with elicit, in process.
//!
//! [`ElicitHandler`] implements rmcp's [`ClientHandler`]: it declares the
//! elicitation capability (form and URL modes, or those
//! [`Options::modes`] keeps) and answers each `elicitation/create` as the
//! `elicit` command does: scripted answers ([`Options::answer`]), then
//! answer rules ([`Options::answers_file`]), then a person: the terminal
//! when there is one, else the local browser page ([`Ui`]). rmcp's
//! `call_tool` answers 2026-07-28 `input_required` rounds through the same
//! handler.
//!
//! ```no_run
//! use rmcp::{model::CallToolRequestParams, transport::TokioChildProcess, ServiceExt};
//! use elicit_rmcp::{ElicitHandler, Options};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let handler = ElicitHandler::new(Options::from_env()?)?;
//! let server = tokio::process::Command::new("my-mcp-server");
//! let client = handler.serve(TokioChildProcess::new(server)?).await?;
//! let _result = client.call_tool(CallToolRequestParams::new("deploy")).await?;
//! # Ok(()) }
//! ```
//!
//! The terminal and the page block while a person answers: they run on
//! tokio's blocking pool ([`tokio::task::spawn_blocking`]), so the client
//! keeps serving other messages meanwhile. Several elicitations at once are
//! asked one after another on the terminal, side by side on the page.
//!
//! Opening the terminal installs elicit's Ctrl-C handler: a Ctrl-C at a
//! prompt cancels that elicitation instead of ending the process.
//!
//! The browser page is one per process (one listener on 127.0.0.1, one
//! list of pending elicitations): the first handler that uses it sets its
//! browser command, `no_open`, prompt timeout and server name. Answer rules
//! match on the server's name (its `serverInfo`), the mode, message, fields
//! and URL host; not on the tool, which rmcp does not tell a handler.
//!
//! [rmcp]: https://docs.rs/rmcp

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod convert;
mod error;
mod options;

use std::sync::{Arc, Mutex, OnceLock};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult as RmcpResult,
    ElicitationCapability, ErrorData, FormElicitationCapability, Implementation,
    UrlElicitationCapability,
};
use rmcp::service::{RequestContext, RoleClient};
use rmcp::ClientHandler;

use elicit_cassette::answers::{AnswerRules, Answering};
use elicit_core::elicitation::answer_rules::{RuleReport, Unmatched};
use elicit_core::elicitation::answers::ScriptedAnswers;
use elicit_core::elicitation::protocol::{ElicitResult, ElicitationParams};
use elicit_core::elicitation::resolve::{self, Elicitation, NoTerminal, Resolver, SchemaCache};
use elicit_core::error::ElicitError;
use elicit_ui::page::BrowserResolver;
use elicit_ui::person;
use elicit_ui::terminal::TerminalResolver;

pub use convert::{to_elicit_params, to_rmcp_result};
/// An elicitation's outcome, for [`Options::fallback`].
pub use elicit_core::elicitation::protocol::Action;
pub use elicit_session::mcp::modes::ElicitModes;
pub use error::Error;
pub use options::{Options, Ui};

/// Who settles what scripted answers and rules leave open, chosen at the
/// first elicitation that needs one and kept.
enum Person {
    /// One terminal asks one elicitation at a time.
    Terminal(Mutex<TerminalResolver>),
    /// The page shows every pending elicitation: each gets its own handle.
    Page(BrowserResolver),
    Nobody(NoTerminal),
    Custom(Mutex<Box<dyn Resolver + Send>>),
}

struct Inner {
    options: Options,
    scripted: ScriptedAnswers,
    rules: Option<Arc<AnswerRules>>,
    person: OnceLock<Person>,
}

/// An rmcp [`ClientHandler`] that answers elicitations with elicit.
///
/// Cheap to clone (clones share the scripted answers, rules and the
/// person). Everything but `create_elicitation` keeps rmcp's default;
/// [`ElicitHandler::resolve`] is there for a handler of your own to call.
#[derive(Clone)]
pub struct ElicitHandler {
    inner: Arc<Inner>,
    config: ClientConfig,
}

impl std::fmt::Debug for ElicitHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElicitHandler")
            .field("options", &self.inner.options)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl ElicitHandler {
    /// A handler answering as `options` say. Reads the answer rules file
    /// now, so a bad one fails here rather than at the first elicitation.
    pub fn new(options: Options) -> Result<Self, Error> {
        let scripted = ScriptedAnswers::parse(&options.answers, |path: &str| {
            elicit_platform::fs::read_regular_file(
                path,
                elicit_core::elicitation::protocol::MAX_MESSAGE_BYTES,
            )
        })
        .map_err(Error::Answers)?;
        let rules = options
            .answers_file
            .as_deref()
            .map(|path| {
                AnswerRules::load(path)
                    .map(Arc::new)
                    .map_err(|e| Error::Rules {
                        path: path.to_path_buf(),
                        message: e.to_string(),
                    })
            })
            .transpose()?;
        let config = ClientConfig::new(
            capabilities(options.modes),
            Implementation::new("elicit-rmcp", env!("CARGO_PKG_VERSION")),
        );
        Ok(ElicitHandler {
            inner: Arc::new(Inner {
                options,
                scripted,
                rules,
                person: OnceLock::new(),
            }),
            config,
        })
    }

    /// [`ElicitHandler::new`] with [`Options::from_env`].
    pub fn from_env() -> Result<Self, Error> {
        ElicitHandler::new(Options::from_env()?)
    }

    /// Answers with `resolver` where a person would be asked (after the
    /// scripted answers and rules), instead of the terminal or page: any
    /// implementation of elicit's resolver trait (it gets the contract's
    /// Request, see [`elicit_core::elicitation::contract::elicitation_to_request`]). It runs on the
    /// blocking pool, one elicitation at a time.
    pub fn with_resolver(self, resolver: impl Resolver + Send + 'static) -> Self {
        let person = OnceLock::new();
        let _ = person.set(Person::Custom(Mutex::new(Box::new(resolver))));
        let inner = Inner {
            options: self.inner.options.clone(),
            scripted: self.inner.scripted.clone(),
            rules: self.inner.rules.clone(),
            person,
        };
        ElicitHandler {
            inner: Arc::new(inner),
            config: self.config,
        }
    }

    /// The `initialize` params sent to the server: `config`, with its
    /// elicitation capability set to the declared modes.
    pub fn with_client_config(mut self, mut config: ClientConfig) -> Self {
        config.capabilities.elicitation = capabilities(self.inner.options.modes).elicitation;
        self.config = config;
        self
    }

    /// The `initialize` params this handler sends (`clientInfo` is
    /// `elicit-rmcp` unless [`ElicitHandler::with_client_config`] set it).
    pub fn client_config(&self) -> &ClientConfig {
        &self.config
    }

    /// The options it answers with.
    pub fn options(&self) -> &Options {
        &self.inner.options
    }

    /// Resolves one elicitation: scripted answers, answer rules, then a
    /// person; the answer is checked against the form's schema. `server`
    /// is the server's name (its `serverInfo.name`) for the header and for
    /// rules that match on it. Blocking work runs on tokio's blocking pool.
    pub async fn resolve(
        &self,
        params: ElicitRequestParams,
        server: Option<String>,
    ) -> Result<RmcpResult, Error> {
        let params = to_elicit_params(&params)?;
        let inner = self.inner.clone();
        let result = tokio::task::spawn_blocking(move || inner.resolve(params, server))
            .await
            .map_err(|e| Error::Resolver(e.to_string()))?;
        let result = match result {
            Err(e) if e.is_nobody_to_ask() => match self.inner.options.fallback {
                Some(action) => ElicitResult::new(action),
                None => return Err(e),
            },
            other => other?,
        };
        to_rmcp_result(&result)
    }
}

impl ElicitHandler {
    /// [`ElicitHandler::resolve`], given up with [`Error::Cancelled`] when
    /// `ct` is cancelled (the server cancelled its request). A person who
    /// was being asked may still answer; nothing is sent then.
    pub async fn resolve_until(
        &self,
        ct: &tokio_util::sync::CancellationToken,
        params: ElicitRequestParams,
        server: Option<String>,
    ) -> Result<RmcpResult, Error> {
        tokio::select! {
            result = self.resolve(params, server) => result,
            () = ct.cancelled() => Err(Error::Cancelled),
        }
    }
}

/// The client capabilities declaring `modes` (none: no elicitation).
fn capabilities(modes: ElicitModes) -> ClientCapabilities {
    let mut caps = ClientCapabilities::default();
    if modes.any() {
        let mut e = ElicitationCapability::new();
        if modes.form {
            e = e.with_form(FormElicitationCapability::new());
        }
        if modes.url {
            e = e.with_url(UrlElicitationCapability::new());
        }
        caps.elicitation = Some(e);
    }
    caps
}

impl Inner {
    /// The blocking part: on the blocking pool.
    fn resolve(
        &self,
        params: ElicitationParams,
        server: Option<String>,
    ) -> Result<ElicitResult, Error> {
        let modes = self.options.modes;
        let mode = params.mode();
        if !modes.declares(Some(mode.as_str())) {
            return Err(Error::UndeclaredMode {
                mode: mode.as_str(),
                declared: modes.describe(),
            });
        }
        let mut cache = SchemaCache::single_use();
        let mut e = Elicitation::prepare(params, &mut cache).map_err(Error::Elicit)?;
        e.server = server;
        if let Some(form) = &e.form {
            resolve::print_warnings(form.warnings_once());
        }
        let result = match self.person() {
            Person::Page(page) => self.answer(&e, page.clone()),
            Person::Nobody(nobody) => self.answer(&e, nobody.clone()),
            Person::Terminal(t) => {
                let mut t = t.lock().unwrap_or_else(|p| p.into_inner());
                self.answer(&e, &mut *t)
            }
            Person::Custom(c) => {
                let mut c = c.lock().unwrap_or_else(|p| p.into_inner());
                self.answer(&e, &mut *c)
            }
        };
        result.map_err(Error::Elicit)
    }

    /// Scripted answers, then the rules in front of `person`.
    fn answer<R: Resolver>(&self, e: &Elicitation, person: R) -> Result<ElicitResult, ElicitError> {
        let mut person = Answering::new()
            .rules(self.rules.clone())
            .unmatched(Unmatched::under_no_input(self.options.no_input))
            .report(RuleReport::under_verbose(self.options.verbose))
            .in_front_of(person);
        // Not strict: a scripted value for a field this form lacks may be
        // for another form of the session (as in `elicit call`).
        resolve::resolve(e, &self.scripted, false, &mut person)
    }

    fn person(&self) -> &Person {
        self.person.get_or_init(|| choose_person(&self.options))
    }
}

/// Who answers, by [`Ui`], as the command chooses
/// ([`elicit_ui::person::choose`], in its words): the terminal when one
/// opens (`Auto`, `Terminal`), else the page (`Auto`: only outside CI and
/// when a browser really opens it, unless `no_open`; `Browser`: always);
/// nobody under `no_input`.
fn choose_person(o: &Options) -> Person {
    match person::choose(&o.person()) {
        person::Person::Terminal(t) => Person::Terminal(Mutex::new(t)),
        person::Person::Page(p) => Person::Page(p),
        person::Person::Nobody(n) => Person::Nobody(n),
    }
}

impl ClientHandler for ElicitHandler {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<RmcpResult, ErrorData> {
        let server = context
            .peer
            .peer_info()
            .and_then(|info| info.server_info.as_ref().map(|s| s.name.clone()));
        self.resolve_until(&context.ct, request, server)
            .await
            .map_err(ErrorData::from)
    }

    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elicit_core::elicitation::contract::Answer;
    use elicit_core::elicitation::resolve::Pending;
    use serde_json::json;

    fn form(schema: serde_json::Value) -> ElicitRequestParams {
        serde_json::from_value(json!({"mode":"form","message":"Who?","requestedSchema":schema}))
            .unwrap()
    }

    fn url() -> ElicitRequestParams {
        serde_json::from_value(
            json!({"mode":"url","message":"Sign in","url":"https://example.com/x","elicitationId":"e1"}),
        )
        .unwrap()
    }

    fn name_schema() -> serde_json::Value {
        json!({"type":"object","properties":{"name":{"type":"string"},"n":{"type":"integer","maximum":9}},"required":["name"]})
    }

    fn nobody() -> Options {
        Options::default().no_input(true)
    }

    #[tokio::test]
    async fn scripted_answers_fill_the_form_and_are_checked() {
        let h = ElicitHandler::new(nobody().answer("name=Ada").answer("n=3")).unwrap();
        let r = h.resolve(form(name_schema()), None).await.unwrap();
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"action":"accept","content":{"name":"Ada","n":3}})
        );
        let h = ElicitHandler::new(nobody().answer("name=Ada").answer("n=30")).unwrap();
        let e = h.resolve(form(name_schema()), None).await.unwrap_err();
        assert!(
            matches!(e, Error::Elicit(ElicitError::Validation(_))),
            "{e}"
        );
        assert_eq!(e.to_error_data().code.0, -32603);
    }

    #[tokio::test]
    async fn nobody_to_ask_fails_unless_a_fallback_answers() {
        let h = ElicitHandler::new(nobody()).unwrap();
        let e = h.resolve(form(name_schema()), None).await.unwrap_err();
        assert!(e.is_nobody_to_ask(), "{e}");
        let e = h.resolve(url(), None).await.unwrap_err();
        assert!(e.is_nobody_to_ask(), "{e}");
        let h = ElicitHandler::new(nobody().fallback(Action::Decline)).unwrap();
        let r = h.resolve(form(name_schema()), None).await.unwrap();
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"action":"decline"})
        );
    }

    #[tokio::test]
    async fn a_url_accept_carries_no_content() {
        let h = ElicitHandler::new(nobody().answer("accept")).unwrap();
        let r = h.resolve(url(), None).await.unwrap();
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"action":"accept"})
        );
    }

    #[tokio::test]
    async fn undeclared_modes_are_refused_with_invalid_params() {
        let o = nobody()
            .answer("accept")
            .modes(ElicitModes::parse("form").unwrap());
        let h = ElicitHandler::new(o).unwrap();
        assert_eq!(
            serde_json::to_value(&h.client_config().capabilities).unwrap(),
            json!({"elicitation":{"form":{}}})
        );
        let e = h.resolve(url(), None).await.unwrap_err();
        assert!(
            matches!(e, Error::UndeclaredMode { mode: "url", .. }),
            "{e}"
        );
        assert_eq!(e.to_error_data().code.0, -32602);
        let none = ElicitHandler::new(nobody().modes(ElicitModes::NONE)).unwrap();
        assert_eq!(
            serde_json::to_value(&none.client_config().capabilities).unwrap(),
            json!({})
        );
        let both = ElicitHandler::new(nobody()).unwrap();
        assert_eq!(
            serde_json::to_value(&both.client_config().capabilities).unwrap(),
            json!({"elicitation":{"form":{},"url":{}}})
        );
    }

    #[test]
    fn bad_scripted_answers_and_rules_fail_at_construction() {
        let e = ElicitHandler::new(Options::default().answer("no equals sign")).unwrap_err();
        assert!(matches!(e, Error::Answers(_)), "{e}");
        let e = ElicitHandler::new(Options::default().answers_file("/nonexistent/rules.json"))
            .unwrap_err();
        assert!(matches!(e, Error::Rules { .. }), "{e}");
    }

    #[test]
    fn the_person_is_chosen_as_the_command_chooses() {
        use elicit_ui::person::Choice;
        fn decide<T>(o: &Options, open: impl FnOnce() -> Result<T, String>) -> Choice<T> {
            person::decide(&o.person(), open)
        }
        let no_tty = || Err::<(), _>("no terminal (/dev/tty: No such device)".to_string());
        let tty = || Ok::<(), String>(());
        let page = |c: Choice<()>| match c {
            Choice::Page { unattended } => Some(unattended),
            _ => None,
        };
        let o = Options::default();
        assert!(matches!(decide(&o, tty), Choice::Terminal(())));
        assert_eq!(
            page(decide(&o, no_tty)),
            Some(true),
            "only if a browser opens"
        );
        assert_eq!(page(decide(&o.clone().no_open(true), no_tty)), Some(false));
        match decide(&o.clone().ci(true), no_tty) {
            Choice::Nobody(why) => assert!(
                why.contains("no terminal") && why.contains("CI is set"),
                "{why}"
            ),
            other => panic!("{other:?}"),
        }
        // CI does not stop the page when it was asked for.
        assert_eq!(
            page(decide(&o.clone().ci(true).no_open(true), no_tty)),
            Some(false)
        );
        assert_eq!(
            page(decide(&o.clone().ci(true).ui(Ui::Browser), tty)),
            Some(false)
        );
        let terminal = o.clone().ui(Ui::Terminal);
        assert!(matches!(decide(&terminal, tty), Choice::Terminal(())));
        assert!(
            matches!(decide(&terminal, no_tty), Choice::Nobody(why) if why.starts_with("no terminal"))
        );
        let never = || -> Result<(), String> { panic!("the terminal is not tried under no_input") };
        assert!(matches!(
            decide(&o.clone().no_input(true), never),
            Choice::Nobody(_)
        ));
    }

    /// A person that records what it was asked and accepts with a name.
    /// A person who answers only when told to.
    struct Slow(std::sync::mpsc::Receiver<()>);

    impl Resolver for Slow {
        fn resolve(&mut self, e: &Elicitation, _: Pending) -> Result<Answer, ElicitError> {
            let _ = self.0.recv_timeout(std::time::Duration::from_secs(60));
            Ok(Answer::from_action(&e.request.id, Action::Accept, None))
        }
    }

    #[tokio::test]
    async fn a_cancelled_request_stops_waiting_for_the_person() {
        let (release, wait) = std::sync::mpsc::channel();
        let h = ElicitHandler::new(Options::default())
            .unwrap()
            .with_resolver(Slow(wait));
        let ct = tokio_util::sync::CancellationToken::new();
        let mut asking = {
            let (h, ct) = (h.clone(), ct.clone());
            tokio::spawn(async move { h.resolve_until(&ct, url(), None).await })
        };
        // Still waiting for the person: it does not end by itself.
        let early = tokio::time::timeout(std::time::Duration::from_millis(200), &mut asking).await;
        assert!(early.is_err(), "answered without the person: {early:?}");
        ct.cancel();
        let got = tokio::time::timeout(std::time::Duration::from_secs(10), asking)
            .await
            .expect("cancel did not stop the wait")
            .unwrap();
        assert!(matches!(got, Err(Error::Cancelled)), "{got:?}");
        // The person's thread ends once they answer.
        release.send(()).unwrap();
    }

    /// What the fake person was asked: the server's name, the fields.
    type Asked = Arc<Mutex<Vec<(Option<String>, Vec<String>)>>>;

    struct Fake(Asked);

    impl Resolver for Fake {
        fn resolve(&mut self, e: &Elicitation, pending: Pending) -> Result<Answer, ElicitError> {
            let (mut data, missing) = match pending {
                Pending::Form { values, missing } => (values, missing),
                Pending::Url => (Default::default(), vec!["(url)".into()]),
            };
            self.0.lock().unwrap().push((e.server.clone(), missing));
            data.insert("name".into(), json!("Grace"));
            Ok(Answer::accepted(&e.request.id, data))
        }
    }

    #[tokio::test]
    async fn the_person_gets_what_scripted_answers_leave_and_the_server_name() {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let h = ElicitHandler::new(Options::default().answer("n=4"))
            .unwrap()
            .with_resolver(Fake(asked.clone()));
        let r = h
            .resolve(form(name_schema()), Some("deploy-bot".into()))
            .await
            .unwrap();
        // The person's values are checked too: the fake's name, the
        // scripted n, in schema order.
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"action":"accept","content":{"name":"Grace","n":4}})
        );
        assert_eq!(
            *asked.lock().unwrap(),
            vec![(Some("deploy-bot".to_string()), vec!["name".to_string()])]
        );
    }
}
