"""An HTTP answer waits in the host, JSON-encoded, until the guest takes
it, and is counted against no limit of the call: a 4 MiB body of control
bytes is valid UTF-8 and becomes a 24 MiB JSON string (\\u0001 for each
byte). --concurrency calls of a guest that asks and never takes hold it
for their whole time limit. Usage: ENGINE=... python3 httpflood.py"""
import http.server, threading
from lib import *
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"\x01" * (4 * 1024 * 1024 - 64)
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.handle_error = lambda *a: None
threading.Thread(target=srv.serve_forever, daemon=True).start()
hport = srv.server_address[1]
d = make_tools("httpflood", ["httpflood", "hello"], {"httpflood": {"permissions": {"http": [{"host": "127.0.0.1"}]}}})
pol = os.path.join(ROOT, "tools", "httpflood.policy.yaml")
open(pol, "w").write(f"modules:\n  httpflood:\n    http:\n      - host: 127.0.0.1\n        ports: [{hport}]\n        schemes: [http]\n        allow_private: true\n")
subprocess.check_call([BIN[engine()], "policy", "approve", "--policy", pol, "--tools", d, "httpflood"], stdout=subprocess.DEVNULL)
conc = 4
p, port = start(["--tools", d, "--policy", pol, "--cache-dir", "", "--concurrency", str(conc), "--timeout", "6s", "--memory", "1MiB"])
wait_log(p, "warm-up done")
base = rss(p.pid)[0]
socks = [raw_request(port, call_body("httpflood", {"method": "GET", "url": f"http://127.0.0.1:{hport}/x"}),
                     {"Mcp-Method": "tools/call", "Mcp-Name": "httpflood"}) for _ in range(conc)]
peak = 0; t = time.time()
while time.time() - t < 7:
    peak = max(peak, rss(p.pid)[0]); time.sleep(0.05)
print(f"{conc} calls with --memory 1MiB: server RSS {base:.0f} -> peak {peak:.0f} MiB (HWM {rss(p.pid)[1]:.0f})")
print("one answer:", str(text_of(read_all(socks[0], 10)))[:200])
p.send_signal(signal.SIGTERM); p.wait(30)
