"""Prepared instances hold their memory while they wait for a call that
may never come. Ten copies of a guest that grows to --memory and then
reads stdin: measure RSS after the warm-up, with no call at all, and
then after calls of each.  Usage: ENGINE=... N=10 python3 prewarmmem.py"""
import shutil
from lib import *
n = int(os.environ.get("N", "10"))
d = make_tools("prewarmmem", ["growthenread"])
for i in range(n):
    shutil.copy(os.path.join(d, "growthenread.wasm"), os.path.join(d, f"g{i}.wasm"))
    with open(os.path.join(d, f"g{i}.manifest.json"), "w") as f:
        json.dump({"abi": 1, "tools": [{"name": f"g{i}", "description": "g", "inputSchema": {"type": "object"}}]}, f)
extra = os.environ.get("ARGS", "").split()
p, port = start(["--tools", d, "--concurrency", "2", "--memory", "64MiB", "--cache-dir", ""] + extra)
wait_log(p, "warm-up done")
time.sleep(0.5)
print("flags: --concurrency 2 --memory 64MiB; after warm-up, no call: RSS/HWM MiB", rss(p.pid))
os.system(f"grep 'warm-up done' {p.logpath}")
for i in range(n):
    call(port, f"g{i}")
time.sleep(1)
print(f"after one call of each of {n} tools: RSS/HWM MiB", rss(p.pid))
p.send_signal(signal.SIGTERM); p.wait(30)
