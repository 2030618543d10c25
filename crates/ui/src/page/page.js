// elicit's page: keeps the list current (new requests appear, answered
// ones leave) without losing what is typed in the forms still open, counts
// deadlines down, and toggles masked fields. Everything works without it
// by reloading the page.
(function () {
  "use strict";
  var body = document.body;
  var base = body.getAttribute("data-base");
  var version = body.getAttribute("data-version");
  var status = document.getElementById("status");
  var loaded = Date.now();
  // A one-shot elicit has ended once its answers are sent: nothing more
  // comes, so the page neither waits for news nor says elicit is gone.
  var finished = body.hasAttribute("data-finished");

  document.addEventListener("click", function (ev) {
    var b = ev.target.closest && ev.target.closest("button[data-reveal]");
    if (!b) return;
    var input = document.getElementById(b.getAttribute("data-reveal"));
    if (!input) return;
    var show = input.type === "password";
    input.type = show ? "text" : "password";
    b.setAttribute("aria-pressed", show ? "true" : "false");
    b.textContent = show ? "Hide" : "Show";
  });

  // A form is sent once: a second press while the first is on its way is
  // ignored (elicit itself refuses a second answer to the same request).
  document.addEventListener("submit", function (ev) {
    var f = ev.target;
    if (f.getAttribute("data-sent")) { ev.preventDefault(); return; }
    f.setAttribute("data-sent", "1");
  });

  function tick() {
    var now = Date.now();
    document.querySelectorAll("[data-left-ms]").forEach(function (el) {
      if (!el.hasAttribute("data-until")) {
        el.setAttribute("data-until", String(loaded + Number(el.getAttribute("data-left-ms"))));
      }
      var left = Math.max(0, Math.ceil((Number(el.getAttribute("data-until")) - now) / 1000));
      el.textContent = left > 0
        ? "Answer within " + left + "s, or the request is cancelled."
        : "Time is up: the request was cancelled.";
    });
  }
  setInterval(tick, 500);
  tick();

  function merge(doc) {
    var list = document.getElementById("pending");
    var fresh = doc.getElementById("pending");
    if (!list || !fresh) return;
    var keep = {};
    Array.prototype.forEach.call(fresh.children, function (s) {
      var id = s.getAttribute("data-id");
      keep[id] = true;
      if (!document.getElementById("e" + id)) {
        var node = document.importNode(s, true);
        node.querySelectorAll("[data-left-ms]").forEach(function (el) {
          el.setAttribute("data-until", String(Date.now() + Number(el.getAttribute("data-left-ms"))));
        });
        list.appendChild(node);
      }
    });
    Array.prototype.slice.call(list.children).forEach(function (s) {
      if (!keep[s.getAttribute("data-id")]) s.remove();
    });
    ["recent", "empty"].forEach(function (id) {
      var mine = document.getElementById(id), theirs = doc.getElementById(id);
      if (mine && theirs) mine.replaceWith(document.importNode(theirs, true));
    });
    document.title = doc.title;
  }

  // Every response the script uses must prove it comes from this elicit:
  // an HMAC of a fresh challenge, keyed with the secret this page was
  // served with (the script never sends it). Whatever else may answer at
  // this address one day (another user's program, once elicit has exited
  // and the port is free) cannot, and nothing it sends is shown.
  var key = body.getAttribute("data-key");
  body.removeAttribute("data-key");
  var hmac = (window.crypto && crypto.subtle && key)
    ? crypto.subtle.importKey("raw", new TextEncoder().encode(key),
        { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
    : Promise.reject(new Error("no WebCrypto"));
  hmac.catch(function () {});

  function hex(buf) {
    return Array.prototype.map.call(new Uint8Array(buf), function (b) {
      return ("0" + b.toString(16)).slice(-2);
    }).join("");
  }

  function Impostor() {}

  // fetch(url), resolved only with a response that carries the proof.
  function proven(url) {
    var challenge = hex(crypto.getRandomValues(new Uint8Array(16)));
    return fetch(url, {
      cache: "no-store", credentials: "same-origin", redirect: "error",
      headers: { "X-Elicit-Challenge": challenge }
    }).then(function (r) {
      return hmac.then(function (k) {
        return crypto.subtle.sign("HMAC", k, new TextEncoder().encode(challenge));
      }).then(function (sig) {
        if (r.headers.get("X-Elicit-Proof") !== hex(sig)) {
          // A busy listener may answer before reading the request.
          if (r.status === 503) throw new Error("busy");
          throw new Impostor();
        }
        if (!r.ok) throw new Error(String(r.status));
        return r;
      });
    });
  }

  // Until a proven answer comes back, nothing on the page can be sent:
  // the address may no longer be elicit's.
  function sendable(yes) {
    document.querySelectorAll("#pending button, #pending input, #pending select, #pending textarea")
      .forEach(function (el) { el.disabled = !yes; });
  }

  // For good: the forms leave the page and nothing is asked again.
  function stop(text) {
    var list = document.getElementById("pending");
    if (list) list.replaceChildren();
    status.textContent = text;
  }

  function refresh() {
    return proven(base)
      .then(function (r) { return r.text(); })
      .then(function (text) {
        var doc = new DOMParser().parseFromString(text, "text/html");
        version = doc.body.getAttribute("data-version");
        merge(doc);
        if (doc.body.hasAttribute("data-finished")) finished = true;
      });
  }

  var failures = 0;
  var disabled = false;
  function watch() {
    proven(base + "events?since=" + encodeURIComponent(version))
      .then(function (r) { return r.json(); })
      .then(function (news) {
        if (String(news.version) !== String(version)) return refresh();
      })
      .then(function () {
        failures = 0;
        status.textContent = "";
        if (disabled) { disabled = false; sendable(true); }
        if (!finished) setTimeout(watch, 0);
      })
      .catch(function (err) {
        if (err instanceof Impostor) {
          stop("Something that is not this elicit answers at this page's address: this page stops here. Close it; elicit gives a new address with its next request.");
          return;
        }
        failures += 1;
        disabled = true;
        sendable(false);
        // Not answering (ended, or too busy just now): ask again, less and
        // less often, with nothing sendable until a proven answer.
        status.textContent = failures > 5
          ? "elicit is not answering this page; it may have ended. Nothing can be sent from here until it answers again."
          : "elicit is not answering this page just now; trying again.";
        setTimeout(watch, Math.min(1000 * Math.pow(2, Math.min(failures, 6) - 1), 30000));
      });
  }
  if (!finished) watch();
})();
