"""Runs an attack script against another build: WASMCP_BIN=path python3 with_bin.py SCRIPT."""
import os, sys
import lib
lib.BIN[lib.engine()] = os.environ["WASMCP_BIN"]
sys.argv = sys.argv[1:]
exec(compile(open(sys.argv[0]).read(), sys.argv[0], "exec"))
