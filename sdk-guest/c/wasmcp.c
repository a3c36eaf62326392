/* wasmcp.c: the C guest SDK for wasmcp tools. See wasmcp.h. */
#include "wasmcp.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Allocation ---------------------------------------------------------- */

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        wasmcp_fail("out of memory (wanted %zu bytes)", n);
    return p;
}

/* ---- UTF-8 --------------------------------------------------------------- */

/* The length of the well-formed UTF-8 sequence at s, or 0: overlong forms,
 * surrogates and code points past U+10FFFF are ill-formed (RFC 3629). */
static size_t utf8_valid(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned c = s[0];
    size_t need, i;
    uint32_t v;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
        v = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        v = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        v = c & 0x07;
    } else {
        return 0;
    }
    if (n < need)
        return 0;
    for (i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3F);
    }
    if ((need == 3 && v < 0x800) || (need == 4 && v < 0x10000) || v > 0x10FFFF ||
        (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return need;
}

size_t wasmcp_utf8_decode(const char *s, size_t len, uint32_t *cp)
{
    size_t n;
    if (len == 0) {
        *cp = 0xFFFD;
        return 0;
    }
    n = utf8_valid((const unsigned char *)s, len, cp);
    if (n == 0) {
        *cp = 0xFFFD;
        return 1;
    }
    return n;
}

static size_t utf8_encode(uint32_t cp, char *buf)
{
    if (cp < 0x80) {
        buf[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        buf[0] = (char)(0xC0 | cp >> 6);
        buf[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        buf[0] = (char)(0xE0 | cp >> 12);
        buf[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        buf[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    buf[0] = (char)(0xF0 | cp >> 18);
    buf[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    buf[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    buf[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* How much of s (len bytes) fits in max bytes without splitting a
 * character, which the host would refuse as not UTF-8. */
static size_t utf8_cut(const char *s, size_t len, size_t max)
{
    if (len <= max)
        return len;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--;
    return max;
}

/* ---- The call ------------------------------------------------------------ */

const char *wasmcp_tool(int argc, char **argv)
{
    return argc >= 2 ? argv[1] : NULL;
}

const char *wasmcp_args(size_t *len)
{
    static char *buf;
    static size_t n;
    if (!buf) {
        size_t cap = 4096;
        buf = xrealloc(NULL, cap);
        for (;;) {
            size_t got;
            if (cap - n < 2) {
                if (cap > (size_t)-1 / 2)
                    wasmcp_fail("the arguments are too large");
                cap *= 2;
                buf = xrealloc(buf, cap);
            }
            got = fread(buf + n, 1, cap - n - 1, stdin);
            n += got;
            if (got == 0) {
                if (ferror(stdin))
                    wasmcp_fail("reading the arguments from stdin failed");
                break;
            }
        }
        buf[n] = '\0';
    }
    if (len)
        *len = n;
    return buf;
}

void wasmcp_text(const char *s, size_t len)
{
    if ((len && fwrite(s, 1, len, stdout) != len) || fflush(stdout) != 0)
        wasmcp_fail("writing the result to stdout failed");
}

void wasmcp_fail(const char *fmt, ...)
{
    /* The host shows the model the last 2 KiB of stderr. */
    static char buf[2048 + 4];
    va_list ap;
    int n;
    size_t len, i;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) {
        strcpy(buf, "the tool failed (and its error message could not be formatted)");
        n = (int)strlen(buf);
    }
    len = utf8_cut(buf, (size_t)n, 2048);
    for (i = 0; i < len; i++)
        if (buf[i] == '\n' || buf[i] == '\r')
            buf[i] = ' ';
    fwrite(buf, 1, len, stderr);
    fputc('\n', stderr);
    exit(1);
}

/* ---- Host functions ------------------------------------------------------ */

#ifndef __wasm__
/* Native stand-ins, weak so that a test can define its own. They check what
 * the host checks that this SDK cannot rule out itself. */
static const char *const level_names[] = {"debug", "info", "notice", "warning",
                                          "error", "critical", "alert", "emergency"};

__attribute__((weak)) int32_t wasmcp_host_log(int32_t level, const char *msg, size_t len)
{
    if (level < 0 || level > 7)
        return WASMCP_INVALID;
    if (len > WASMCP_MAX_MESSAGE)
        return WASMCP_TOO_LONG;
    fprintf(stderr, "[%s] %.*s\n", level_names[level], (int)len, msg);
    return WASMCP_OK;
}

__attribute__((weak)) int32_t wasmcp_host_progress(double progress, double total, const char *msg,
                                                   size_t len)
{
    if (!isfinite(progress) || isinf(total))
        return WASMCP_INVALID;
    if (len > WASMCP_MAX_MESSAGE)
        return WASMCP_TOO_LONG;
    fprintf(stderr, "[progress %g/%g] %.*s\n", progress, total, (int)len, msg);
    return WASMCP_OK;
}

/* There is no network natively: HTTP is refused as the Go SDK refuses it,
 * with an answer that says why. */
static const char no_host[] = "{\"error\":\"no wasmcp host: HTTP needs the tool to run under wasmcp\"}";

__attribute__((weak)) int32_t wasmcp_host_http_request(const char *req, size_t len, uint32_t *answer_len)
{
    (void)req;
    (void)len;
    *answer_len = sizeof no_host - 1;
    return WASMCP_DENIED;
}

__attribute__((weak)) int32_t wasmcp_host_http_response(char *buf, size_t len)
{
    if (len < sizeof no_host - 1)
        return WASMCP_TOO_LONG;
    memcpy(buf, no_host, sizeof no_host - 1);
    return WASMCP_OK;
}

/* Nor is there a client to ask. */
static const char no_client[] = "{\"error\":\"no wasmcp host: asking the client needs the tool to run under wasmcp\"}";

static int32_t no_ask(uint32_t *answer_len)
{
    *answer_len = sizeof no_client - 1;
    return WASMCP_DENIED;
}

__attribute__((weak)) int32_t wasmcp_host_elicit(const char *req, size_t len, uint32_t *answer_len)
{
    (void)req;
    (void)len;
    return no_ask(answer_len);
}

__attribute__((weak)) int32_t wasmcp_host_create_message(const char *req, size_t len, uint32_t *answer_len)
{
    (void)req;
    (void)len;
    return no_ask(answer_len);
}

__attribute__((weak)) int32_t wasmcp_host_list_roots(const char *req, size_t len, uint32_t *answer_len)
{
    (void)req;
    (void)len;
    return no_ask(answer_len);
}

__attribute__((weak)) int32_t wasmcp_host_ask_response(char *buf, size_t len)
{
    if (len < sizeof no_client - 1)
        return WASMCP_TOO_LONG;
    memcpy(buf, no_client, sizeof no_client - 1);
    return WASMCP_OK;
}
#endif

int wasmcp_log(int level, const char *fmt, ...)
{
    /* Room past the limit so that utf8_cut can see the character it cuts. */
    static char buf[WASMCP_MAX_MESSAGE + 5];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return WASMCP_INVALID;
    return wasmcp_host_log(level, buf, utf8_cut(buf, (size_t)n, WASMCP_MAX_MESSAGE));
}

int wasmcp_progress(double progress, double total, const char *msg)
{
    if (!msg)
        msg = "";
    return wasmcp_host_progress(progress, total, msg, utf8_cut(msg, strlen(msg), WASMCP_MAX_MESSAGE));
}

/* ---- Reading JSON: validation -------------------------------------------- */

typedef struct {
    const unsigned char *start, *p, *end;
    char *err;
    size_t errsize;
} parser;

static int is_ws(unsigned c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_digit(unsigned c)
{
    return c >= '0' && c <= '9';
}

static int hex_value(unsigned c)
{
    if (c >= '0' && c <= '9')
        return (int)(c - '0');
    if (c >= 'a' && c <= 'f')
        return (int)(c - 'a' + 10);
    if (c >= 'A' && c <= 'F')
        return (int)(c - 'A' + 10);
    return -1;
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && is_ws(*ps->p))
        ps->p++;
}

/* Describes the byte at p for an error message. */
static const char *describe(const parser *ps, const unsigned char *p, char *buf, size_t size)
{
    if (p >= ps->end)
        return "the end of the input";
    if (*p >= 0x20 && *p < 0x7F)
        snprintf(buf, size, "'%c'", *p);
    else
        snprintf(buf, size, "byte 0x%02X", *p);
    return buf;
}

static int fail_at(parser *ps, const unsigned char *at, const char *fmt, ...) WASMCP_PRINTF(3, 4);

static int fail_at(parser *ps, const unsigned char *at, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (!ps->errsize)
        return -1;
    n = snprintf(ps->err, ps->errsize, "invalid JSON at byte %zu: ", (size_t)(at - ps->start));
    if (n >= 0 && (size_t)n < ps->errsize) {
        va_start(ap, fmt);
        vsnprintf(ps->err + n, ps->errsize - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int unexpected(parser *ps, const char *wanted)
{
    char buf[16];
    if (ps->p >= ps->end)
        return fail_at(ps, ps->p, "unexpected end of input; expected %s", wanted);
    return fail_at(ps, ps->p, "expected %s, found %s", wanted, describe(ps, ps->p, buf, sizeof buf));
}

static int scan_string(parser *ps)
{
    const unsigned char *p = ps->p + 1;
    while (p < ps->end) {
        unsigned c = *p;
        uint32_t cp;
        size_t n;
        if (c == '"') {
            ps->p = p + 1;
            return 0;
        }
        if (c == '\\') {
            char buf[16];
            int i;
            if (p + 1 >= ps->end)
                break;
            switch (p[1]) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                p += 2;
                continue;
            case 'u':
                for (i = 2; i < 6; i++) {
                    if (p + i >= ps->end)
                        return fail_at(ps, p, "unterminated string");
                    if (hex_value(p[i]) < 0)
                        return fail_at(ps, p, "invalid escape: \\u needs four hex digits, found %s",
                                       describe(ps, p + i, buf, sizeof buf));
                }
                p += 6;
                continue;
            default:
                if (p[1] >= 0x20 && p[1] < 0x7F)
                    return fail_at(ps, p, "invalid escape \\%c", p[1]);
                return fail_at(ps, p, "invalid escape: byte 0x%02X after \\", p[1]);
            }
        }
        if (c < 0x20)
            return fail_at(ps, p, "control character U+%04X in a string must be escaped", c);
        if (c < 0x80) {
            p++;
            continue;
        }
        n = utf8_valid(p, (size_t)(ps->end - p), &cp);
        if (!n)
            return fail_at(ps, p, "invalid UTF-8 in a string");
        p += n;
    }
    return fail_at(ps, ps->end, "unterminated string");
}

static int scan_number(parser *ps)
{
    const unsigned char *p = ps->p, *e = ps->end;
    char buf[16];
    if (*p == '-')
        p++;
    if (p == e || !is_digit(*p))
        return fail_at(ps, p, "invalid number: expected a digit, found %s", describe(ps, p, buf, sizeof buf));
    if (*p == '0') {
        p++;
        if (p < e && is_digit(*p))
            return fail_at(ps, p, "invalid number: a leading zero must stand alone");
    } else {
        while (p < e && is_digit(*p))
            p++;
    }
    if (p < e && *p == '.') {
        p++;
        if (p == e || !is_digit(*p))
            return fail_at(ps, p, "invalid number: expected a digit after '.', found %s",
                           describe(ps, p, buf, sizeof buf));
        while (p < e && is_digit(*p))
            p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-'))
            p++;
        if (p == e || !is_digit(*p))
            return fail_at(ps, p, "invalid number: expected a digit in the exponent, found %s",
                           describe(ps, p, buf, sizeof buf));
        while (p < e && is_digit(*p))
            p++;
    }
    ps->p = p;
    return 0;
}

static int scan_literal(parser *ps)
{
    static const char *const words[] = {"true", "false", "null"};
    size_t i;
    for (i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if (words[i][0] == (char)*ps->p) {
            if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, words[i], n) != 0)
                return fail_at(ps, ps->p, "invalid literal; expected %s", words[i]);
            ps->p += n;
            return 0;
        }
    }
    return unexpected(ps, "a value");
}

/* A member's name and the colon after it. */
static int scan_key(parser *ps)
{
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != '"')
        return unexpected(ps, "a string naming a member");
    if (scan_string(ps) < 0)
        return -1;
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != ':')
        return unexpected(ps, "':' after a member's name");
    ps->p++;
    return 0;
}

static wasmcp_json_type type_at(char c)
{
    switch (c) {
    case '{': return WASMCP_JSON_OBJECT;
    case '[': return WASMCP_JSON_ARRAY;
    case '"': return WASMCP_JSON_STRING;
    case 't': case 'f': return WASMCP_JSON_BOOL;
    case 'n': return WASMCP_JSON_NULL;
    default: return WASMCP_JSON_NUMBER;
    }
}

int wasmcp_json_parse(const char *text, size_t len, wasmcp_json *out, char *err, size_t errsize)
{
    /* The open containers, innermost last: an explicit stack instead of
     * recursion, so hostile nesting costs a refusal, not the call stack. */
    unsigned char stack[WASMCP_JSON_MAX_DEPTH];
    size_t depth = 0;
    const unsigned char *first = NULL, *last;
    int want_value = 1;
    parser ps;
    ps.start = ps.p = (const unsigned char *)text;
    ps.end = ps.start + len;
    ps.err = err;
    ps.errsize = err ? errsize : 0;
    if (ps.errsize)
        err[0] = '\0';
    if (out) {
        out->ptr = NULL;
        out->len = 0;
        out->type = WASMCP_JSON_NONE;
    }
    for (;;) {
        if (want_value) {
            skip_ws(&ps);
            if (ps.p >= ps.end)
                return unexpected(&ps, "a value");
            if (depth == 0)
                first = ps.p;
            switch (*ps.p) {
            case '{':
            case '[':
                if (depth == WASMCP_JSON_MAX_DEPTH)
                    return fail_at(&ps, ps.p, "nested deeper than %d arrays and objects",
                                   WASMCP_JSON_MAX_DEPTH);
                stack[depth++] = *ps.p++;
                skip_ws(&ps);
                if (ps.p < ps.end && *ps.p == (stack[depth - 1] == '{' ? '}' : ']')) {
                    ps.p++;
                    depth--;
                    want_value = 0;
                } else if (stack[depth - 1] == '{' && scan_key(&ps) < 0) {
                    return -1;
                }
                continue;
            case '"':
                if (scan_string(&ps) < 0)
                    return -1;
                break;
            case '-': case '0': case '1': case '2': case '3': case '4':
            case '5': case '6': case '7': case '8': case '9':
                if (scan_number(&ps) < 0)
                    return -1;
                break;
            default:
                if (scan_literal(&ps) < 0)
                    return -1;
            }
            want_value = 0;
        } else {
            unsigned char close;
            if (depth == 0)
                break;
            close = stack[depth - 1] == '{' ? '}' : ']';
            skip_ws(&ps);
            if (ps.p < ps.end && *ps.p == ',') {
                ps.p++;
                if (close == '}' && scan_key(&ps) < 0)
                    return -1;
                want_value = 1;
            } else if (ps.p < ps.end && *ps.p == close) {
                ps.p++;
                depth--;
            } else {
                return unexpected(&ps, close == '}' ? "',' or '}'" : "',' or ']'");
            }
        }
    }
    last = ps.p;
    skip_ws(&ps);
    if (ps.p < ps.end)
        return fail_at(&ps, ps.p, "unexpected data after the value");
    if (out) {
        out->ptr = (const char *)first;
        out->len = (size_t)(last - first);
        out->type = type_at((char)*first);
    }
    return 0;
}

/* ---- Reading JSON: access ------------------------------------------------ */

/* The functions below walk text that wasmcp_json_parse accepted, so they
 * skip checks it already made. */

static const char *ws(const char *p, const char *end)
{
    while (p < end && is_ws((unsigned char)*p))
        p++;
    return p;
}

static const char *string_end(const char *p)
{
    for (p++; *p != '"'; p++)
        if (*p == '\\')
            p++;
    return p + 1;
}

static wasmcp_json value_at(const char *p, const char *end)
{
    wasmcp_json v;
    const char *q = p;
    v.ptr = p;
    v.type = type_at(*p);
    if (*p == '"') {
        q = string_end(p);
    } else if (*p == '{' || *p == '[') {
        size_t depth = 0;
        while (q < end) {
            if (*q == '"') {
                q = string_end(q);
                continue;
            }
            if (*q == '{' || *q == '[') {
                depth++;
            } else if ((*q == '}' || *q == ']') && --depth == 0) {
                q++;
                break;
            }
            q++;
        }
    } else {
        while (q < end && (is_digit((unsigned char)*q) || (*q >= 'a' && *q <= 'z') || *q == 'E' ||
                           *q == '-' || *q == '+' || *q == '.'))
            q++;
    }
    v.len = (size_t)(q - p);
    return v;
}

int wasmcp_json_next(wasmcp_json c, size_t *pos, wasmcp_json *key, wasmcp_json *value)
{
    const char *p, *end;
    wasmcp_json k, v;
    if ((c.type != WASMCP_JSON_OBJECT && c.type != WASMCP_JSON_ARRAY) || *pos >= c.len)
        return 0;
    end = c.ptr + c.len;
    p = ws(c.ptr + *pos + (*pos == 0), end);
    if (*p == ',')
        p = ws(p + 1, end);
    if (*p == '}' || *p == ']') {
        *pos = c.len;
        return 0;
    }
    k.ptr = NULL;
    k.len = 0;
    k.type = WASMCP_JSON_NONE;
    if (c.type == WASMCP_JSON_OBJECT) {
        k = value_at(p, end);
        p = ws(ws(k.ptr + k.len, end) + 1, end); /* past the ':' */
    }
    if (key)
        *key = k;
    v = value_at(p, end);
    if (value)
        *value = v;
    *pos = (size_t)(v.ptr + v.len - c.ptr);
    return 1;
}

static unsigned hex4(const char *p)
{
    return (unsigned)(hex_value((unsigned char)p[0]) << 12 | hex_value((unsigned char)p[1]) << 8 |
                      hex_value((unsigned char)p[2]) << 4 | hex_value((unsigned char)p[3]));
}

/* Decodes the character at *pp inside a string's quotes into buf (4 bytes)
 * and moves *pp past it. */
static size_t string_char(const char **pp, char *buf)
{
    const char *p = *pp;
    unsigned c = (unsigned char)*p;
    uint32_t cp;
    size_t n;
    if (c != '\\') {
        n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        memcpy(buf, p, n);
        *pp = p + n;
        return n;
    }
    *pp = p + 2;
    switch (p[1]) {
    case 'b': buf[0] = '\b'; return 1;
    case 'f': buf[0] = '\f'; return 1;
    case 'n': buf[0] = '\n'; return 1;
    case 'r': buf[0] = '\r'; return 1;
    case 't': buf[0] = '\t'; return 1;
    case 'u': break;
    default: buf[0] = p[1]; return 1; /* " \ / */
    }
    cp = hex4(p + 2);
    *pp = p + 6;
    /* A validated string ends with a quote, so p[6] and, if it is a
     * backslash, p[7] are there to read. */
    if (cp >= 0xD800 && cp <= 0xDBFF && p[6] == '\\' && p[7] == 'u') {
        uint32_t lo = hex4(p + 8);
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            *pp = p + 12;
        }
    }
    if (cp >= 0xD800 && cp <= 0xDFFF)
        cp = 0xFFFD;
    return utf8_encode(cp, buf);
}

static int key_equals(wasmcp_json k, const char *name)
{
    const char *p = k.ptr + 1, *end = k.ptr + k.len - 1;
    char buf[4];
    size_t i = 0, j, n;
    while (p < end) {
        n = string_char(&p, buf);
        for (j = 0; j < n; j++, i++)
            if (name[i] == '\0' || name[i] != buf[j])
                return 0;
    }
    return name[i] == '\0';
}

wasmcp_json wasmcp_json_get(wasmcp_json obj, const char *name)
{
    wasmcp_json found = {NULL, 0, WASMCP_JSON_NONE}, k, v;
    size_t pos = 0;
    if (obj.type != WASMCP_JSON_OBJECT)
        return found;
    while (wasmcp_json_next(obj, &pos, &k, &v))
        if (key_equals(k, name))
            found = v;
    return found;
}

char *wasmcp_json_string(wasmcp_json v, size_t *len)
{
    const char *p, *end;
    char *out;
    size_t n = 0;
    if (v.type != WASMCP_JSON_STRING)
        return NULL;
    /* Decoding never lengthens: each escape is longer than what it stands
     * for, and a lone surrogate's U+FFFD (3 bytes) replaces 6. */
    out = xrealloc(NULL, v.len + 1);
    p = v.ptr + 1;
    end = v.ptr + v.len - 1;
    while (p < end)
        n += string_char(&p, out + n);
    out[n] = '\0';
    if (len)
        *len = n;
    return out;
}

/* Calls strtod or strtoll on a NUL-terminated copy of the number, which the
 * document itself may not provide. */
static int number_text(wasmcp_json v, char *small, size_t smallsize, char **heap, const char **text)
{
    char *s = small;
    if (v.type != WASMCP_JSON_NUMBER)
        return 0;
    *heap = NULL;
    if (v.len >= smallsize)
        s = *heap = xrealloc(NULL, v.len + 1);
    memcpy(s, v.ptr, v.len);
    s[v.len] = '\0';
    *text = s;
    return 1;
}

int wasmcp_json_number(wasmcp_json v, double *out)
{
    char small[64], *heap;
    const char *s;
    double d;
    if (!number_text(v, small, sizeof small, &heap, &s))
        return 0;
    d = strtod(s, NULL);
    free(heap);
    if (isinf(d))
        return -1;
    *out = d;
    return 1;
}

int wasmcp_json_int(wasmcp_json v, long long *out)
{
    char small[64], *heap;
    const char *s;
    int r = 1;
    if (!number_text(v, small, sizeof small, &heap, &s))
        return 0;
    if (!strpbrk(s, ".eE")) {
        long long x;
        errno = 0;
        x = strtoll(s, NULL, 10);
        if (errno == ERANGE)
            r = -1;
        else
            *out = x;
    } else {
        double d = strtod(s, NULL);
        if (isinf(d))
            r = -1;
        else if (d != floor(d))
            r = 0;
        else if (d < -9223372036854775808.0 || d >= 9223372036854775808.0)
            r = -1;
        else
            *out = (long long)d;
    }
    free(heap);
    return r;
}

int wasmcp_json_bool(wasmcp_json v, int *out)
{
    if (v.type != WASMCP_JSON_BOOL)
        return 0;
    *out = v.ptr[0] == 't';
    return 1;
}

/* ---- Tool arguments ------------------------------------------------------ */

static const char *type_name(wasmcp_json_type t)
{
    switch (t) {
    case WASMCP_JSON_NULL: return "null";
    case WASMCP_JSON_BOOL: return "a boolean";
    case WASMCP_JSON_NUMBER: return "a number";
    case WASMCP_JSON_STRING: return "a string";
    case WASMCP_JSON_ARRAY: return "an array";
    case WASMCP_JSON_OBJECT: return "an object";
    default: return "nothing";
    }
}

wasmcp_json wasmcp_args_object(void)
{
    static const char empty[] = "{}";
    char err[160];
    size_t n, i = 0;
    const char *s = wasmcp_args(&n);
    wasmcp_json v;
    while (i < n && is_ws((unsigned char)s[i]))
        i++;
    if (i == n) {
        s = empty;
        n = 2;
    }
    if (wasmcp_json_parse(s, n, &v, err, sizeof err) < 0)
        wasmcp_fail("invalid arguments: %s", err);
    if (v.type == WASMCP_JSON_NULL)
        wasmcp_json_parse(empty, 2, &v, NULL, 0);
    if (v.type != WASMCP_JSON_OBJECT)
        wasmcp_fail("invalid arguments: want a JSON object, not %s", type_name(v.type));
    return v;
}

/* The member, with null treated as absent: optional arguments are often
 * sent as null by clients that fill every field. */
static wasmcp_json arg(wasmcp_json args, const char *name)
{
    wasmcp_json v = wasmcp_json_get(args, name);
    if (v.type == WASMCP_JSON_NULL)
        v.type = WASMCP_JSON_NONE;
    return v;
}

WASMCP_NORETURN static void bad_arg(const char *name, const char *want, wasmcp_json v)
{
    if (v.type == WASMCP_JSON_NUMBER)
        wasmcp_fail("invalid arguments: \"%s\" must be %s, not %.*s", name, want,
                    (int)(v.len > 40 ? 40 : v.len), v.ptr);
    wasmcp_fail("invalid arguments: \"%s\" must be %s, not %s", name, want, type_name(v.type));
}

char *wasmcp_arg_string(wasmcp_json args, const char *name, size_t *len)
{
    wasmcp_json v = arg(args, name);
    if (v.type == WASMCP_JSON_NONE)
        return NULL;
    if (v.type != WASMCP_JSON_STRING)
        bad_arg(name, "a string", v);
    return wasmcp_json_string(v, len);
}

int wasmcp_arg_number(wasmcp_json args, const char *name, double *out)
{
    wasmcp_json v = arg(args, name);
    int r;
    if (v.type == WASMCP_JSON_NONE)
        return 0;
    r = wasmcp_json_number(v, out);
    if (r == 1)
        return 1;
    bad_arg(name, r < 0 ? "a number within a double's range" : "a number", v);
}

int wasmcp_arg_int(wasmcp_json args, const char *name, long long *out)
{
    wasmcp_json v = arg(args, name);
    int r;
    if (v.type == WASMCP_JSON_NONE)
        return 0;
    r = wasmcp_json_int(v, out);
    if (r == 1)
        return 1;
    bad_arg(name, r < 0 ? "an integer between -2^63 and 2^63-1" : "an integer", v);
}

int wasmcp_arg_bool(wasmcp_json args, const char *name, int *out)
{
    wasmcp_json v = arg(args, name);
    if (v.type == WASMCP_JSON_NONE)
        return 0;
    if (!wasmcp_json_bool(v, out))
        bad_arg(name, "a boolean", v);
    return 1;
}

/* ---- Writing JSON -------------------------------------------------------- */

/* Makes room for n more bytes and a NUL, which keeps data printable. */
static void reserve(wasmcp_out *o, size_t n)
{
    size_t cap;
    if (o->cap - o->len > n)
        return;
    cap = o->cap ? o->cap : 256;
    while (cap - o->len <= n) {
        if (cap > (size_t)-1 / 2)
            wasmcp_fail("out of memory (the JSON result is too large)");
        cap *= 2;
    }
    o->data = xrealloc(o->data, cap);
    o->cap = cap;
}

static void put(wasmcp_out *o, const char *s, size_t n)
{
    reserve(o, n);
    memcpy(o->data + o->len, s, n);
    o->len += n;
    o->data[o->len] = '\0';
}

/* Starts a value or key: the comma goes before anything that follows a
 * completed value at the same level. */
static void begin(wasmcp_out *o)
{
    if (o->comma)
        put(o, ",", 1);
    o->comma = 0;
}

void wasmcp_out_begin_object(wasmcp_out *o)
{
    begin(o);
    put(o, "{", 1);
}

void wasmcp_out_end_object(wasmcp_out *o)
{
    put(o, "}", 1);
    o->comma = 1;
}

void wasmcp_out_begin_array(wasmcp_out *o)
{
    begin(o);
    put(o, "[", 1);
}

void wasmcp_out_end_array(wasmcp_out *o)
{
    put(o, "]", 1);
    o->comma = 1;
}

static void put_string(wasmcp_out *o, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t i = 0;
    put(o, "\"", 1);
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        uint32_t cp;
        size_t n;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            size_t j = i + 1;
            while (j < len && (unsigned char)s[j] >= 0x20 && (unsigned char)s[j] < 0x80 && s[j] != '"' &&
                   s[j] != '\\')
                j++;
            put(o, s + i, j - i);
            i = j;
            continue;
        }
        if (c < 0x80) {
            char esc[6] = {'\\', 0, 0, 0, 0, 0};
            n = 2;
            switch (c) {
            case '"': esc[1] = '"'; break;
            case '\\': esc[1] = '\\'; break;
            case '\b': esc[1] = 'b'; break;
            case '\f': esc[1] = 'f'; break;
            case '\n': esc[1] = 'n'; break;
            case '\r': esc[1] = 'r'; break;
            case '\t': esc[1] = 't'; break;
            default:
                esc[1] = 'u';
                esc[2] = '0';
                esc[3] = '0';
                esc[4] = hex[c >> 4];
                esc[5] = hex[c & 15];
                n = 6;
            }
            put(o, esc, n);
            i++;
            continue;
        }
        n = utf8_valid((const unsigned char *)s + i, len - i, &cp);
        if (n) {
            put(o, s + i, n);
            i += n;
        } else {
            put(o, "\xEF\xBF\xBD", 3);
            i++;
        }
    }
    put(o, "\"", 1);
}

void wasmcp_out_key(wasmcp_out *o, const char *key)
{
    begin(o);
    put_string(o, key, strlen(key));
    put(o, ":", 1);
}

void wasmcp_out_string(wasmcp_out *o, const char *s, size_t len)
{
    begin(o);
    put_string(o, s, len);
    o->comma = 1;
}

void wasmcp_out_str(wasmcp_out *o, const char *s)
{
    wasmcp_out_string(o, s, strlen(s));
}

void wasmcp_out_number(wasmcp_out *o, double x)
{
    char buf[40];
    int prec, n = 0, exp;
    if (!isfinite(x))
        wasmcp_fail("tool bug: cannot write %g as JSON, which has no NaN or infinity", x);
    /* The fewest significant digits that read back as x (17 always do). */
    for (prec = 1; prec <= 17; prec++) {
        n = snprintf(buf, sizeof buf, "%.*e", prec - 1, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    /* Plain notation where JavaScript uses it, so that 90 is not 9e+01. */
    exp = atoi(strchr(buf, 'e') + 1);
    if (exp >= -6 && exp < 21)
        n = snprintf(buf, sizeof buf, "%.*f", prec - 1 - exp > 0 ? prec - 1 - exp : 0, x);
    begin(o);
    put(o, buf, (size_t)n);
    o->comma = 1;
}

void wasmcp_out_int(wasmcp_out *o, long long x)
{
    char buf[24];
    int n = snprintf(buf, sizeof buf, "%lld", x);
    begin(o);
    put(o, buf, (size_t)n);
    o->comma = 1;
}

void wasmcp_out_bool(wasmcp_out *o, int b)
{
    begin(o);
    put(o, b ? "true" : "false", b ? 4 : 5);
    o->comma = 1;
}

void wasmcp_out_null(wasmcp_out *o)
{
    begin(o);
    put(o, "null", 4);
    o->comma = 1;
}

void wasmcp_out_free(wasmcp_out *o)
{
    free(o->data);
    o->data = NULL;
    o->len = o->cap = 0;
    o->comma = 0;
}

/* ---- HTTP ---------------------------------------------------------------- */

static const char base64_digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Writes a JSON string of p in standard base64 with padding: how the ABI
 * carries a body that is not UTF-8, which a JSON string cannot hold. */
static void out_base64(wasmcp_out *o, const unsigned char *p, size_t n)
{
    size_t i;
    begin(o);
    put(o, "\"", 1);
    for (i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        char q[4];
        q[0] = base64_digits[v >> 18];
        q[1] = base64_digits[v >> 12 & 63];
        q[2] = i + 1 < n ? base64_digits[v >> 6 & 63] : '=';
        q[3] = i + 2 < n ? base64_digits[v & 63] : '=';
        put(o, q, 4);
    }
    put(o, "\"", 1);
    o->comma = 1;
}

static int base64_value(char c)
{
    const char *p = c ? strchr(base64_digits, c) : NULL;
    return p ? (int)(p - base64_digits) : -1;
}

/* Decodes padded standard base64 in place (the text only shrinks) and
 * NUL-terminates it. Returns -1 if s (len bytes, len + 1 allocated) is not
 * base64. */
static int base64_decode(char *s, size_t len, size_t *out)
{
    size_t i, n = 0;
    if (len % 4 != 0)
        return -1;
    for (i = 0; i < len; i += 4) {
        int a = base64_value(s[i]), b = base64_value(s[i + 1]);
        int c = s[i + 2] == '=' ? -2 : base64_value(s[i + 2]);
        int d = s[i + 3] == '=' ? -2 : base64_value(s[i + 3]);
        uint32_t v;
        if (a < 0 || b < 0 || c == -1 || d == -1 || (c == -2 && d != -2) || (d == -2 && i + 4 != len))
            return -1;
        v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)(c < 0 ? 0 : c) << 6 | (uint32_t)(d < 0 ? 0 : d);
        /* All four digits were read before these writes, and n <= i. */
        s[n++] = (char)(v >> 16);
        if (c >= 0)
            s[n++] = (char)(v >> 8 & 255);
        if (d >= 0)
            s[n++] = (char)(v & 255);
    }
    s[n] = '\0';
    *out = n;
    return 0;
}

static int utf8_all(const char *s, size_t n)
{
    size_t i = 0, k;
    uint32_t cp;
    while (i < n) {
        k = utf8_valid((const unsigned char *)s + i, n - i, &cp);
        if (!k)
            return 0;
        i += k;
    }
    return 1;
}

static void http_request_json(wasmcp_out *o, const wasmcp_http_request *req)
{
    size_t i;
    wasmcp_out_begin_object(o);
    wasmcp_out_key(o, "method");
    wasmcp_out_str(o, req->method && req->method[0] ? req->method : "GET");
    wasmcp_out_key(o, "url");
    wasmcp_out_str(o, req->url);
    if (req->nheaders) {
        wasmcp_out_key(o, "headers");
        wasmcp_out_begin_object(o);
        for (i = 0; i < req->nheaders; i++) {
            wasmcp_out_key(o, req->headers[i].name);
            wasmcp_out_str(o, req->headers[i].value);
        }
        wasmcp_out_end_object(o);
    }
    if (req->body) {
        if (utf8_all(req->body, req->body_len)) {
            wasmcp_out_key(o, "body");
            wasmcp_out_string(o, req->body, req->body_len);
        } else {
            wasmcp_out_key(o, "body_base64");
            out_base64(o, req->body, req->body_len);
        }
    }
    if (req->secret && req->secret[0]) {
        wasmcp_out_key(o, "secret");
        wasmcp_out_str(o, req->secret);
    }
    wasmcp_out_end_object(o);
}

static void http_error(char *err, size_t size, const char *fmt, ...) WASMCP_PRINTF(3, 4);

/* Formats a message into err; a cut one loses its last, partial character,
 * so that the message is still UTF-8 (the tool may log it). */
static void http_error(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;
    int n;
    size_t len, j;
    if (!err || size == 0)
        return;
    va_start(ap, fmt);
    n = vsnprintf(err, size, fmt, ap);
    va_end(ap);
    if (n < 0) {
        err[0] = '\0';
        return;
    }
    if ((size_t)n < size)
        return;
    len = size - 1;
    for (j = len; j > 0 && ((unsigned char)err[j - 1] & 0xC0) == 0x80; j--)
        ;
    if (j > 0) {
        unsigned c = (unsigned char)err[j - 1];
        size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        if (j - 1 + need > len)
            err[j - 1] = '\0';
    }
}

/* What a refusal means when the host gave no answer saying so. */
static const char *http_code_text(int code)
{
    switch (code) {
    case WASMCP_FAULT: return "the request is outside the module's memory";
    case WASMCP_INVALID: return "invalid request";
    case WASMCP_TOO_LONG: return "the request is too long";
    case WASMCP_LIMIT: return "this call's allowance of requests is used up";
    case WASMCP_DENIED: return "the server's policy does not allow this request";
    case WASMCP_NETWORK: return "the request failed";
    default: return NULL;
    }
}

/* Fills resp from a success answer; returns NULL or what is wrong with it.
 * The host is trusted no further than the parser trusts any JSON. */
static const char *read_answer(wasmcp_json a, wasmcp_http_response *resp)
{
    wasmcp_json status = wasmcp_json_get(a, "status"), headers = wasmcp_json_get(a, "headers");
    wasmcp_json body = wasmcp_json_get(a, "body"), key, value;
    long long st = 0;
    size_t pos = 0, n = 0;
    if (status.type != WASMCP_JSON_NONE && status.type != WASMCP_JSON_NULL &&
        (wasmcp_json_int(status, &st) != 1 || st < 0 || st > 999))
        return "status is not an HTTP status";
    resp->status = (int)st;
    if (headers.type == WASMCP_JSON_OBJECT) {
        while (wasmcp_json_next(headers, &pos, NULL, &value)) {
            if (value.type != WASMCP_JSON_STRING)
                return "a header's value is not a string";
            n++;
        }
        resp->headers = xrealloc(NULL, n * sizeof *resp->headers);
        for (pos = 0; wasmcp_json_next(headers, &pos, &key, &value); resp->nheaders++) {
            resp->headers[resp->nheaders].name = wasmcp_json_string(key, NULL);
            resp->headers[resp->nheaders].value = wasmcp_json_string(value, NULL);
        }
    } else if (headers.type != WASMCP_JSON_NONE && headers.type != WASMCP_JSON_NULL) {
        return "headers is not an object";
    }
    if (body.type == WASMCP_JSON_NONE || body.type == WASMCP_JSON_NULL) {
        body = wasmcp_json_get(a, "body_base64");
        if (body.type == WASMCP_JSON_STRING) {
            resp->body = wasmcp_json_string(body, &n);
            if (base64_decode(resp->body, n, &resp->body_len) < 0)
                return "body_base64 is not base64";
            return NULL;
        }
        if (body.type != WASMCP_JSON_NONE && body.type != WASMCP_JSON_NULL)
            return "body_base64 is not a string";
        /* No body: an empty one, so that resp->body is never NULL. */
        resp->body = xrealloc(NULL, 1);
        resp->body[0] = '\0';
        return NULL;
    }
    if (body.type != WASMCP_JSON_STRING)
        return "body is not a string";
    resp->body = wasmcp_json_string(body, &resp->body_len);
    return NULL;
}

int wasmcp_http(const wasmcp_http_request *req, wasmcp_http_response *resp, char *err, size_t err_size)
{
    wasmcp_out o = {0};
    uint32_t n = 0;
    int32_t code, rc;
    char *answer = NULL, perr[160];
    wasmcp_json a;
    int readable;
    const char *what;

    memset(resp, 0, sizeof *resp);
    if (err && err_size)
        err[0] = '\0';
    if (!req->url) {
        http_error(err, err_size, "wasmcp_http: the request has no url");
        return WASMCP_INVALID;
    }
    http_request_json(&o, req);
    code = wasmcp_host_http_request(o.data, o.len, &n);
    wasmcp_out_free(&o);
    /* The answer waits in the host until taken, sized first so that the
     * buffer fits it. */
    if (n > 0) {
        answer = xrealloc(NULL, n);
        rc = wasmcp_host_http_response(answer, n);
        if (rc != WASMCP_OK) {
            free(answer);
            if (rc == WASMCP_TOO_LONG)
                http_error(err, err_size, "wasmcp host: the answer did not fit the %lu bytes announced for it",
                           (unsigned long)n);
            else
                http_error(err, err_size, "wasmcp host: taking the answer failed with error %d", (int)rc);
            return rc;
        }
    }
    readable = answer && wasmcp_json_parse(answer, n, &a, perr, sizeof perr) == 0;
    if (readable && a.type != WASMCP_JSON_OBJECT) {
        readable = 0;
        snprintf(perr, sizeof perr, "not a JSON object");
    }
    if (code != WASMCP_OK) {
        size_t len = 0;
        char *msg = readable ? wasmcp_json_string(wasmcp_json_get(a, "error"), &len) : NULL;
        if (msg && len > 0)
            http_error(err, err_size, "%s", msg);
        else if (http_code_text(code))
            http_error(err, err_size, "wasmcp host: %s", http_code_text(code));
        else
            http_error(err, err_size, "wasmcp host: error %d", (int)code);
        free(msg);
        free(answer);
        return code;
    }
    if (!readable) {
        http_error(err, err_size, "wasmcp host: unreadable http answer: %s", answer ? perr : "there is none");
        free(answer);
        return -1;
    }
    what = read_answer(a, resp);
    free(answer);
    if (what) {
        wasmcp_http_free(resp);
        http_error(err, err_size, "wasmcp host: unreadable http answer: %s", what);
        return -1;
    }
    return WASMCP_OK;
}

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

const char *wasmcp_http_find_header(const wasmcp_http_response *resp, const char *name)
{
    size_t i = resp->nheaders;
    /* From the end, so that of duplicate names the last wins, as in the
     * answer's JSON object. */
    while (i-- > 0) {
        const char *a = resp->headers[i].name, *b = name;
        while (*a && lower((unsigned char)*a) == lower((unsigned char)*b)) {
            a++;
            b++;
        }
        if (!*a && !*b)
            return resp->headers[i].value;
    }
    return NULL;
}

void wasmcp_http_free(wasmcp_http_response *resp)
{
    size_t i;
    for (i = 0; i < resp->nheaders; i++) {
        free((void *)resp->headers[i].name);
        free((void *)resp->headers[i].value);
    }
    free(resp->headers);
    free(resp->body);
    memset(resp, 0, sizeof *resp);
}

/* ---- Asking the client --------------------------------------------------- */

typedef int32_t (*ask_fn)(const char *req, size_t len, uint32_t *answer_len);

/* ask sends {"id": id, "params": params} through f and takes the answer,
 * sized first, as wasmcp_http does. */
static int ask(ask_fn f, const char *id, const char *params, char **answer, size_t *answer_len, char *err,
               size_t err_size)
{
    wasmcp_out o = {0};
    uint32_t n = 0;
    int32_t code, rc;
    char *got = NULL, perr[160];
    wasmcp_json a;
    size_t len = 0;
    char *msg;

    *answer = NULL;
    *answer_len = 0;
    if (err && err_size)
        err[0] = '\0';
    wasmcp_out_begin_object(&o);
    if (id) {
        wasmcp_out_key(&o, "id");
        wasmcp_out_str(&o, id);
    }
    wasmcp_out_key(&o, "params");
    /* params is the caller's JSON, put as it is: the host checks it. */
    put(&o, params, strlen(params));
    o.comma = 1;
    wasmcp_out_end_object(&o);
    code = f(o.data, o.len, &n);
    wasmcp_out_free(&o);
    if (n > 0) {
        got = xrealloc(NULL, (size_t)n + 1);
        rc = wasmcp_host_ask_response(got, n);
        if (rc != WASMCP_OK) {
            free(got);
            http_error(err, err_size, "wasmcp host: taking the answer failed with error %d", (int)rc);
            return rc;
        }
        got[n] = '\0';
    }
    if (code == WASMCP_OK && got) {
        *answer = got;
        *answer_len = n;
        return WASMCP_OK;
    }
    msg = got && wasmcp_json_parse(got, n, &a, perr, sizeof perr) == 0 ? wasmcp_json_string(wasmcp_json_get(a, "error"), &len) : NULL;
    if (msg && len > 0)
        http_error(err, err_size, "%s", msg);
    else
        http_error(err, err_size, "wasmcp host: the ask failed with error %d", (int)code);
    free(msg);
    free(got);
    return code == WASMCP_OK ? WASMCP_INVALID : code;
}

int wasmcp_elicit(const char *id, const char *params, char **answer, size_t *answer_len, char *err,
                  size_t err_size)
{
    return ask(wasmcp_host_elicit, id, params, answer, answer_len, err, err_size);
}

int wasmcp_create_message(const char *id, const char *params, char **answer, size_t *answer_len,
                          char *err, size_t err_size)
{
    return ask(wasmcp_host_create_message, id, params, answer, answer_len, err, err_size);
}

int wasmcp_list_roots(const char *id, char **answer, size_t *answer_len, char *err, size_t err_size)
{
    return ask(wasmcp_host_list_roots, id, "{}", answer, answer_len, err, err_size);
}
