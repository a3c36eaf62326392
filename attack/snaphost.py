"""Host calls where a call's state is not yet there: a reactor granted
HTTP to a local server calls log, progress and http_request in its
start-up, and log and http_request in its call before it reads stdin (as
a prepared instance does before its call comes) and http_request after.
It prints the six result codes. Does the start-up see a grant? Does a
call's answer depend on whether its instance was prepared (--prewarm 0
against the default)? The local server counts the requests per path.
Usage: ENGINE=... python3 snaphost.py"""
import http.server, threading, collections
from lib import *
hits = collections.Counter()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        hits[self.path] += 1
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *a): pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=srv.serve_forever, daemon=True).start()
hport = srv.server_address[1]

def req(path, at):
    j = json.dumps({"method": "GET", "url": f"http://127.0.0.1:{hport}/{path}"}).replace('"', '\\"')
    return f'(data (i32.const {at}) "{j}")', len(json.dumps({"method": "GET", "url": f"http://127.0.0.1:{hport}/{path}"}))

datas, calls = [], {}
for i, path in enumerate(["init", "pre", "post"]):
    text, n = req(path, 4000 + 200 * i)
    datas.append(text)
    calls[path] = f"(call $http (i32.const {4000 + 200 * i}) (i32.const {n}) (i32.const 3900))"
imports = '''  (import "wasmcp" "log" (func $log (param i32 i32 i32) (result i32)))
  (import "wasmcp" "progress" (func $progress (param f64 f64 i32 i32) (result i32)))
  (import "wasmcp" "http_request" (func $http (param i32 i32 i32) (result i32)))'''
body = "\n".join(datas) + f'''
  (data (i32.const 3000) "a message ")
  (global $c1 (mut i32) (i32.const -1)) (global $c2 (mut i32) (i32.const -1)) (global $c3 (mut i32) (i32.const -1))
  (global $c4 (mut i32) (i32.const -1)) (global $c5 (mut i32) (i32.const -1)) (global $c6 (mut i32) (i32.const -1))
  (func (export "wasmcp_init")
    (global.set $c1 (call $log (i32.const 1) (i32.const 3000) (i32.const 9)))
    (global.set $c2 (call $progress (f64.const 1) (f64.const 2) (i32.const 3000) (i32.const 9)))
    (global.set $c3 {calls["init"]}))
  (func $p (param $v i32) (call $num (local.get $v)) (call $out (i32.const 3009) (i32.const 1)))
  (func (export "wasmcp_run")
    (global.set $c4 (call $log (i32.const 1) (i32.const 3000) (i32.const 9)))
    (global.set $c5 {calls["pre"]})
    (drop (call $readin))
    (global.set $c6 {calls["post"]})
    (call $p (global.get $c1)) (call $p (global.get $c2)) (call $p (global.get $c3))
    (call $p (global.get $c4)) (call $p (global.get $c5)) (call $p (global.get $c6)))'''
d = make_reactors("snaphost", {"hostcalls": reactor_wat(body, imports=imports)},
                  manifest_extra={"hostcalls": {"permissions": {"http": [{"host": "127.0.0.1"}]}}})
pol = os.path.join(ROOT, "tools", "snaphost.policy.yaml")
open(pol, "w").write(f"modules:\n  hostcalls:\n    http:\n      - host: 127.0.0.1\n        ports: [{hport}]\n        schemes: [http]\n        allow_private: true\n")
subprocess.check_call([BIN[engine()], "policy", "approve", "--policy", pol, "--tools", d, "hostcalls"], stdout=subprocess.DEVNULL)
print(f"{engine()}: codes are log, progress, http at start-up; log, http before stdin; http after (0 ok, 7 denied, 4294967295 not called)")
for prewarm in ["0", "8"]:
    hits.clear()
    p, port = start(["--tools", d, "--policy", pol, "--cache-dir", "", "--prewarm", prewarm, "--log-level", "debug"])
    wait_log(p, "warm-up done", 60); time.sleep(0.5)
    answers = [str(text_of(call(port, "hostcalls", meta={"progressToken": "t"})[0])).strip() for _ in range(3)]
    print(f"  --prewarm {prewarm}: answers {answers}; requests the server got {dict(hits)}")
    log = open(p.logpath).read()
    print(f"    log lines: permission denied {log.count('permission denied')}, tool log {log.count('tool log')}")
    p.send_signal(signal.SIGTERM); p.wait(30)
