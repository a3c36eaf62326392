"""A stdio client that writes requests and never reads stdout.
1. RSS as requests pile up (each answer blocks on the full pipe).
2. SIGTERM: does the server exit within --shutdown-grace?
Usage: ENGINE=... N=100000 MODE=list|progress python3 stdio_noread.py"""
from lib import *
n = int(os.environ.get("N", "100000"))
mode = os.environ.get("MODE", "list")
d = make_tools("slow", ["progflood", "hello"])
p, _ = start(["--tools", d, "--cache-dir", "", "--shutdown-grace", "3s", "--timeout", "3s"], http=False)
def send(obj):
    p.stdin.write((json.dumps(obj) + "\n").encode()); p.stdin.flush()
send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}})
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
t = time.time()
if mode == "progress":
    for i in range(n):
        send({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {"name": "progflood", "arguments": {}, "_meta": {"progressToken": i}}})
else:
    import threading
    def writer():
        try:
            for i in range(n):
                send({"jsonrpc": "2.0", "id": i + 1, "method": "tools/list"})
        except BrokenPipeError:
            pass
    th = threading.Thread(target=writer, daemon=True); th.start(); th.join(60)
    print("writer finished:", not th.is_alive())
time.sleep(2)
print(f"{mode}: {n} requests sent in {time.time()-t:.1f}s, stdout never read; RSS/HWM MiB:", rss(p.pid),
      "threads:", open(f"/proc/{p.pid}/status").read().split("Threads:")[1].split()[0])
t = time.time(); p.send_signal(signal.SIGTERM)
try:
    p.wait(30); print(f"exited {time.time()-t:.1f}s after SIGTERM (grace 3s), rc={p.returncode}")
except subprocess.TimeoutExpired:
    print("still running 30s after SIGTERM (grace 3s)"); p.kill()
os.system(f"tail -3 {p.logpath} | cut -c1-250")
