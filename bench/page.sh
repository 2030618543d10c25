#!/usr/bin/env bash
# Browser page benchmark (`--ui browser`), on server-everything's 13-field form
# (fixtures/server-everything/form.request.json). Not a test: run it by hand.
#
#   bench/page.sh                 # build release, measure, print a markdown table
#   NO_BUILD=1 bench/page.sh      # measure target/release/elicit as it is
#   ELICIT=target/debug/elicit NO_BUILD=1 bench/page.sh
#   RUNS=50 LOADS=500 bench/page.sh
#
# (a) arrival to page ready: an elicit waiting on its stdin gets the request
#     (written, stdin closed: t0) and says the page is served (the address
#     on stderr, printed once the listener is bound: t1). Side by side, in
#     alternating runs, the same request answered by script (-a) from the
#     same arrival to its result on stdout: the page's own cost is the
#     difference. Browser start is not counted. Target: under 20 ms.
# (b) page load: GET of the page (a new connection each, the whole body
#     read), against a GET of a 404 on the same listener (the same request
#     with no page made), alternating. Target: under 10 ms.
#
# Needs python3. Timings are wall clock on whatever else the machine does.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${NO_BUILD:-}" ]]; then
  cargo build --release -q
fi
ELICIT="${ELICIT:-target/release/elicit}" RUNS="${RUNS:-40}" LOADS="${LOADS:-400}" \
  python3 - <<'PY'
import http.client, os, re, statistics, subprocess, time, urllib.parse

bin = os.environ["ELICIT"]
runs = int(os.environ["RUNS"])
loads = int(os.environ["LOADS"])
req = open("fixtures/server-everything/form.request.json", "rb").read()
env = dict(os.environ, NO_COLOR="1")
for k in ("ELICIT_BROWSER", "BROWSER", "ELICIT_UI"):
    env.pop(k, None)

def spawn(args):
    p = subprocess.Popen([bin, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, start_new_session=True)
    time.sleep(0.05)  # up and waiting on its stdin
    return p

def arrive(p):
    t0 = time.perf_counter()
    p.stdin.write(req)
    p.stdin.close()
    return t0

def page_ready():
    p = spawn(["--ui", "browser", "--no-open"])
    t0 = arrive(p)
    line = p.stderr.readline().decode()
    t1 = time.perf_counter()
    m = re.search(r"http://127\.0\.0\.1:(\d+)(/open/\w+)", line)
    assert m, line
    # The one-time address: a redirect to the page and its session cookie.
    port = int(m.group(1))
    c = http.client.HTTPConnection("127.0.0.1", port)
    c.request("GET", m.group(2))
    r = c.getresponse()
    r.read()
    c.close()
    assert r.status == 303, r.status
    global cookie
    cookie = r.getheader("Set-Cookie").split(";")[0]
    return p, t1 - t0, port, r.getheader("Location")

def scripted():
    p = spawn(["--no-input", "-a", "accept", "-a", "name=Ada"])
    t0 = arrive(p)
    p.stdout.readline()
    t1 = time.perf_counter()
    p.wait()
    return t1 - t0

cookie = ""

def get(port, path):
    t0 = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", port)
    c.request("GET", path, headers={"Cookie": cookie})
    r = c.getresponse()
    body = r.read()
    t1 = time.perf_counter()
    c.close()
    return t1 - t0, r.status, body

def cancel(p, port, base):
    _, _, body = get(port, base)
    csrf = re.search(rb'name="csrf" value="(\w+)"', body).group(1).decode()
    c = http.client.HTTPConnection("127.0.0.1", port)
    c.request("POST", base + "answer/1", urllib.parse.urlencode({"csrf": csrf, "action": "cancel"}),
              {"Origin": f"http://127.0.0.1:{port}", "Content-Type": "application/x-www-form-urlencoded",
               "Cookie": cookie})
    c.getresponse().read()
    p.wait(timeout=10)

ready, script = [], []
for _ in range(runs):
    script.append(scripted())
    p, dt, port, base = page_ready()
    ready.append(dt)
    cancel(p, port, base)

p, _, port, base = page_ready()
page, missing, size = [], [], 0
for _ in range(loads):
    dt, status, body = get(port, base)
    assert status == 200
    size = len(body)
    page.append(dt)
    dt, status, _ = get(port, "/not-the-token/")
    assert status == 404
    missing.append(dt)
cancel(p, port, base)

ms = lambda xs: statistics.median(xs) * 1000
print(f"| `{bin}`, 13-field form | median | vs side by side |")
print("|---|---|---|")
print(f"| (a) arrival to answer, scripted (`-a`) | {ms(script):.2f} ms | 1.00x |")
print(f"| (a) arrival to page ready (`--ui browser`) | {ms(ready):.2f} ms | {ms(ready)/ms(script):.2f}x |")
print(f"| (b) GET of a 404 on the page's listener | {ms(missing):.3f} ms | 1.00x |")
print(f"| (b) page load ({size} bytes) | {ms(page):.3f} ms | {ms(page)/ms(missing):.2f}x |")
print(f"\n({runs} arrivals, {loads} loads each; the page's own cost at arrival: "
      f"{ms(ready) - ms(script):.2f} ms)")
PY
