"""A tool with no grant at all calls http_request in a loop with a 1 MiB
URL: every denial is appended to the run's list of denials, held in the
host, outside --memory, until the call ends; then the list is written
into the server's log and into the client's error text.
Usage: ENGINE=... TIMEOUT=3s [GRANT=1] python3 denialbomb.py"""
from lib import *
grant = os.environ.get("GRANT") == "1"
name = "denialbomb8k" if grant else "denialbomb"
extra = []
if grant:
    # GRANT=1: the tool has an http grant (for example.com); its 8,000-byte
    # host names are denied by egress, each denial kept just the same.
    d = make_tools("denialbomb8k", [name, "hello"], {name: {"permissions": {"http": [{"host": "example.com"}]}}})
    pol = os.path.join(ROOT, "tools", "denialbomb8k.policy.yaml")
    open(pol, "w").write(f"modules:\n  {name}:\n    http:\n      - host: example.com\n")
    subprocess.check_call([BIN[engine()], "policy", "approve", "--policy", pol, "--tools", d, name], stdout=subprocess.DEVNULL)
    extra = ["--policy", pol]
else:
    d = make_tools("denialbomb", [name, "hello"])
timeout = os.environ.get("TIMEOUT", "3s")
p, port = start(["--tools", d, "--cache-dir", "", "--timeout", timeout, "--memory", "2MiB", "--prewarm", "0"] + extra)
wait_log(p, "warm-up done")
base = rss(p.pid)[0]
s = raw_request(port, call_body(name), {"Mcp-Method": "tools/call", "Mcp-Name": name})
peak = 0; t = time.time(); out = b""
s.setblocking(False)
while time.time() - t < 60:
    peak = max(peak, rss(p.pid)[0])
    try:
        c = s.recv(1 << 20)
        if not c and out: break
        out += c
        if b"\r\n0\r\n\r\n" in out: break
    except BlockingIOError:
        pass
    time.sleep(0.02)
print(f"--memory 2MiB --timeout {timeout}: server RSS {base:.0f} -> peak {peak:.0f} MiB (HWM {rss(p.pid)[1]:.0f}); answer {len(out)/2**20:.1f} MiB after {time.time()-t:.1f}s")
print("answer starts:", out[out.find(b'"text"'):][:160])
print(f"server log: {os.path.getsize(p.logpath)/2**20:.1f} MiB")
p.send_signal(signal.SIGTERM); p.wait(60)
