/*
 * The wasmcp Python runtime: CPython 3.11 embedded as a wasmcp reactor
 * (docs/abi.md; the reactor contract is in docs/languages.md, "Python").
 *
 *   wasmcp_init  once: starts the interpreter and imports the tool from the
 *                bundle on stdin (the module's wasmcp.init section). The host
 *                may snapshot the instance after it.
 *   wasmcp_run   once per call, possibly in a fresh instance made from that
 *                snapshot: refreshes everything start-up froze (random seeds,
 *                argv, environment, preopened directories), reads the
 *                arguments and calls the tool's handler.
 *
 * The Python half of both is the frozen module _wasmcp_boot (boot.py); this
 * file starts the interpreter and provides the builtin module _wasmcp, the
 * host functions and the raw WASI calls that must happen inside each call.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wasi/api.h>
#include <wasi/libc.h>
#include <wasi/libc-environ.h>

extern const struct _frozen wasmcp_frozen[]; /* frozen.c, made by freeze.py */
extern char **environ;

#define IMPORT(name) __attribute__((import_module("wasmcp"), import_name(name)))
IMPORT("log") int32_t host_log(int32_t level, const char *msg, size_t len);
IMPORT("progress") int32_t host_progress(double progress, double total, const char *msg, size_t len);
IMPORT("http_request") int32_t host_http_request(const char *req, size_t len, uint32_t *answer_len);
IMPORT("http_response") int32_t host_http_response(char *buf, size_t len);
/* Every tool's runtime imports ask_all, whether or not its tool asks: the
 * host lets a runtime import it and checks each ask at the call (design.md). */
IMPORT("ask_all") int32_t host_ask_all(const char *req, size_t len, uint32_t *answer_len);
IMPORT("ask_response") int32_t host_ask_response(char *buf, size_t len);

/* ---- _wasmcp: the host functions and per-call WASI state ----------------- */

static PyObject *w_log(PyObject *self, PyObject *args) {
    int level;
    const char *msg;
    Py_ssize_t len;
    if (!PyArg_ParseTuple(args, "is#:log", &level, &msg, &len)) return NULL;
    return PyLong_FromLong(host_log(level, msg, (size_t)len));
}

static PyObject *w_progress(PyObject *self, PyObject *args) {
    double progress, total;
    const char *msg;
    Py_ssize_t len;
    if (!PyArg_ParseTuple(args, "dds#:progress", &progress, &total, &msg, &len)) return NULL;
    return PyLong_FromLong(host_progress(progress, total, msg, (size_t)len));
}

/* A request to the host and its answer, which waits in the host until it
 * is taken, sized first: http_request and http_response, or ask_all and
 * ask_response. (code, answer: bytes | None) */
static PyObject *exchange(PyObject *arg, int32_t (*request)(const char *, size_t, uint32_t *),
                          int32_t (*response)(char *, size_t)) {
    char *req;
    Py_ssize_t len;
    if (PyBytes_AsStringAndSize(arg, &req, &len) < 0) return NULL;
    uint32_t n = 0;
    int32_t rc = request(req, (size_t)len, &n);
    if (rc != 0 && n == 0) return Py_BuildValue("(iO)", rc, Py_None);
    PyObject *answer = PyBytes_FromStringAndSize(NULL, n);
    if (!answer) return NULL;
    int32_t rc2 = response(PyBytes_AS_STRING(answer), n);
    if (rc2 != 0) {
        Py_DECREF(answer);
        return Py_BuildValue("(iO)", rc2, Py_None);
    }
    return Py_BuildValue("(iN)", rc, answer);
}

/* http(request: bytes) -> (code, answer: bytes | None) */
static PyObject *w_http(PyObject *self, PyObject *arg) {
    return exchange(arg, host_http_request, host_http_response);
}

/* ask(asks: bytes) -> (code, answers: bytes | None) */
static PyObject *w_ask(PyObject *self, PyObject *arg) {
    return exchange(arg, host_ask_all, host_ask_response);
}

/* argv() -> list of str, from WASI args_get: the call's, never the snapshot's. */
static PyObject *w_argv(PyObject *self, PyObject *unused) {
    __wasi_size_t argc, size;
    if (__wasi_args_sizes_get(&argc, &size) != 0) return PyList_New(0);
    char **argv = PyMem_RawMalloc((argc + 1) * sizeof(char *));
    char *buf = PyMem_RawMalloc(size + 1);
    PyObject *list = NULL;
    if (!argv || !buf) {
        PyErr_NoMemory();
        goto done;
    }
    if (__wasi_args_get((uint8_t **)argv, (uint8_t *)buf) != 0) {
        list = PyList_New(0);
        goto done;
    }
    list = PyList_New(argc);
    for (__wasi_size_t i = 0; list && i < argc; i++) {
        PyObject *s = PyUnicode_DecodeUTF8(argv[i], (Py_ssize_t)strlen(argv[i]), "surrogateescape");
        if (!s) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, s);
    }
done:
    PyMem_RawFree(argv);
    PyMem_RawFree(buf);
    return list;
}

/* environ() -> list of bytes "NAME=value": wasi-libc's environ read again
 * from WASI environ_get, as it holds the snapshot's (empty) one until then. */
static PyObject *w_environ(PyObject *self, PyObject *unused) {
    __wasilibc_deinitialize_environ();
    __wasilibc_initialize_environ();
    PyObject *list = PyList_New(0);
    for (char **e = environ; list && e && *e; e++) {
        PyObject *b = PyBytes_FromString(*e);
        if (!b || PyList_Append(list, b) < 0) Py_CLEAR(list);
        Py_XDECREF(b);
    }
    return list;
}

/* The preopened directories wasi-libc knew at wasmcp_init; in a snapshot
 * these are none, and the call's are registered by w_preopens. */
static char seen_at_init[64];

static void preopens_walk(int do_register) {
    for (__wasi_fd_t fd = 3;; fd++) {
        __wasi_prestat_t st;
        if (__wasi_fd_prestat_get(fd, &st) != 0) return;
        if (st.tag != __WASI_PREOPENTYPE_DIR) continue;
        if (!do_register) {
            if (fd < sizeof seen_at_init) seen_at_init[fd] = 1;
            continue;
        }
        if (fd < sizeof seen_at_init && seen_at_init[fd]) continue;
        size_t n = st.u.dir.pr_name_len;
        char *name = malloc(n + 1);
        if (!name) return;
        if (__wasi_fd_prestat_dir_name(fd, (uint8_t *)name, n) == 0) {
            name[n] = 0;
            __wasilibc_register_preopened_fd(fd, name);
        }
        free(name);
    }
}

static PyObject *w_preopens(PyObject *self, PyObject *unused) {
    preopens_walk(1);
    Py_RETURN_NONE;
}

/* read_stdin() -> bytes: all of fd 0, with read(2) so no stdio state of the
 * snapshot is involved. */
static PyObject *w_read_stdin(PyObject *self, PyObject *unused) {
    size_t cap = 4096, n = 0;
    char *buf = PyMem_RawMalloc(cap);
    if (!buf) return PyErr_NoMemory();
    for (;;) {
        if (n == cap) {
            char *nb = PyMem_RawRealloc(buf, cap *= 2);
            if (!nb) {
                PyMem_RawFree(buf);
                return PyErr_NoMemory();
            }
            buf = nb;
        }
        ssize_t r = read(0, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            PyMem_RawFree(buf);
            return PyErr_SetFromErrno(PyExc_OSError);
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    PyObject *b = PyBytes_FromStringAndSize(buf, (Py_ssize_t)n);
    PyMem_RawFree(buf);
    return b;
}

/* write(fd, data): all of it, unbuffered. */
static PyObject *w_write(PyObject *self, PyObject *args) {
    int fd;
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "iy*:write", &fd, &b)) return NULL;
    const char *p = b.buf;
    size_t n = (size_t)b.len;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            PyBuffer_Release(&b);
            return PyErr_SetFromErrno(PyExc_OSError);
        }
        p += w;
        n -= (size_t)w;
    }
    PyBuffer_Release(&b);
    Py_RETURN_NONE;
}

/* exit(status): ends the call now, without the interpreter's finalisation
 * (the instance is thrown away anyway). */
static PyObject *w_exit(PyObject *self, PyObject *arg) {
    int status = _PyLong_AsInt(arg);
    if (status == -1 && PyErr_Occurred()) return NULL;
    __wasi_proc_exit((__wasi_exitcode_t)status);
}

static PyMethodDef w_methods[] = {
    {"log", w_log, METH_VARARGS, "log(level, message: str) -> int: wasmcp.log; 0 or a result code."},
    {"progress", w_progress, METH_VARARGS, "progress(progress, total, message: str) -> int: wasmcp.progress."},
    {"http", w_http, METH_O, "http(request: bytes) -> (code, answer: bytes | None): wasmcp.http_request and http_response."},
    {"ask", w_ask, METH_O, "ask(asks: bytes) -> (code, answers: bytes | None): wasmcp.ask_all and ask_response."},
    {"argv", w_argv, METH_NOARGS, "argv() -> list[str]: this call's arguments."},
    {"environ", w_environ, METH_NOARGS, "environ() -> list[bytes]: this call's environment."},
    {"preopens", w_preopens, METH_NOARGS, "preopens(): makes this call's directories visible to open()."},
    {"read_stdin", w_read_stdin, METH_NOARGS, "read_stdin() -> bytes: all of stdin."},
    {"write", w_write, METH_VARARGS, "write(fd, data: bytes): writes all of data."},
    {"exit", w_exit, METH_O, "exit(status): ends the call with this exit status."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef w_module = {
    PyModuleDef_HEAD_INIT, "_wasmcp", "The wasmcp host, for the Python runtime and its SDK.", -1, w_methods,
};

static PyObject *PyInit__wasmcp(void) { return PyModule_Create(&w_module); }

/* ---- the reactor exports ------------------------------------------------ */

static PyObject *boot_run; /* _wasmcp_boot.run, set by wasmcp_init */

static void die(const char *what, PyStatus st) {
    fprintf(stderr, "wasmcp python runtime: %s: %s\n", what, st.err_msg ? st.err_msg : "failed");
    __wasi_proc_exit(1);
}

/* Ends the call after a Python exception that the boot code did not handle
 * itself (it handles the tool's own). */
static void die_py(const char *what) {
    fprintf(stderr, "wasmcp python runtime: %s failed:\n", what);
    PyErr_Print();
    fflush(stderr);
    __wasi_proc_exit(1);
}

__attribute__((export_name("wasmcp_init"))) void wasmcp_init(void) {
    PyStatus st;
    PyPreConfig pre;
    PyPreConfig_InitIsolatedConfig(&pre);
    pre.utf8_mode = 1;
    st = Py_PreInitialize(&pre);
    if (PyStatus_Exception(st)) die("pre-initialising", st);

    PyImport_FrozenModules = wasmcp_frozen;
    if (PyImport_AppendInittab("_wasmcp", PyInit__wasmcp) < 0) die("registering _wasmcp", PyStatus_Error("inittab"));

    PyConfig c;
    PyConfig_InitIsolatedConfig(&c);
    c.site_import = 0;
    c.write_bytecode = 0;
    c.pathconfig_warnings = 0;
    c.install_signal_handlers = 0;
    c.buffered_stdio = 0;
    c.use_frozen_modules = 1;
    /* Modules come from the frozen table and the bundle, never from files. */
    c.module_search_paths_set = 1;
    st = PyConfig_SetString(&c, &c.program_name, L"python");
    if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&c);
    PyConfig_Clear(&c);
    if (PyStatus_Exception(st)) die("initialising", st);
    preopens_walk(0);

    PyObject *boot = PyImport_ImportModule("_wasmcp_boot");
    if (!boot) die_py("importing _wasmcp_boot");
    boot_run = PyObject_GetAttrString(boot, "run");
    PyObject *r = boot_run ? PyObject_CallMethod(boot, "init", NULL) : NULL;
    Py_DECREF(boot);
    if (!r) die_py("starting the tool");
    Py_DECREF(r);
}

__attribute__((export_name("wasmcp_run"))) void wasmcp_run(void) {
    if (!boot_run) {
        fprintf(stderr, "wasmcp python runtime: wasmcp_run before wasmcp_init\n");
        __wasi_proc_exit(1);
    }
    PyObject *r = PyObject_CallNoArgs(boot_run);
    if (!r) die_py("the call");
    Py_DECREF(r);
}
