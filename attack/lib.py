"""Helpers for the attack scripts: start wasmcp, talk raw HTTP and stdio,
measure the server's peak RSS."""
import json, os, shutil, socket, subprocess, time, signal, re

ROOT = os.path.dirname(os.path.abspath(__file__))
BIN = {"wazero": os.path.join(ROOT, "..", "build", "wasmcp"),
       "wasmtime": os.path.join(ROOT, "..", "build", "wasmcp-wt")}

def engine():
    return os.environ.get("ENGINE", "wazero")

def start(args, http=True, port=None, log=None):
    """Starts `wasmcp serve` with args; returns (proc, port)."""
    cmd = [BIN[engine()], "serve", "--engine", engine()] + args
    if http:
        port = port or free_port()
        cmd += ["--http", f"127.0.0.1:{port}"]
    logf = open(log or os.path.join("/tmp", f"wasmcp-attack-{os.getpid()}.log"), "w")
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE if not http else subprocess.DEVNULL,
                         stderr=logf)
    p.logpath = logf.name
    if http:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
    return p, port

def wait_log(p, pattern, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        with open(p.logpath) as f:
            if re.search(pattern, f.read()):
                return True
        time.sleep(0.05)
    return False

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close(); return port

def rss(pid):
    """(VmRSS, VmHWM) in MiB of pid."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                out[k] = int(v.split()[0]) / 1024
    return out.get("VmRSS"), out.get("VmHWM")

def tree_rss(pid):
    """Summed RSS in MiB of pid and its children (compile workers)."""
    total = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read().rsplit(")", 1)[1].split()
            if int(d) == pid or int(st[1]) == pid:
                # A process that is exiting (a worker done) has no VmRSS.
                total += rss(int(d))[0] or 0
        except (OSError, IndexError):
            pass
    return total

MODERN = "2026-07-28"

def call_body(name, args=None, id=1, meta=None):
    m = {"io.modelcontextprotocol/protocolVersion": MODERN,
         "io.modelcontextprotocol/clientCapabilities": {}}
    m.update(meta or {})
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                       "params": {"name": name, "arguments": args or {}, "_meta": m}})

def raw_request(port, body, headers=None, rcvbuf=None, method="POST", path="/mcp"):
    """Opens a socket, sends one HTTP request, returns the socket unread."""
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", port))
    h = {"Host": f"127.0.0.1:{port}", "Content-Type": "application/json",
         "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MODERN}
    h.update(headers or {})
    data = body.encode() if isinstance(body, str) else body
    req = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items())
    req += f"Content-Length: {len(data)}\r\n\r\n"
    s.sendall(req.encode() + data)
    return s

def read_all(s, timeout=30):
    s.settimeout(timeout)
    buf = b""
    try:
        while True:
            c = s.recv(65536)
            if not c:
                break
            buf += c
            if b"\r\n0\r\n\r\n" in buf or (b"Content-Length" in buf and body_complete(buf)):
                break
    except socket.timeout:
        pass
    return buf

def body_complete(buf):
    head, sep, body = buf.partition(b"\r\n\r\n")
    if not sep:
        return False
    m = re.search(rb"Content-Length: (\d+)", head)
    return m and len(body) >= int(m.group(1))

def call(port, name, args=None, timeout=30, meta=None, headers=None):
    h = {"Mcp-Method": "tools/call", "Mcp-Name": name}
    h.update(headers or {})
    s = raw_request(port, call_body(name, args, meta=meta), h)
    t = time.time()
    out = read_all(s, timeout)
    s.close()
    return out, time.time() - t

def make_tools(dirname, names, manifest_extra=None):
    """Assembles wat/NAME.wat into DIR/NAME.wasm with a sidecar manifest
    naming one tool NAME; returns DIR's path."""
    d = os.path.join(ROOT, "tools", dirname)
    os.makedirs(d, exist_ok=True)
    for n in names:
        subprocess.check_call(["wat2wasm", os.path.join(ROOT, "wat", n + ".wat"), "-o", os.path.join(d, n + ".wasm")])
        m = {"abi": 1, "tools": [{"name": n, "description": n, "inputSchema": {"type": "object"}}]}
        m.update((manifest_extra or {}).get(n, {}))
        with open(os.path.join(d, n + ".manifest.json"), "w") as f:
            json.dump(m, f)
    return d

def text_of(out):
    """The last JSON-RPC message's text content in an HTTP answer."""
    msgs = re.findall(rb'data: (\{.*\})', out) or re.findall(rb'(\{"jsonrpc".*\})', out)
    if not msgs:
        return out[-300:]
    m = json.loads(msgs[-1])
    try:
        return m["result"]["content"][0]["text"]
    except (KeyError, IndexError, TypeError):
        return m


def slow_tool_dir(k):
    """A tool directory of k modules that compile slowly (SHAPE, FUNCS and
    SHAPE_ENV choose them, built by attack/gen) beside the calculate
    example, as tools/calculate/build makes it. Returns the directory."""
    d = os.path.join(ROOT, "tools", "compilequeue")
    shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
    genv = dict(os.environ, BODY="100000")
    genv.update(dict(kv.split("=") for kv in os.environ.get("SHAPE_ENV", "").split()))
    subprocess.check_call(["go", "run", "./attack/gen", os.environ.get("SHAPE", "loadstack"), "/tmp/slowcompile.wasm",
                           os.environ.get("FUNCS", "16")], cwd=os.path.join(ROOT, ".."), env=genv)
    for i in range(k):
        # Differ by one byte so that each is its own module (a custom section).
        data = open("/tmp/slowcompile.wasm", "rb").read() + bytes([0, 2, 1, 0x41 + i])
        open(os.path.join(d, f"slow{i}.wasm"), "wb").write(data)
        json.dump({"abi": 1, "tools": [{"name": f"slow{i}", "description": "s", "inputSchema": {"type": "object"}}]},
                  open(os.path.join(d, f"slow{i}.manifest.json"), "w"))
    calc = os.path.join(ROOT, "..", "tools", "calculate")
    subprocess.check_call([os.path.join(calc, "build"), os.path.join(d, "calculate.wasm")])
    shutil.copy(os.path.join(calc, "manifest.json"), os.path.join(d, "calculate.manifest.json"))
    return d


# A reactor's helpers, in WAT: $out(ptr, len) writes to stdout, $readin
# reads up to 60,000 bytes of stdin to 1024 and returns how many, $touch
# writes byte v at every 4 KiB page in [from, to), $growto grows memory to
# that many 64 KiB pages, $num prints an i32 in decimal.
REACTOR_PRELUDE = r'''
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (func $out (param $p i32) (param $n i32)
    (i32.store (i32.const 0) (local.get $p)) (i32.store (i32.const 4) (local.get $n))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))
  (func $err (param $p i32) (param $n i32)
    (i32.store (i32.const 0) (local.get $p)) (i32.store (i32.const 4) (local.get $n))
    (drop (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 8))))
  (func $readin (result i32)
    (i32.store (i32.const 0) (i32.const 1024)) (i32.store (i32.const 4) (i32.const 60000))
    (if (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)) (then (return (i32.const -1))))
    (i32.load (i32.const 8)))
  (func $touch (param $from i32) (param $to i32) (param $v i32)
    (block $b (loop $l (br_if $b (i32.ge_u (local.get $from) (local.get $to)))
      (i32.store8 (local.get $from) (local.get $v))
      (local.set $from (i32.add (local.get $from) (i32.const 4096))) (br $l))))
  (func $growto (param $pages i32)
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then (drop (memory.grow (i32.sub (local.get $pages) (memory.size)))))))
  (func $num (param $v i32) (local $p i32)
    (local.set $p (i32.const 400))
    (loop $l
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $v) (i32.const 10))))
      (local.set $v (i32.div_u (local.get $v) (i32.const 10)))
      (br_if $l (local.get $v)))
    (call $out (local.get $p) (i32.sub (i32.const 400) (local.get $p))))
'''

def reactor_wat(body, memory=1, imports=""):
    """A reactor module's text: imports, the prelude, its memory, then body
    (which exports wasmcp_run, and may export _initialize and
    wasmcp_init)."""
    return f'(module {imports}{REACTOR_PRELUDE}\n  (memory (export "memory") {memory})\n{body})'

def filling_reactor(pages, seed):
    """A reactor whose start-up grows memory to pages 64 KiB pages and
    fills all but the first with xorshift words from seed (a WAT i32
    expression), and whose call answers two bytes."""
    return reactor_wat(f'''
  (func (export "wasmcp_init") (local $p i32) (local $x i32)
    (call $growto (i32.const {pages}))
    (local.set $x {seed})
    (local.set $p (i32.const 65536))
    (loop $l
      (local.set $x (i32.xor (local.get $x) (i32.shl (local.get $x) (i32.const 13))))
      (local.set $x (i32.xor (local.get $x) (i32.shr_u (local.get $x) (i32.const 17))))
      (local.set $x (i32.xor (local.get $x) (i32.shl (local.get $x) (i32.const 5))))
      (i32.store (local.get $p) (local.get $x))
      (local.set $p (i32.add (local.get $p) (i32.const 4)))
      (br_if $l (i32.lt_u (local.get $p) (i32.mul (memory.size) (i32.const 65536))))))
  (func (export "wasmcp_run") (drop (call $readin)) (call $out (i32.const 1024) (i32.const 2)))''')

def make_reactors(dirname, mods, manifest_extra=None, init=None, clean=True):
    """Assembles each WAT text in mods (name -> text) into DIR/NAME.wasm,
    with init[NAME] (bytes) as its wasmcp.init section if given, and a
    sidecar manifest naming one tool NAME, "start": "reactor". Returns
    DIR's path."""
    d = os.path.join(ROOT, "tools", dirname)
    if clean:
        shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d, exist_ok=True)
    for n, text in mods.items():
        write_reactor(d, n, text, (init or {}).get(n), (manifest_extra or {}).get(n))
    return d

def write_reactor(d, n, text, init=None, extra=None, stem=None):
    """Writes one reactor of make_reactors into d (as stem, default n),
    the module by a rename so that a watching server never reads half."""
    stem = stem or n
    tmp = os.path.join("/tmp", f"rt-{os.getpid()}-{stem}")
    open(tmp + ".wat", "w").write(text)
    subprocess.check_call(["wat2wasm", tmp + ".wat", "-o", tmp + ".wasm"])
    if init is not None:
        open(tmp + ".init", "wb").write(init)
        subprocess.check_call([BIN["wazero"], "pack", "--init", tmp + ".init", "-o", tmp + ".packed", tmp + ".wasm"],
                              stdout=subprocess.DEVNULL)
        os.replace(tmp + ".packed", tmp + ".wasm")
    m = {"abi": 1, "start": "reactor", "tools": [{"name": n, "description": n, "inputSchema": {"type": "object"}}]}
    m.update(extra or {})
    with open(os.path.join(d, stem + ".manifest.json.tmp"), "w") as f:
        json.dump(m, f)
    os.replace(os.path.join(d, stem + ".manifest.json.tmp"), os.path.join(d, stem + ".manifest.json"))
    shutil.move(tmp + ".wasm", os.path.join(d, stem + ".wasm.tmp"))
    os.replace(os.path.join(d, stem + ".wasm.tmp"), os.path.join(d, stem + ".wasm"))

def snapshot_fds(pid):
    """(memfds named wasmcp-snapshot open, mappings of them) in pid."""
    fds = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if "wasmcp-snapshot" in os.readlink(f"/proc/{pid}/fd/{fd}"):
                fds += 1
        except OSError:
            pass
    maps = sum(1 for l in open(f"/proc/{pid}/maps") if "wasmcp-snapshot" in l)
    return fds, maps
