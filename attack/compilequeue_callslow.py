"""compilequeue.py with a call for slow0 sent first, at each start: the
first calculate call then waits behind a compilation a call waits for,
which is never stopped. The first server is stopped before its warm-up
ends, so slow0 is not yet refused when the second starts.

Usage: ENGINE=wazero K=1 SHAPE=chain FUNCS=0 python3 compilequeue_callslow.py
"""
import shutil, threading
from lib import *
k = int(os.environ.get("K", "1"))
d = os.path.join(ROOT, "tools", "compilequeue")
shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
genv = dict(os.environ, BODY="100000")
genv.update(dict(kv.split("=") for kv in os.environ.get("SHAPE_ENV", "").split()))
subprocess.check_call(["go", "run", "./attack/gen", os.environ.get("SHAPE", "loadstack"), "/tmp/slowcompile.wasm", os.environ.get("FUNCS", "16")], cwd=os.path.join(ROOT, ".."), env=genv)
for i in range(k):
    data = open("/tmp/slowcompile.wasm", "rb").read() + bytes([0, 2, 1, 0x41 + i])
    open(os.path.join(d, f"slow{i}.wasm"), "wb").write(data)
    json.dump({"abi": 1, "tools": [{"name": f"slow{i}", "description": "s", "inputSchema": {"type": "object"}}]},
              open(os.path.join(d, f"slow{i}.manifest.json"), "w"))
subprocess.check_call(["go", "build", "-o", os.path.join(d, "calculate.wasm"), "."], cwd=os.path.join(ROOT, "..", "tools", "calculate"),
                      env=dict(os.environ, GOOS="wasip1", GOARCH="wasm"))
shutil.copy(os.path.join(ROOT, "..", "tools", "calculate", "manifest.json"), os.path.join(d, "calculate.manifest.json"))
cache = "/tmp/compilequeue-cache"
shutil.rmtree(cache, ignore_errors=True)
for label in ["first start", "after a restart"]:
    p, port = start(["--tools", d, "--cache-dir", cache, "--log-level", "debug"], log=f"/tmp/compilequeue-callslow.log")
    wait_log(p, "compiling module.*slow0")
    th = threading.Thread(target=call, args=(port, "slow0", {}), kwargs={"timeout": 900}); th.start()
    time.sleep(0.5)  # let slow0's call reach the server first
    out, dt = call(port, "calculate", {"a": 1, "b": 2, "operation": "add"}, timeout=900)
    print(f"{label}: with a call waiting for slow0, the first calculate call answered after {dt:.1f}s: {str(text_of(out))[:60]!r}")
    p.send_signal(signal.SIGTERM); p.wait(60); th.join()
