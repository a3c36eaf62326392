"""Modules that each take the compile slot for about --compile-timeout
keep every larger module (compiled later: smallest first) from running:
its first call waits for all of them. On wasmtime a 1.8 MB module of 16
functions, each a deep stack of distinct loads, compiles for about a
minute within the memory bound.

Usage: ENGINE=wasmtime K=3 FUNCS=16 python3 compilequeue.py
       ENGINE=wazero K=2 SHAPE=alllimits SHAPE_ENV="LOCALS=50000 BRS=500 TABLE=0 FILL=200000 NEST=1" python3 compilequeue.py
       (on wazero a 252 KB module of one function with 50,000 locals read
       after a block with 500 branches to it compiles for 25 s)
"""
import shutil
from lib import *
k = int(os.environ.get("K", "3"))
d = slow_tool_dir(k)
cache = "/tmp/compilequeue-cache"
shutil.rmtree(cache, ignore_errors=True)
p, port = start(["--tools", d, "--cache-dir", cache, "--log-level", "debug"] + os.environ.get("ARGS", "").split(), log="/tmp/compilequeue.log")
t0 = time.time()
out, dt = call(port, "calculate", {"a": 1, "b": 2, "operation": "add"}, timeout=900)
print(f"{k} slow modules of {os.path.getsize(os.path.join(d,'slow0.wasm'))} bytes; first calculate call answered after {dt:.1f}s: {str(text_of(out))[:200]!r}")
os.system(f"grep -iE \"compil|warm\" {p.logpath} | grep -v \"loaded module\" | cut -c1-300 | head -20")
p.send_signal(signal.SIGTERM); p.wait(60)
# second start, same cache: do the slow ones compile again?
p, port = start(["--tools", d, "--cache-dir", cache, "--log-level", "debug"] + os.environ.get("ARGS", "").split(), log="/tmp/compilequeue.log")
out, dt = call(port, "calculate", {"a": 1, "b": 2, "operation": "add"}, timeout=900)
print(f"after a restart with the cache: first calculate call answered after {dt:.1f}s")
p.send_signal(signal.SIGTERM); p.wait(60)
