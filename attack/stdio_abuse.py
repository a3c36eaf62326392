"""Stdio framing abuse: CRLF, NUL bytes, a BOM, a line of only spaces,
a request split over writes with pauses, 4 MiB lines in a burst, a
last request without a newline at EOF. Prints every answer line.
Usage: ENGINE=... python3 stdio_abuse.py"""
from lib import *
d = make_tools("slow", ["progflood", "hello"])
p, _ = start(["--tools", d, "--cache-dir", ""], http=False)
init = json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}})
def req(i, name="hello", args=None):
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args or {}}})
chunks = [init.encode() + b"\r\n",
          b'{"jsonrpc":"2.0","method":"notifications/initialized"}\r\n',
          req(1).encode() + b"\r\n",                       # CRLF
          b"\x00" + req(2).encode() + b"\n",               # NUL before
          req(3).encode() + b"\x00\n",                     # NUL after
          b"\xef\xbb\xbf" + req(4).encode() + b"\n",       # BOM
          b"   \t  \n",                                    # blank
          b"\n\n\n",
          ]
t0 = time.time()
for c in chunks:
    p.stdin.write(c); p.stdin.flush()
# split request with pauses
r5 = req(5).encode()
for i in range(0, len(r5), 7):
    p.stdin.write(r5[i:i+7]); p.stdin.flush(); time.sleep(0.01)
p.stdin.write(b"\n")
# burst: 8 lines of 4 MiB (just under the limit) and 2 over it
big = req(6, "hello", {"s": "y" * (4 * 1024 * 1024 - 200)}).encode()
over = req(7, "hello", {"s": "y" * (4 * 1024 * 1024 + 10)}).encode()
for k in range(8):
    p.stdin.write(big + b"\n")
p.stdin.write(over + b"\n"); p.stdin.write(over + b"\n")
p.stdin.write(req(8).encode())  # no newline at EOF
p.stdin.flush()
p.stdin.close()
out = p.stdout.read()
p.wait(30)
print(f"exit rc={p.returncode} after {time.time()-t0:.1f}s; HWM n/a")
for line in out.split(b"\n"):
    if line:
        print(line[:200])
