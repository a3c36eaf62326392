"""Many modules, each with a manifest near the 1 MiB limit (256 tools,
long descriptions): the server's memory, and what one tools/list costs.
Usage: ENGINE=... K=100 python3 bigmanifests.py"""
import shutil
from lib import *
k = int(os.environ.get("K", "100"))
d = os.path.join(ROOT, "tools", "bigmanifests"); shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
subprocess.check_call(["wat2wasm", os.path.join(ROOT, "wat/hello.wat"), "-o", "/tmp/hello.wasm"])
for i in range(k):
    shutil.copy("/tmp/hello.wasm", os.path.join(d, f"m{i}.wasm"))
    tools = [{"name": f"m{i}_t{j}", "description": "d" * 3900, "inputSchema": {"type": "object"}} for j in range(256)]
    json.dump({"abi": 1, "tools": tools}, open(os.path.join(d, f"m{i}.manifest.json"), "w"))
print("manifest bytes", os.path.getsize(os.path.join(d, "m0.manifest.json")))
p, port = start(["--tools", d, "--cache-dir", ""])
t = time.time(); wait_log(p, "warm-up done", 300)
print(f"{k} modules, {k*256} tools: warm-up {time.time()-t:.1f}s; RSS {rss(p.pid)[0]:.0f} MiB HWM {rss(p.pid)[1]:.0f}")
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}}})
for _ in range(3):
    s = raw_request(port, body, {"Mcp-Method": "tools/list"}); t = time.time(); out = read_all(s, 120); s.close()
    print(f"tools/list: {len(out)/2**20:.1f} MiB in {time.time()-t:.2f}s, nextCursor {b'nextCursor' in out}; RSS {rss(p.pid)[0]:.0f} MiB HWM {rss(p.pid)[1]:.0f}")
p.send_signal(signal.SIGTERM); p.wait(30)
