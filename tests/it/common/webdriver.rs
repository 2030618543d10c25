//! The one WebDriver client of the tests: headless Chromium through
//! chromedriver (W3C WebDriver over plain HTTP+JSON, on 127.0.0.1). Both
//! the integration tests (`tests/it`, as `common::page`'s) and the rmcp
//! adapter's page tests (`integrations/rmcp/tests`, through `#[path]`)
//! drive the browser page with it.
//!
//! The module that includes this file provides `install_browser()`, run
//! before chromedriver starts (the tests here install Chromium on demand;
//! the rmcp tests have checked for it already). The including crate needs
//! `ureq`, `serde_json` and `base64`.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};

/// How long the browser may take over anything before the test fails.
pub const WAIT: Duration = Duration::from_secs(60);

/// A headless Chromium session through chromedriver; both end when dropped.
pub struct Browser {
    pub driver: Child,
    pub base: String,
    pub agent: ureq::Agent,
}

impl Browser {
    pub fn start() -> Browser {
        super::install_browser();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(WAIT))
            .build()
            .into();
        let mut b = Browser {
            driver,
            base: format!("http://127.0.0.1:{port}"),
            agent,
        };
        let deadline = Instant::now() + WAIT;
        while b.raw("GET", "/status", None).1["value"]["ready"] != json!(true) {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": which("chromium"),
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=900,2100",
                         "--lang=en-US", "--no-first-run", "--no-default-browser-check",
                         // Made-up names for the rebinding and other-origin
                         // attacks, all on this machine.
                         "--host-resolver-rules=MAP rebind.test 127.0.0.1, MAP attacker.test 127.0.0.1"]
            }
        }}});
        let (status, v) = b.raw("POST", "/session", Some(caps));
        assert_eq!(status, 200, "no browser session: {v}");
        let id = v["value"]["sessionId"].as_str().unwrap().to_string();
        b.base = format!("{}/session/{id}", b.base);
        b
    }

    /// A WebDriver request: its status (0 when it failed) and its body.
    pub fn raw(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        let resp = match method {
            "GET" => self.agent.get(&url).call(),
            "DELETE" => self.agent.delete(&url).call(),
            _ => self
                .agent
                .post(&url)
                .header("Content-Type", "application/json")
                .send(body.unwrap_or(json!({})).to_string().as_bytes()),
        };
        match resp {
            Ok(mut r) => {
                let status = r.status().as_u16();
                let text = r.body_mut().read_to_string().unwrap_or_default();
                (status, serde_json::from_str(&text).unwrap_or(Value::Null))
            }
            Err(e) => (0, json!({"error": e.to_string()})),
        }
    }

    /// A WebDriver command that must succeed; its `value`.
    pub fn cmd(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (status, v) = self.raw(method, path, body);
        assert_eq!(status, 200, "WebDriver {method} {path}: {v}");
        v["value"].clone()
    }

    pub fn goto(&self, url: &str) {
        self.cmd("POST", "/url", Some(json!({ "url": url })));
    }

    /// The element `css` selects, waited for.
    pub fn find(&self, css: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let (status, v) = self.raw(
                "POST",
                "/element",
                Some(json!({"using": "css selector", "value": css})),
            );
            if status == 200 {
                return element_id(&v["value"]);
            }
            assert!(
                Instant::now() < deadline,
                "no element {css:?}: {v}; the page says:\n{}",
                self.body_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn count(&self, css: &str) -> usize {
        self.cmd(
            "POST",
            "/elements",
            Some(json!({"using": "css selector", "value": css})),
        )
        .as_array()
        .map_or(0, Vec::len)
    }

    pub fn click(&self, css: &str) {
        let el = self.find(css);
        self.cmd("POST", &format!("/element/{el}/click"), None);
    }

    /// Clears the field and types `text` into it, key by key.
    pub fn type_into(&self, css: &str, text: &str) {
        let el = self.find(css);
        self.cmd("POST", &format!("/element/{el}/clear"), None);
        self.cmd(
            "POST",
            &format!("/element/{el}/value"),
            Some(json!({ "text": text })),
        );
    }

    /// Runs `script` in the page with `args`; what it returns.
    pub fn exec(&self, script: &str, args: Value) -> Value {
        self.cmd(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": args})),
        )
    }

    pub fn text(&self, css: &str) -> String {
        let el = self.find(css);
        self.cmd("GET", &format!("/element/{el}/text"), None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The page's text (empty while it has no body, or the browser fails:
    /// it is what a failure shows).
    pub fn body_text(&self) -> String {
        let script = "return document.body ? document.body.innerText : ''";
        let (_, v) = self.raw(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        );
        v["value"].as_str().unwrap_or_default().to_string()
    }

    /// Waits until the script returns true.
    pub fn wait_for(&self, what: &str, script: &str) {
        let deadline = Instant::now() + WAIT;
        while self.exec(script, json!([])) != json!(true) {
            assert!(
                Instant::now() < deadline,
                "waited in vain for {what}; the page says:\n{}",
                self.body_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The address the tab shows now (after the one-time address's
    /// redirect: the page's own).
    pub fn location(&self) -> String {
        self.exec("return location.href", json!([]))
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The value of the browser's cookie `name` for the current page
    /// (WebDriver sees HttpOnly cookies too).
    pub fn cookie(&self, name: &str) -> Option<String> {
        let (status, v) = self.raw("GET", &format!("/cookie/{name}"), None);
        (status == 200).then(|| v["value"]["value"].as_str().unwrap_or_default().to_string())
    }

    pub fn screenshot(&self, path: &Path) {
        let b64 = self.cmd("GET", "/screenshot", None);
        let png = base64::engine::general_purpose::STANDARD
            .decode(b64.as_str().unwrap())
            .unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.raw("DELETE", "", None);
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// The id in a WebDriver element reference.
pub fn element_id(v: &Value) -> String {
    v["element-6066-11e4-a52e-4f735466cecf"]
        .as_str()
        .unwrap_or_else(|| panic!("not an element reference: {v}"))
        .to_string()
}

/// Where `program` is on PATH (empty when it is not).
pub fn which(program: &str) -> String {
    let out = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
