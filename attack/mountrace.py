"""Two calls share a writable mount. The operator's mount holds d/link, a
link pointing out of the mount, which the docs say no guest can follow.
One call swaps directories named x (rename is allowed: d is a real
directory); the other opens x/link/secret. wazero's confinedFS checks the
path through os.Root and then opens it again by name through DirFS, which
follows links: between the two, x can change from the guest's own
directory (or from nothing) to the operator's d.

A writer does the same with x/link/pwned, creating a file outside.

Usage: ENGINE=wazero|wasmtime python3 mountrace.py
"""
import shutil, threading
from lib import *
outside = "/tmp/mountrace-outside"; m = "/tmp/mountrace-mount"
for x in (outside, m): shutil.rmtree(x, ignore_errors=True)
os.makedirs(outside); open(os.path.join(outside, "secret"), "w").write("TOPSECRET from outside the mount\n")
os.makedirs(os.path.join(m, "d")); os.symlink(outside, os.path.join(m, "d", "link"))
os.makedirs(os.path.join(m, "e", "link")); open(os.path.join(m, "e", "link", "secret"), "w").write("decoy\n")
perm = {"permissions": {"dirs": [{"guest": "/m", "write": True}]}}
d = make_tools("mountrace", ["swapper", "reader", "writer"], {"swapper": perm, "reader": perm, "writer": perm})
pol = os.path.join(ROOT, "tools", "mountrace.policy.yaml")
open(pol, "w").write(f"modules:\n  swapper:\n    dirs:\n      /m: {{host: {m}, write: true}}\n  reader:\n    dirs:\n      /m: {{host: {m}}}\n  writer:\n    dirs:\n      /m: {{host: {m}, write: true}}\n")
subprocess.check_call([BIN[engine()], "policy", "approve", "--policy", pol, "--tools", d, "swapper", "reader", "writer"], stdout=subprocess.DEVNULL)
p, port = start(["--tools", d, "--policy", pol, "--cache-dir", "", "--timeout", "10s", "--concurrency", "4"])
wait_log(p, "warm-up done")
res = {}
def run(name):
    res[name] = call(port, name, timeout=20)
ths = [threading.Thread(target=run, args=(n,)) for n in ("swapper", "reader")]
for t in ths: t.start()
for t in ths: t.join()
print("reader read:", repr(text_of(res["reader"][0])), f"after {res['reader'][1]:.2f}s")
# and writing: the writer creates x/link/pwned while the swapper runs (3 s each)
p.send_signal(signal.SIGTERM); p.wait(30)
p, port = start(["--tools", d, "--policy", pol, "--cache-dir", "", "--timeout", "3s", "--concurrency", "4"])
wait_log(p, "warm-up done")
ths = [threading.Thread(target=run, args=(n,)) for n in ("swapper", "writer")]
for t in ths: t.start()
for t in ths: t.join()
f = os.path.join(outside, "pwned")
print("file written outside the mount:", f, os.path.exists(f) and repr(open(f).read()))
p.send_signal(signal.SIGTERM); p.wait(30)
