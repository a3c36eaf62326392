"""A directory of large modules, each just under the 64 MiB file limit
(60 MiB of ordinary code that compiles in about 1.5 s): the server's
memory after load and warm-up, and what each reload costs when one small
file in the directory changes every 400 ms.

Usage: ENGINE=... K=10 python3 bigdir.py
"""
import shutil, threading
from lib import *
k = int(os.environ.get("K", "10"))
d = os.path.join(ROOT, "tools", "bigdir"); shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
subprocess.check_call(["go", "run", "./attack/gen", "straight", "/tmp/straight.wasm"], cwd=os.path.join(ROOT, ".."))
base = open("/tmp/straight.wasm", "rb").read()
for i in range(k):
    # each a different module: change one local index in the first body
    data = bytearray(base); data[-5] = (data[-5] + 1 + i) % 100
    open(os.path.join(d, f"big{i}.wasm"), "wb").write(data)
    json.dump({"abi": 1, "tools": [{"name": f"big{i}", "description": "b", "inputSchema": {"type": "object"}}]}, open(os.path.join(d, f"big{i}.manifest.json"), "w"))
subprocess.check_call(["wat2wasm", os.path.join(ROOT, "wat/hello.wat"), "-o", os.path.join(d, "hello.wasm")])
json.dump({"abi": 1, "tools": [{"name": "hello", "description": "h", "inputSchema": {"type": "object"}}]}, open(os.path.join(d, "hello.manifest.json"), "w"))
cache = "/tmp/bigdir-cache"; shutil.rmtree(cache, ignore_errors=True)
p, port = start(["--tools", d, "--cache-dir", cache, "--prewarm", "0"] + os.environ.get("ARGS", "").split())
t = time.time(); peak = 0
while not wait_log(p, "warm-up done", timeout=0.2):
    peak = max(peak, tree_rss(p.pid))
    if time.time() - t > 600: break
print(f"{k} modules of {len(base)>>20} MiB: warm-up {time.time()-t:.1f}s; server RSS {rss(p.pid)[0]:.0f} MiB, HWM {rss(p.pid)[1]:.0f}; server+workers peak {peak:.0f} MiB")
# churn: rewrite hello's manifest description every 400 ms for 20 s
stop = time.time() + 20; lat = []
def churn():
    i = 0
    while time.time() < stop:
        json.dump({"abi": 1, "tools": [{"name": "hello", "description": f"h{i}", "inputSchema": {"type": "object"}}]}, open(os.path.join(d, "hello.manifest.json.tmp"), "w"))
        os.rename(os.path.join(d, "hello.manifest.json.tmp"), os.path.join(d, "hello.manifest.json"))
        i += 1; time.sleep(0.4)
th = threading.Thread(target=churn); th.start()
cpu0 = sum(int(x) for x in open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()[11:13])
while time.time() < stop:
    out, dt = call(port, "hello"); lat.append(dt); time.sleep(0.1)
th.join()
cpu1 = sum(int(x) for x in open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()[11:13])
reloads = open(p.logpath).read().count("reload")
print(f"churn 20s: server CPU {(cpu1-cpu0)/os.sysconf('SC_CLK_TCK'):.1f}s, RSS {rss(p.pid)[0]:.0f} MiB HWM {rss(p.pid)[1]:.0f}; hello max latency {max(lat)*1000:.1f} ms; log lines mentioning reload {reloads}")
p.send_signal(signal.SIGTERM); p.wait(60)
