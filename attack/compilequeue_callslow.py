"""compilequeue.py with a call for slow0 sent first, at each start: the
first calculate call then waits behind a compilation a call waits for,
which is never stopped. The first server is stopped before its warm-up
ends, so slow0 is not yet refused when the second starts.

Usage: ENGINE=wazero K=1 SHAPE=chain FUNCS=0 python3 compilequeue_callslow.py
"""
import shutil, threading
from lib import *
k = int(os.environ.get("K", "1"))
d = slow_tool_dir(k)
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
