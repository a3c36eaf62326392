package sandbox

// wasiModule is the import module of WASI preview 1.
const wasiModule = "wasi_snapshot_preview1"

// wasiFunctions are the functions of WASI preview 1, which both engines
// provide. The list is the frozen preview 1 specification's.
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
