"""A probe of what a Python tool sees in each call made from one snapshot:
the e2e tests bundle it, call it twice, and check what must differ (fresh)
and what the interpreter fixed at start-up and the runtime cannot renew
(frozen), which docs/languages.md lists."""

import os
import random
import secrets
import sys
import tempfile
import time
import uuid

import wasmcp

# Computed at import, in a snapshot by its start-up.
IMPORTED_AT = time.time_ns()
RANDOM_AT_IMPORT = random.random()
MADE_AT_IMPORT = random.Random()


@wasmcp.tool
def freshness():
    return {
        "args": sys.argv,
        "fresh": {
            "random.random": repr(random.random()),
            "random.Random()": repr(random.Random().random()),
            "os.urandom": os.urandom(16).hex(),
            "secrets.token_hex": secrets.token_hex(16),
            "uuid.uuid4": str(uuid.uuid4()),
            "tempfile name": next(tempfile._get_candidate_names()),
            "time.time_ns": str(time.time_ns()),
        },
        "frozen": {
            "hash(str)": str(hash("wasmcp")),
            "set order": "".join(set("abcdefgh")),
            "random.Random made at import": repr(MADE_AT_IMPORT.random()),
            "random.random at import": repr(RANDOM_AT_IMPORT),
            "import time": str(IMPORTED_AT),
        },
    }
