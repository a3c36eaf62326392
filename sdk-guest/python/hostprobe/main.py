"""A probe of the host as a Python tool reaches it: the e2e tests call it
with a policy that grants an HTTP host, a variable and a directory, and
check what each of the SDK's ways to the host returns."""

import os

import wasmcp


@wasmcp.tool
def hostprobe(url=None, path=None, env=None, progress=False):
    out = {}
    if url is not None:
        try:
            r = wasmcp.http(url, headers={"Accept": "text/plain"})
            out["http"] = {"status": r.status, "body": r.text}
        except wasmcp.HostError as e:
            out["http"] = {"code": e.code, "error": str(e)}
    if path is not None:
        with open(path) as f:
            out["file"] = f.read()
    if env is not None:
        out["env"] = os.environ.get(env)
    if progress:
        # The second report does not grow: the host refuses it with ORDER.
        out["progress"] = [wasmcp.progress(1, 2, "half"), wasmcp.progress(1, 2, "again")]
    return out
