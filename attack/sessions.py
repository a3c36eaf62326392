"""One client takes every 2025-11-25 session (--max-sessions) with bare
initialize requests and then goes quiet: other 2025-11-25 clients are
refused for --session-idle-timeout (10 minutes by default).
Usage: ENGINE=... MAXS=1024 python3 sessions.py"""
from lib import *
maxs = int(os.environ.get("MAXS", "1024"))
p, port = start(["--tools", make_tools("slow", ["progflood", "hello"]), "--cache-dir", "", "--max-sessions", str(maxs)])
init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}})
base = rss(p.pid)[0]; t = time.time()
for i in range(maxs):
    s = raw_request(port, init, {"MCP-Protocol-Version": "2025-11-25"})
    read_all(s, 5); s.close()
print(f"{maxs} sessions opened in {time.time()-t:.1f}s; RSS {base:.0f} -> {rss(p.pid)[0]:.0f} MiB")
s = raw_request(port, init, {"MCP-Protocol-Version": "2025-11-25"})
print("a new client's initialize:", read_all(s, 5)[:400])
p.send_signal(signal.SIGTERM); p.wait(30)
