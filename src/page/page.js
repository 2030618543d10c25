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

  function refresh() {
    return fetch(base, { cache: "no-store", credentials: "same-origin" })
      .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.text(); })
      .then(function (text) {
        var doc = new DOMParser().parseFromString(text, "text/html");
        version = doc.body.getAttribute("data-version");
        merge(doc);
      });
  }

  function watch() {
    fetch(base + "events?since=" + encodeURIComponent(version), { cache: "no-store", credentials: "same-origin" })
      .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.json(); })
      .then(function (news) {
        status.textContent = "";
        if (String(news.version) !== String(version)) return refresh();
      })
      .then(function () { setTimeout(watch, 0); })
      .catch(function () {
        status.textContent = "elicit is not serving this page now: nothing is waiting, or the session ended. It comes back here when asked again.";
        setTimeout(watch, 1000);
      });
  }
  watch();
})();
