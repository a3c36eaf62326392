/*
 * compile.c: qjs-compile, which compiles one JavaScript module to the
 * QuickJS bytecode that the runtime (runtime.c) loads. Built natively from
 * the same QuickJS sources as the runtime, since bytecode is only readable
 * by the QuickJS version that wrote it.
 *
 *   qjs-compile IN.js OUT            bytecode, for `wasmcp pack --init`
 *   qjs-compile --c-array NAME IN.js OUT.c
 *                                    bytecode as a C array NAME and its
 *                                    size NAME_size (the SDK, linked into
 *                                    the runtime)
 *
 * The source text is left out of the bytecode; line numbers stay, so stack
 * traces still point into IN.js. Imports are not resolved here: the runtime
 * resolves "wasmcp" when it loads the module.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quickjs.h"

static char *slurp(const char *path, size_t *plen)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, n;

    if (!f)
        return NULL;
    for (;;) {
        if (cap - len < 65536) {
            char *nb = realloc(buf, cap + 65536 + 1);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
            cap += 65536;
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
    }
    fclose(f);
    buf[len] = '\0';
    *plen = len;
    return buf;
}

/* Compiling a module loads the modules it imports; the runtime provides
 * them, so here each is a stand-in that is never run. */
static int stand_in_init(JSContext *ctx, JSModuleDef *m)
{
    return 0;
}

static JSModuleDef *stand_in(JSContext *ctx, const char *name, void *opaque)
{
    return JS_NewCModule(ctx, name, stand_in_init);
}

static int usage(void)
{
    fprintf(stderr, "usage: qjs-compile IN.js OUT\n       qjs-compile --c-array NAME IN.js OUT.c\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *array = NULL, *in, *outp, *name;
    JSRuntime *rt;
    JSContext *ctx;
    JSValue obj;
    uint8_t *bc;
    size_t len, n;
    char *src;
    FILE *out;

    if (argc == 5 && !strcmp(argv[1], "--c-array"))
        array = argv[2];
    else if (argc != 3)
        return usage();
    in = argv[argc - 2];
    outp = argv[argc - 1];

    src = slurp(in, &len);
    if (!src) {
        fprintf(stderr, "qjs-compile: cannot read %s: %s\n", in, strerror(errno));
        return 1;
    }
    rt = JS_NewRuntime();
    ctx = rt ? JS_NewContext(rt) : NULL;
    if (!ctx) {
        fprintf(stderr, "qjs-compile: out of memory\n");
        return 1;
    }
    JS_SetStripInfo(rt, JS_STRIP_SOURCE);
    JS_SetModuleLoaderFunc(rt, NULL, stand_in, NULL);
    /* Stack traces name the file, not the path it was built from. */
    name = strrchr(in, '/');
    name = name ? name + 1 : in;
    obj = JS_Eval(ctx, src, len, name, JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY);
    free(src);
    if (JS_IsException(obj)) {
        JSValue e = JS_GetException(ctx);
        JSValue st = JS_GetPropertyStr(ctx, e, "stack");
        const char *msg = JS_ToCString(ctx, e), *where = JS_IsString(st) ? JS_ToCString(ctx, st) : NULL;
        fprintf(stderr, "%s: %s\n%s", in, msg ? msg : "syntax error", where ? where : "");
        return 1;
    }
    bc = JS_WriteObject(ctx, &n, obj, JS_WRITE_OBJ_BYTECODE);
    if (!bc) {
        fprintf(stderr, "qjs-compile: out of memory writing the bytecode\n");
        return 1;
    }
    out = fopen(outp, "wb");
    if (!out) {
        fprintf(stderr, "qjs-compile: cannot write %s: %s\n", outp, strerror(errno));
        return 1;
    }
    if (array) {
        fprintf(out, "#include <stdint.h>\nconst uint32_t %s_size = %zu;\nconst uint8_t %s[%zu] = {", array, n, array, n);
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%s%u,", i % 20 ? "" : "\n", bc[i]);
        fprintf(out, "\n};\n");
    } else {
        fwrite(bc, 1, n, out);
    }
    if (fclose(out) != 0) {
        fprintf(stderr, "qjs-compile: cannot write %s: %s\n", outp, strerror(errno));
        return 1;
    }
    js_free(ctx, bc);
    JS_FreeValue(ctx, obj);
    JS_FreeContext(ctx);
    JS_FreeRuntime(rt);
    return 0;
}
