"""When the compiled code leaves the cache but wasmcp's mark stays (the
engine's own cache eviction, a cleaner of old files in ~/.cache or /tmp,
a cache restored from a backup without the engine's files), the module is
no longer sent to a worker: the server compiles it itself, outside the
worker's memory bound and, on wasmtime, past --compile-timeout.

Usage: ENGINE=... SHAPE_ENV="BODY=200000" SHAPE=loadstack python3 evicted.py
"""
import shutil, glob
from lib import *
shape = os.environ.get("SHAPE", "loadstack")
d = os.path.join(ROOT, "tools", "evicted"); shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
env = dict(os.environ); env.update(dict(kv.split("=") for kv in os.environ.get("SHAPE_ENV", "BODY=200000").split()))
subprocess.check_call(["go", "run", "./attack/gen", shape, os.path.join(d, "m.wasm")], cwd=os.path.join(ROOT, ".."), env=env)
json.dump({"abi": 1, "tools": [{"name": "m", "description": "m", "inputSchema": {"type": "object"}}]}, open(os.path.join(d, "m.manifest.json"), "w"))
cache = "/tmp/evicted-cache"; shutil.rmtree(cache, ignore_errors=True)
extra = os.environ.get("ARGS", "").split()
for phase in ["first start (worker compiles)", "after the engine's files left the cache (marks kept)"]:
    p, port = start(["--tools", d, "--cache-dir", cache, "--log-level", "debug"] + extra)
    peak_tree, peak_server = 0, 0
    t = time.time()
    while time.time() - t < 200:
        peak_tree = max(peak_tree, tree_rss(p.pid) - rss(p.pid)[0])
        with open(p.logpath) as f:
            log = f.read()
        if "module compiled" in log or "does not compile" in log:
            break
        time.sleep(0.05)
    line = [l for l in log.splitlines() if "module compiled" in l or "does not compile" in l]
    print(f"{phase}: {time.time()-t:.1f}s, worker peak RSS {peak_tree:.0f} MiB, server VmHWM {rss(p.pid)[1]:.0f} MiB; {line[-1][-150:] if line else 'nothing'}")
    p.send_signal(signal.SIGTERM); p.wait(120)
    for sub in glob.glob(cache + "/wazero-*") + glob.glob(cache + "/wasmtime"):
        shutil.rmtree(sub)
