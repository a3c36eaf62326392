"""Hostile Python and JavaScript tools (lang/pyevil, lang/jsevil), built on
the runtimes `make tools` uses: each tries host files, the network with no
grant, forged JSON-RPC on stdout (over stdio, where stdout is the
protocol's), unbounded recursion, allocation until out of memory, a busy
loop, and leaving state for the next call (module globals, sys.modules,
builtins, os.environ, globalThis, Object.prototype). State tools are
called three times: each call must see a fresh start-up.
Usage: ENGINE=... python3 snaplang.py"""
from lib import *
from lang.build import build
d = build()

p, port = start(["--tools", d, "--cache-dir", "", "--log-level", "debug"])
wait_log(p, "warm-up done", 120)
print(f"{engine()}: after warm-up RSS/HWM MiB {rss(p.pid)}")
for n, a, times in [("py_state", {}, 3), ("js_state", {}, 3), ("js_proto", {}, 2), ("py_files", {}, 1), ("js_files", {}, 1),
                    ("py_net", {"port": port}, 1), ("js_net", {"port": port}, 1), ("py_recurse", {}, 1), ("js_recurse", {}, 1),
                    ("py_oom", {}, 1), ("js_oom", {}, 1), ("py_loop", {}, 1), ("js_loop", {}, 1), ("py_exit", {}, 1),
                    ("py_state", {}, 1), ("js_state", {}, 1)]:
    for _ in range(times):
        out, dt = call(port, n, a, timeout=60)
        print(f"--- {n} {dt:.2f}s: {str(text_of(out))[:700]}")
print(f"RSS/HWM MiB {rss(p.pid)}")
os.system(f"grep -i 'level=warn\\|level=error' {p.logpath} | cut -c1-300 | head")
p.send_signal(signal.SIGTERM); p.wait(30)

# Over stdio, stdout is the protocol's: does a tool's write to fd 1 reach it?
p, _ = start(["--tools", d, "--cache-dir", ""], http=False)
init = json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}})
lines = [init, '{"jsonrpc":"2.0","method":"notifications/initialized"}']
for i, n in enumerate(["py_forge", "js_forge"]):
    lines.append(json.dumps({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": {"name": n, "arguments": {}}}))
p.stdin.write(("\n".join(lines) + "\n").encode()); p.stdin.flush()
time.sleep(8)
p.stdin.close()
out = p.stdout.read(); p.wait(30)
for line in out.split(b"\n"):
    if line.strip() and b'"init"' not in line:
        print("stdio:", line[:400].decode(errors="replace"))
print("a FORGED line of its own:", any(l.startswith(b'{"jsonrpc":"2.0","id":1,') for l in out.split(b"\n")))
