package sandbox

import (
	"fmt"
	"maps"
	"slices"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
)

// wasiModule is the import module of WASI preview 1.
const wasiModule = "wasi_snapshot_preview1"

// wasiFunctions are the functions of WASI preview 1, which both engines
// provide. The list is the frozen preview 1 specification's; their types
// are the engines' own (readProvided).
var wasiFunctions = map[string]bool{
	"args_get": true, "args_sizes_get": true,
	"environ_get": true, "environ_sizes_get": true,
	"clock_res_get": true, "clock_time_get": true,
	"fd_advise": true, "fd_allocate": true, "fd_close": true, "fd_datasync": true,
	"fd_fdstat_get": true, "fd_fdstat_set_flags": true, "fd_fdstat_set_rights": true,
	"fd_filestat_get": true, "fd_filestat_set_size": true, "fd_filestat_set_times": true,
	"fd_pread": true, "fd_prestat_get": true, "fd_prestat_dir_name": true,
	"fd_pwrite": true, "fd_read": true, "fd_readdir": true, "fd_renumber": true,
	"fd_seek": true, "fd_sync": true, "fd_tell": true, "fd_write": true,
	"path_create_directory": true, "path_filestat_get": true, "path_filestat_set_times": true,
	"path_link": true, "path_open": true, "path_readlink": true, "path_remove_directory": true,
	"path_rename": true, "path_symlink": true, "path_unlink_file": true,
	"poll_oneoff": true, "proc_exit": true, "proc_raise": true, "sched_yield": true,
	"random_get":  true,
	"sock_accept": true, "sock_recv": true, "sock_send": true, "sock_shutdown": true,
}

// readProvided reads, from an engine's definitions (lookup), the type of
// each function a module may import: those of WASI preview 1 and of the
// wasmcp host module. The types are the engine's, so that a module is
// checked against what it would be linked to; an engine that lacks one of
// the functions does not start.
func readProvided(lookup func(module, name string) (wasmbin.FuncType, bool)) (provided, error) {
	names := map[string][]string{wasiModule: slices.Collect(maps.Keys(wasiFunctions))}
	for _, f := range abi.HostFunctions {
		names[abi.HostModule] = append(names[abi.HostModule], f.Name)
	}
	out := provided{}
	for module, list := range names {
		out[module] = map[string]wasmbin.FuncType{}
		for _, name := range list {
			t, ok := lookup(module, name)
			if !ok {
				return nil, fmt.Errorf("the engine defines no function %s.%s", module, name)
			}
			out[module][name] = t
		}
	}
	return out, nil
}
