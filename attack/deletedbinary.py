"""After the server's binary is replaced or removed on disk (an upgrade
in place), compile workers cannot start: what does a client then see
for a newly added module? Usage: ENGINE=... python3 deletedbinary.py"""
import shutil
from lib import *
d = make_tools("deletedbin", ["hello"])
for f in os.listdir(d):
    if f.startswith("late"): os.remove(os.path.join(d, f))
copy = "/tmp/secret-deploy-dir/bin/wasmcp"
os.makedirs(os.path.dirname(copy), exist_ok=True)
shutil.copy(BIN[engine()], copy)
BIN[engine()] = copy
p, port = start(["--tools", d, "--cache-dir", "/tmp/deletedbin-cache"])
wait_log(p, "warm-up done")
os.remove(copy)
data = open(os.path.join(d, "hello.wasm"), "rb").read().replace(b"hi", b"ho")  # new code, new compile
open(os.path.join(d, "late.wasm.tmp"), "wb").write(data)
json.dump({"abi": 1, "tools": [{"name": "late", "description": "l", "inputSchema": {"type": "object"}}]}, open(os.path.join(d, "late.manifest.json"), "w"))
os.rename(os.path.join(d, "late.wasm.tmp"), os.path.join(d, "late.wasm"))
wait_log(p, "late")
time.sleep(1)
out, dt = call(port, "late")
print("client sees:", text_of(out))
p.send_signal(signal.SIGTERM); p.wait(30)
shutil.rmtree("/tmp/deletedbin-cache", ignore_errors=True)
