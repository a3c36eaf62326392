/*
 * runtime.c: the QuickJS runtime of wasmcp's JavaScript tools, a WASI
 * preview 1 reactor implementing the host's reactor contract (docs/abi.md,
 * "Reactor tools"):
 *
 *   wasmcp_init  creates the interpreter, reads the tool's bytecode (the
 *                module's wasmcp.init section) from stdin and evaluates it,
 *                so the tool's top level runs once, before any call;
 *   wasmcp_run   runs one call: reseeds Math.random, reads the tool's name
 *                (argv[1]) and arguments (stdin) as of this call, and hands
 *                them to the SDK (wasmcp.js), which calls the handler and
 *                writes the result.
 *
 * The host may snapshot memory after wasmcp_init and start every call from
 * that image, so wasmcp_run must not trust anything init computed from the
 * outside world: the PRNG state, argv, stdin and the clocks are all read
 * again here.
 *
 * quickjs.c is compiled into this file so that it can reach the context's
 * PRNG state (ctx->random_state), which QuickJS offers no API for.
 */
#include "quickjs.c"
/* quickjs.c poisons the libc allocator names for its own code. */
#undef malloc
#undef free
#undef realloc

#include <unistd.h>
#include <wasi/api.h>

/* The SDK's bytecode (wasmcp.js, compiled by qjs-compile at build time). */
extern const uint8_t wasmcp_sdk[];
extern const uint32_t wasmcp_sdk_size;

#define IMPORT(name) __attribute__((import_module("wasmcp"), import_name(name)))
IMPORT("log") int32_t host_log(int32_t level, const char *msg, size_t len);
IMPORT("progress") int32_t host_progress(double progress, double total, const char *msg, size_t len);
IMPORT("http_request") int32_t host_http_request(const char *req, size_t len, uint32_t *answer_len);
IMPORT("http_response") int32_t host_http_response(char *buf, size_t len);
/* Every tool's runtime imports ask_all, whether or not its tool asks: the
 * host lets a runtime import it and checks each ask at the call (design.md). */
IMPORT("ask_all") int32_t host_ask_all(const char *req, size_t len, uint32_t *answer_len);
IMPORT("ask_response") int32_t host_ask_response(char *buf, size_t len);

/* QuickJS counts its stack (WebAssembly's shadow stack in linear memory)
 * against this limit and throws a RangeError past it, well before the
 * 1 MiB of that stack (build-runtime) runs out: about 2,000 nested JS calls.
 * The engine's own call stack is separate: wasmtime's may run out first,
 * which the host reports as a call-stack overflow. */
#define STACK_LIMIT (640 * 1024)

static JSRuntime *rt;
static JSContext *ctx;
static JSValue dispatch = JS_UNDEFINED; /* the SDK's, set by its register() */

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static void write_str(int fd, const char *s)
{
    write_all(fd, s, strlen(s));
}

static char *read_all(int fd, size_t *plen)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1), *nb;

    for (;;) {
        ssize_t n;
        if (!buf)
            return NULL;
        if (len == cap) {
            cap *= 2;
            nb = realloc(buf, cap + 1);
            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
        }
        n = read(fd, buf + len, cap - len);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    *plen = len;
    return buf;
}

/* Reports the pending exception on stderr as one line for the model (the
 * host shows it stderr's tail), then the stack for the operator. */
static void report_exception(const char *what)
{
    JSValue e = JS_GetException(ctx);
    const char *s = JS_ToCString(ctx, e);

    write_str(2, what);
    write_str(2, s ? s : "an exception that cannot be shown");
    write_str(2, "\n");
    JS_FreeCString(ctx, s);
    if (JS_IsError(ctx, e)) {
        JSValue st = JS_GetPropertyStr(ctx, e, "stack");
        const char *t = JS_IsString(st) ? JS_ToCString(ctx, st) : NULL;
        if (t)
            write_str(2, t);
        JS_FreeCString(ctx, t);
        JS_FreeValue(ctx, st);
    }
    JS_FreeValue(ctx, e);
}

/* Runs queued promise jobs until none is left, then returns v's outcome: its
 * value, or JS_EXCEPTION with the rejection pending. */
static JSValue settle(JSValue v)
{
    JSContext *c;
    JSValue r;
    int state, ran;

    if (JS_IsException(v))
        return v;
    /* A job that throws has nowhere to report it (promise reactions turn
     * errors into rejections themselves); drop it and run the rest. */
    while ((ran = JS_ExecutePendingJob(rt, &c)) != 0)
        if (ran < 0)
            JS_FreeValue(c, JS_GetException(c));
    state = JS_PromiseState(ctx, v);
    if (state < 0) /* not a promise */
        return v;
    switch (state) {
    case JS_PROMISE_FULFILLED:
        r = JS_PromiseResult(ctx, v);
        JS_FreeValue(ctx, v);
        return r;
    case JS_PROMISE_REJECTED:
        r = JS_PromiseResult(ctx, v);
        JS_FreeValue(ctx, v);
        return JS_Throw(ctx, r);
    default:
        JS_FreeValue(ctx, v);
        return JS_ThrowInternalError(ctx, "the tool's promise never settled: a tool has no timers or events, so "
                                          "nothing can resolve it once the call's code has run");
    }
}

/* ---- "wasmcp:host", the natives the SDK builds on ------------------------ */

/* register(dispatch): the SDK hands over the function wasmcp_run calls. */
static JSValue h_register(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv)
{
    if (!JS_IsFunction(c, argv[0]))
        return JS_ThrowTypeError(c, "register needs a function");
    JS_FreeValue(c, dispatch);
    dispatch = JS_DupValue(c, argv[0]);
    return JS_UNDEFINED;
}

/* write(fd, string): stdout (1) or stderr (2), as UTF-8. */
static JSValue h_write(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv)
{
    int32_t fd;
    size_t len;
    const char *s;

    if (JS_ToInt32(c, &fd, argv[0]) || (fd != 1 && fd != 2))
        return JS_ThrowRangeError(c, "write: fd must be 1 or 2");
    s = JS_ToCStringLen(c, &len, argv[1]);
    if (!s)
        return JS_EXCEPTION;
    write_all(fd, s, len);
    JS_FreeCString(c, s);
    return JS_UNDEFINED;
}

/* log(level, message) -> result code */
static JSValue h_log(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv)
{
    int32_t level;
    size_t len;
    const char *s;
    int32_t rc;

    if (JS_ToInt32(c, &level, argv[0]))
        return JS_EXCEPTION;
    s = JS_ToCStringLen(c, &len, argv[1]);
    if (!s)
        return JS_EXCEPTION;
    rc = host_log(level, s, len);
    JS_FreeCString(c, s);
    return JS_NewInt32(c, rc);
}

/* progress(progress, total, message) -> result code */
static JSValue h_progress(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv)
{
    double p, t;
    size_t len;
    const char *s;
    int32_t rc;

    if (JS_ToFloat64(c, &p, argv[0]) || JS_ToFloat64(c, &t, argv[1]))
        return JS_EXCEPTION;
    s = JS_ToCStringLen(c, &len, argv[2]);
    if (!s)
        return JS_EXCEPTION;
    rc = host_progress(p, t, s, len);
    JS_FreeCString(c, s);
    return JS_NewInt32(c, rc);
}

/* A request to the host and its answer: http_request and http_response, or
 * ask_all and ask_response. requestJSON -> [code, answerJSON or undefined] */
static JSValue exchange(JSContext *c, JSValueConst arg,
                        int32_t (*request)(const char *, size_t, uint32_t *), int32_t (*response)(char *, size_t))
{
    size_t len;
    uint32_t n = 0;
    const char *s = JS_ToCStringLen(c, &len, arg);
    int32_t code, rc;
    JSValue pair, answer = JS_UNDEFINED;
    char *buf;

    if (!s)
        return JS_EXCEPTION;
    code = request(s, len, &n);
    JS_FreeCString(c, s);
    /* The answer waits in the host until taken, sized first. */
    if (n > 0) {
        buf = js_malloc(c, n);
        if (!buf)
            return JS_EXCEPTION;
        rc = response(buf, n);
        if (rc == 0)
            answer = JS_NewStringLen(c, buf, n);
        else
            code = rc;
        js_free(c, buf);
        if (JS_IsException(answer))
            return answer;
    }
    pair = JS_NewArray(c);
    JS_SetPropertyUint32(c, pair, 0, JS_NewInt32(c, code));
    JS_SetPropertyUint32(c, pair, 1, answer);
    return pair;
}

static JSValue h_http(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv)
{
    return exchange(c, argv[0], host_http_request, host_http_response);
}

static JSValue h_ask(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv)
{
    return exchange(c, argv[0], host_ask_all, host_ask_response);
}

static const JSCFunctionListEntry host_funcs[] = {
    JS_CFUNC_DEF("register", 1, h_register),
    JS_CFUNC_DEF("write", 2, h_write),
    JS_CFUNC_DEF("log", 2, h_log),
    JS_CFUNC_DEF("progress", 3, h_progress),
    JS_CFUNC_DEF("http", 1, h_http),
    JS_CFUNC_DEF("ask", 1, h_ask),
};

static int host_module_init(JSContext *c, JSModuleDef *m)
{
    return JS_SetModuleExportList(c, m, host_funcs, countof(host_funcs));
}

/* A tool is one file: it may import the SDK ("wasmcp") and nothing else. */
static JSModuleDef *load_module(JSContext *c, const char *name, void *opaque)
{
    JSModuleDef *m;
    JSValue obj;

    if (!strcmp(name, "wasmcp:host")) {
        m = JS_NewCModule(c, name, host_module_init);
        if (m)
            JS_AddModuleExportList(c, m, host_funcs, countof(host_funcs));
        return m;
    }
    if (strcmp(name, "wasmcp") != 0) {
        JS_ThrowReferenceError(c, "cannot import \"%s\": a tool's code is one file that may import only \"wasmcp\"; "
                                  "bundle its other modules into it (docs/languages.md)", name);
        return NULL;
    }
    obj = JS_ReadObject(c, wasmcp_sdk, wasmcp_sdk_size, JS_READ_OBJ_BYTECODE);
    if (JS_IsException(obj))
        return NULL;
    m = JS_VALUE_GET_PTR(obj);
    JS_FreeValue(c, obj); /* the runtime keeps the module */
    return m;
}

/* console.log and friends write a line to stderr: stdout is the result. */
static JSValue js_console(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv)
{
    for (int i = 0; i < argc; i++) {
        size_t len;
        const char *s = JS_ToCStringLen(c, &len, argv[i]);
        if (!s)
            return JS_EXCEPTION;
        if (i)
            write_all(2, " ", 1);
        write_all(2, s, len);
        JS_FreeCString(c, s);
    }
    write_all(2, "\n", 1);
    return JS_UNDEFINED;
}

static const JSCFunctionListEntry console_funcs[] = {
    JS_CFUNC_DEF("log", 1, js_console),   JS_CFUNC_DEF("info", 1, js_console),
    JS_CFUNC_DEF("warn", 1, js_console),  JS_CFUNC_DEF("error", 1, js_console),
    JS_CFUNC_DEF("debug", 1, js_console),
};

__attribute__((export_name("wasmcp_init"))) void wasmcp_init(void)
{
    size_t len;
    char *code;
    JSValue obj, global, console, r;

    rt = JS_NewRuntime();
    if (!rt) {
        write_str(2, "wasmcp js runtime: out of memory creating the interpreter\n");
        __wasi_proc_exit(1);
    }
    JS_SetMaxStackSize(rt, STACK_LIMIT);
    JS_SetModuleLoaderFunc(rt, NULL, load_module, NULL);
    ctx = JS_NewContext(rt);
    if (!ctx) {
        write_str(2, "wasmcp js runtime: out of memory creating the interpreter\n");
        __wasi_proc_exit(1);
    }
    global = JS_GetGlobalObject(ctx);
    console = JS_NewObject(ctx);
    JS_SetPropertyFunctionList(ctx, console, console_funcs, countof(console_funcs));
    JS_SetPropertyStr(ctx, global, "console", console);
    JS_FreeValue(ctx, global);

    code = read_all(0, &len);
    if (!code) {
        write_str(2, "wasmcp js runtime: out of memory reading the tool's code\n");
        __wasi_proc_exit(1);
    }
    if (len == 0) {
        write_str(2, "wasmcp js runtime: the module carries no tool code (its wasmcp.init section is empty); "
                     "build it with the tool's ./build, which packs the compiled script in\n");
        __wasi_proc_exit(1);
    }
    obj = JS_ReadObject(ctx, (const uint8_t *)code, len, JS_READ_OBJ_BYTECODE);
    free(code);
    if (JS_IsException(obj)) {
        report_exception("the tool's code could not be loaded (was it compiled for this runtime?): ");
        __wasi_proc_exit(1);
    }
    if (JS_VALUE_GET_TAG(obj) != JS_TAG_MODULE || JS_ResolveModule(ctx, obj) < 0) {
        if (JS_VALUE_GET_TAG(obj) != JS_TAG_MODULE)
            JS_ThrowTypeError(ctx, "the tool's code is not a module");
        JS_FreeValue(ctx, obj);
        report_exception("the tool's code could not be loaded: ");
        __wasi_proc_exit(1);
    }
    r = settle(JS_EvalFunction(ctx, obj));
    if (JS_IsException(r)) {
        report_exception("the tool's code failed as it started: ");
        __wasi_proc_exit(1);
    }
    JS_FreeValue(ctx, r);
    if (JS_IsUndefined(dispatch)) {
        write_str(2, "wasmcp js runtime: the tool's code did not import \"wasmcp\"\n");
        __wasi_proc_exit(1);
    }
    /* Whatever start-up left behind need not be in every call's image. */
    JS_RunGC(rt);
}

/* reseed gives Math.random a fresh state from the host's random source, so
 * that calls started from one snapshot do not replay one sequence. */
static void reseed(void)
{
    uint64_t s = 0;

    if (__wasi_random_get((uint8_t *)&s, sizeof s) != 0) {
        write_str(2, "wasmcp js runtime: the host's random_get failed, so Math.random cannot be seeded for this call\n");
        __wasi_proc_exit(1);
    }
    /* xorshift64* needs a state other than 0 (odds of 2^-64). */
    ctx->random_state = s ? s : 0x9E3779B97F4A7C15ull;
}

/* tool_name is argv[1] of this call, or "" without one. */
static char *tool_name(void)
{
    __wasi_size_t argc = 0, size = 0;
    char **argv, *buf, *name;

    if (__wasi_args_sizes_get(&argc, &size) != 0 || argc < 2)
        return strdup("");
    argv = calloc(argc, sizeof *argv);
    buf = malloc(size);
    if (!argv || !buf || __wasi_args_get((uint8_t **)argv, (uint8_t *)buf) != 0)
        name = strdup("");
    else
        name = strdup(argv[1]);
    free(argv);
    free(buf);
    return name;
}

__attribute__((export_name("wasmcp_run"))) void wasmcp_run(void)
{
    size_t len;
    char *input, *name;
    JSValue args[2], r;
    int32_t status = 1;

    if (!ctx) {
        write_str(2, "wasmcp js runtime: wasmcp_run was called before wasmcp_init, which loads the tool's code\n");
        __wasi_proc_exit(1);
    }
    JS_UpdateStackTop(rt);
    reseed();
    name = tool_name();
    input = read_all(0, &len);
    if (!name || !input) {
        write_str(2, "wasmcp js runtime: out of memory reading the call\n");
        __wasi_proc_exit(1);
    }
    args[0] = JS_NewString(ctx, name);
    args[1] = JS_NewStringLen(ctx, input, len);
    free(name);
    free(input);
    r = settle(JS_Call(ctx, dispatch, JS_UNDEFINED, 2, (JSValueConst *)args));
    JS_FreeValue(ctx, args[0]);
    JS_FreeValue(ctx, args[1]);
    if (JS_IsException(r))
        report_exception("wasmcp js runtime: ");
    else if (JS_ToInt32(ctx, &status, r))
        status = 1;
    JS_FreeValue(ctx, r);
    if (status != 0)
        __wasi_proc_exit(status);
}
