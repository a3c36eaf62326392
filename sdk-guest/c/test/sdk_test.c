/*
 * Native tests of the C guest SDK, built with gcc by ../ctest/c_test.go.
 *
 *   sdk_test              runs the unit checks; exits 1 if any fails
 *   sdk_test roundtrip    reads records "<length>\n<bytes>" from stdin and
 *                         prints, per record, "ok <JSON re-encoded by the
 *                         SDK>" or "err <parse error>" on one line
 *   sdk_test args         a tool: reads its arguments as a real one does and
 *                         writes back what it read (exit paths are tested
 *                         from Go)
 *   sdk_test nan | fail   calls wasmcp_out_number(NaN) / wasmcp_fail with a
 *                         multi-line message
 */
#include "../wasmcp.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* ---- Host function stand-ins that record what they were given ----------- */

static int32_t last_level, host_result;
static size_t last_len;
static char last_msg[WASMCP_MAX_MESSAGE * 2];
static double last_progress, last_total;

int32_t wasmcp_host_log(int32_t level, const char *msg, size_t len)
{
    last_level = level;
    last_len = len;
    memcpy(last_msg, msg, len < sizeof last_msg ? len : sizeof last_msg);
    return host_result;
}

int32_t wasmcp_host_progress(double progress, double total, const char *msg, size_t len)
{
    last_progress = progress;
    last_total = total;
    last_len = len;
    memcpy(last_msg, msg, len < sizeof last_msg ? len : sizeof last_msg);
    return host_result;
}

/* HTTP: the request last sent, and the answer to give: its code, its bytes,
 * and the length announced for them (their length, unless a test lies). */
static char *http_sent;
static size_t http_sent_len;
static int32_t http_code;
static const char *http_answer;
static size_t http_answer_len;
static uint32_t http_announced;
static int http_pending;

int32_t wasmcp_host_http_request(const char *req, size_t len, uint32_t *answer_len)
{
    free(http_sent);
    http_sent = malloc(len + 1);
    memcpy(http_sent, req, len);
    http_sent[len] = '\0';
    http_sent_len = len;
    *answer_len = http_announced;
    http_pending = http_announced > 0;
    return http_code;
}

int32_t wasmcp_host_http_response(char *buf, size_t len)
{
    if (!http_pending)
        return WASMCP_INVALID;
    if (len < http_answer_len)
        return WASMCP_TOO_LONG;
    memcpy(buf, http_answer, http_answer_len);
    http_pending = 0;
    return WASMCP_OK;
}

static void answer_n(int32_t code, const char *answer, size_t len)
{
    http_code = code;
    http_answer = answer;
    http_answer_len = len;
    http_announced = (uint32_t)len;
}

static void answer(int32_t code, const char *json)
{
    answer_n(code, json, json ? strlen(json) : 0);
}

/* Asking the client: the stand-ins share the HTTP stand-ins' answer, and
 * record which function was asked. */
static const char *asked_fn;

static int32_t ask_with(const char *fn, const char *req, size_t len, uint32_t *answer_len)
{
    asked_fn = fn;
    return wasmcp_host_http_request(req, len, answer_len);
}

int32_t wasmcp_host_elicit(const char *req, size_t len, uint32_t *answer_len)
{
    return ask_with("elicit", req, len, answer_len);
}

int32_t wasmcp_host_create_message(const char *req, size_t len, uint32_t *answer_len)
{
    return ask_with("create_message", req, len, answer_len);
}

int32_t wasmcp_host_list_roots(const char *req, size_t len, uint32_t *answer_len)
{
    return ask_with("list_roots", req, len, answer_len);
}

int32_t wasmcp_host_ask_response(char *buf, size_t len)
{
    return wasmcp_host_http_response(buf, len);
}

/* ---- Helpers ------------------------------------------------------------- */

static wasmcp_json parse_ok(const char *text)
{
    char err[200];
    wasmcp_json v;
    int r = wasmcp_json_parse(text, strlen(text), &v, err, sizeof err);
    CHECK(r == 0, "parse %s: %s", text, err);
    return v;
}

/* Parses text (len bytes) and expects an error containing want. */
static void parse_bad(const char *text, size_t len, const char *want)
{
    char err[200];
    wasmcp_json v;
    int r = wasmcp_json_parse(text, len, &v, err, sizeof err);
    CHECK(r == -1, "parse %.60s succeeded; want error %s", text, want);
    CHECK(r == -1 && strstr(err, want) != NULL, "parse %.60s: error %s; want %s", text, err, want);
    CHECK(v.type == WASMCP_JSON_NONE, "failed parse of %.60s left a value", text);
}

static void bad(const char *text, const char *want)
{
    parse_bad(text, strlen(text), want);
}

static int str_is(wasmcp_json v, const char *want, size_t wantlen)
{
    size_t n;
    char *s = wasmcp_json_string(v, &n);
    int ok = s && n == wantlen && memcmp(s, want, n) == 0 && s[n] == '\0';
    free(s);
    return ok;
}

/* ---- Reader -------------------------------------------------------------- */

static void test_get(void)
{
    wasmcp_json doc = parse_ok(" {\"a\": 1, \"b\": \"x\\ny\", \"c\": true, \"d\": null, "
                               "\"e\": [1, 2, {\"f\": 3}], \"g\": {\"h\": \"i\"}, \"c2\": false} ");
    wasmcp_json v, e;
    double d;
    long long i;
    int b;

    CHECK(doc.type == WASMCP_JSON_OBJECT, "type %d", doc.type);
    CHECK(doc.ptr[0] == '{' && doc.ptr[doc.len - 1] == '}', "span excludes white space");

    v = wasmcp_json_get(doc, "a");
    CHECK(wasmcp_json_number(v, &d) == 1 && d == 1, "a");
    CHECK(wasmcp_json_int(v, &i) == 1 && i == 1, "a int");
    CHECK(wasmcp_json_bool(v, &b) == 0, "a is not a bool");
    CHECK(wasmcp_json_string(v, NULL) == NULL, "a is not a string");

    CHECK(str_is(wasmcp_json_get(doc, "b"), "x\ny", 3), "b");
    CHECK(wasmcp_json_bool(wasmcp_json_get(doc, "c"), &b) == 1 && b == 1, "c");
    CHECK(wasmcp_json_bool(wasmcp_json_get(doc, "c2"), &b) == 1 && b == 0, "c2");
    CHECK(wasmcp_json_get(doc, "d").type == WASMCP_JSON_NULL, "d");
    CHECK(wasmcp_json_get(doc, "zz").type == WASMCP_JSON_NONE, "absent");
    CHECK(wasmcp_json_get(doc, "").type == WASMCP_JSON_NONE, "empty name");
    CHECK(wasmcp_json_get(doc, "a ").type == WASMCP_JSON_NONE, "prefix match");

    e = wasmcp_json_get(doc, "e");
    CHECK(e.type == WASMCP_JSON_ARRAY && e.len == 16, "e span %zu", e.len);
    CHECK(wasmcp_json_get(e, "f").type == WASMCP_JSON_NONE, "get on an array");
    {
        size_t pos = 0, n = 0;
        wasmcp_json item, key;
        while (wasmcp_json_next(e, &pos, &key, &item))
            n++;
        CHECK(n == 3, "e has %zu items", n);
        CHECK(item.type == WASMCP_JSON_OBJECT, "last item");
        CHECK(wasmcp_json_int(wasmcp_json_get(item, "f"), &i) == 1 && i == 3, "e[2].f");
        CHECK(wasmcp_json_next(e, &pos, NULL, &item) == 0, "next after the end");
    }
    CHECK(str_is(wasmcp_json_get(wasmcp_json_get(doc, "g"), "h"), "i", 1), "g.h");

    {
        const char *names[] = {"a", "b", "c", "d", "e", "g", "c2"};
        size_t pos = 0, n = 0;
        wasmcp_json key, val;
        while (wasmcp_json_next(doc, &pos, &key, &val)) {
            CHECK(n < 7 && str_is(key, names[n], strlen(names[n])), "member %zu", n);
            n++;
        }
        CHECK(n == 7, "%zu members", n);
    }

    /* Empty containers, nesting, scalars at the top. */
    {
        size_t pos = 0;
        wasmcp_json k, x;
        v = parse_ok("{}");
        CHECK(wasmcp_json_next(v, &pos, &k, &x) == 0, "{} has no members");
        pos = 0;
        v = parse_ok("[ ]");
        CHECK(v.len == 3 && wasmcp_json_next(v, &pos, NULL, &x) == 0, "[ ] has no items");
        pos = 0;
        v = parse_ok("[[],{},[[]],\"]\",\"}\\\"\"]");
        while (wasmcp_json_next(v, &pos, NULL, &x))
            k = x;
        CHECK(str_is(k, "}\"", 2), "brackets inside strings do not end containers");
        CHECK(parse_ok("  42 ").len == 2, "number at the top");
        CHECK(parse_ok("\"s\"").type == WASMCP_JSON_STRING, "string at the top");
        CHECK(parse_ok("null").type == WASMCP_JSON_NULL, "null at the top");
        pos = 0;
        CHECK(wasmcp_json_next(parse_ok("3"), &pos, NULL, &x) == 0, "next on a scalar");
    }

    /* Duplicate names: the last wins, as in Go and JavaScript. */
    v = parse_ok("{\"a\":1,\"b\":0,\"a\":2}");
    CHECK(wasmcp_json_int(wasmcp_json_get(v, "a"), &i) == 1 && i == 2, "duplicate: %lld", i);

    /* Names are compared after decoding escapes. */
    v = parse_ok("{\"k\\u00e9y\":1,\"a\\u0000b\":2,\"\\ud83d\\ude00\":3,\"q\\\"\":4}");
    CHECK(wasmcp_json_int(wasmcp_json_get(v, "k\xc3\xa9y"), &i) == 1 && i == 1, "escaped name");
    CHECK(wasmcp_json_get(v, "a").type == WASMCP_JSON_NONE, "NUL in a name is not its end");
    CHECK(wasmcp_json_get(v, "ab").type == WASMCP_JSON_NONE, "NUL in a name is not dropped");
    CHECK(wasmcp_json_int(wasmcp_json_get(v, "\xf0\x9f\x98\x80"), &i) == 1 && i == 3, "pair in a name");
    CHECK(wasmcp_json_int(wasmcp_json_get(v, "q\""), &i) == 1 && i == 4, "quote in a name");

    /* Values are views: a document need not be NUL-terminated. */
    {
        char buf[8] = {'{', '"', 'n', '"', ':', '1', '2', '}'};
        char err[100];
        CHECK(wasmcp_json_parse(buf, 8, &v, err, sizeof err) == 0, "%s", err);
        CHECK(wasmcp_json_int(wasmcp_json_get(v, "n"), &i) == 1 && i == 12, "unterminated buffer");
        CHECK(wasmcp_json_parse(buf, 6, &v, err, sizeof err) == -1, "prefix is incomplete");
        CHECK(wasmcp_json_parse("7", 1, &v, NULL, 0) == 0 && v.len == 1, "no error buffer");
        CHECK(wasmcp_json_parse("x", 1, NULL, NULL, 0) == -1, "no out or error buffer");
        CHECK(wasmcp_json_parse("5", 1, NULL, NULL, 0) == 0, "validate only");
    }
}

static void test_strings(void)
{
    CHECK(str_is(parse_ok("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\""), "\"\\/\b\f\n\r\t", 8), "short escapes");
    CHECK(str_is(parse_ok("\"\\u00e9\\u20AC\""), "\xc3\xa9\xe2\x82\xac", 5), "\\u escapes");
    CHECK(str_is(parse_ok("\"\\u0041\\u007f\\u0080\\u07ff\\u0800\\uffff\""),
                 "A\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf", 12),
          "encoding boundaries");
    CHECK(str_is(parse_ok("\"\\ud83d\\ude00\""), "\xf0\x9f\x98\x80", 4), "surrogate pair");
    CHECK(str_is(parse_ok("\"\\uDBFF\\uDFFF\""), "\xf4\x8f\xbf\xbf", 4), "highest pair");
    CHECK(str_is(parse_ok("\"\\ud800\""), "\xef\xbf\xbd", 3), "lone high surrogate at the end");
    CHECK(str_is(parse_ok("\"\\udc00x\""), "\xef\xbf\xbdx", 4), "lone low surrogate");
    CHECK(str_is(parse_ok("\"\\ud800\\u0041\""), "\xef\xbf\xbd" "A", 4), "high then not low");
    CHECK(str_is(parse_ok("\"\\ud800\\ud800\\udc00\""), "\xef\xbf\xbd\xf0\x90\x80\x80", 7),
          "high, then a pair");
    CHECK(str_is(parse_ok("\"\\udc00\\ud800\""), "\xef\xbf\xbd\xef\xbf\xbd", 6), "reversed pair");
    CHECK(str_is(parse_ok("\"\\ud800\\n\""), "\xef\xbf\xbd\n", 4), "high then another escape");
    CHECK(str_is(parse_ok("\"a\\u0000b\""), "a\0b", 3), "NUL");
    CHECK(str_is(parse_ok("\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\x7f\""),
                 "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\x7f", 10),
          "raw UTF-8 and DEL");
    CHECK(str_is(parse_ok("\"\""), "", 0), "empty");
}

static void test_numbers(void)
{
    static const struct {
        const char *text;
        int r;
        double want;
    } nums[] = {
        {"0", 1, 0},        {"-0", 1, 0},          {"1.5", 1, 1.5},    {"-1E-2", 1, -0.01},
        {"1e2", 1, 100},    {"1e+2", 1, 100},      {"0.1", 1, 0.1},    {"1e308", 1, 1e308},
        {"1e400", -1, 0},   {"-1e400", -1, 0},     {"1e-400", 1, 0},   {"4.9e-324", 1, 4.9e-324},
        {"123456789012345678901234567890", 1, 1.2345678901234568e29},
    };
    static const struct {
        const char *text;
        int r;
        long long want;
    } ints[] = {
        {"5", 1, 5},
        {"-5", 1, -5},
        {"5.0", 1, 5},
        {"1e2", 1, 100},
        {"1E+2", 1, 100},
        {"-0", 1, 0},
        {"2.5", 0, 0},
        {"1e-2", 0, 0},
        {"9223372036854775807", 1, LLONG_MAX},
        {"-9223372036854775808", 1, LLONG_MIN},
        {"9223372036854775808", -1, 0},
        {"-9223372036854775809", -1, 0},
        {"1e19", -1, 0},
        {"9.3e18", -1, 0},
        {"-9.2233720368547758e18", 1, LLONG_MIN},
        {"1e400", -1, 0},
        {"123456789012345678901234567890", -1, 0},
    };
    size_t k;
    char big[400];
    double d;
    long long i;

    for (k = 0; k < sizeof nums / sizeof nums[0]; k++) {
        int r = wasmcp_json_number(parse_ok(nums[k].text), &d);
        CHECK(r == nums[k].r && (r != 1 || d == nums[k].want), "number %s: %d %g", nums[k].text, r, d);
    }
    for (k = 0; k < sizeof ints / sizeof ints[0]; k++) {
        int r = wasmcp_json_int(parse_ok(ints[k].text), &i);
        CHECK(r == ints[k].r && (r != 1 || i == ints[k].want), "int %s: %d %lld", ints[k].text, r, i);
    }
    /* Longer than the accessors' stack buffer. */
    memset(big, '9', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    CHECK(wasmcp_json_number(parse_ok(big), &d) == -1, "400 nines overflow a double");
    CHECK(wasmcp_json_int(parse_ok(big), &i) == -1, "400 nines overflow an int");
    big[0] = '0';
    big[1] = '.';
    CHECK(wasmcp_json_number(parse_ok(big), &d) == 1 && d == 1, "0.999... rounds to 1");
    CHECK(wasmcp_json_int(parse_ok("\"5\""), &i) == 0, "a string is not an int");
    CHECK(wasmcp_json_number(parse_ok("true"), &d) == 0, "true is not a number");
}

static void test_malformed(void)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"", "unexpected end of input; expected a value"},
        {"   ", "unexpected end of input"},
        {"{", "unexpected end of input; expected a string naming a member"},
        {"{\"a\"", "expected ':' after a member's name"},
        {"{\"a\" 1}", "expected ':' after a member's name, found '1'"},
        {"{\"a\":", "unexpected end of input; expected a value"},
        {"{\"a\":1", "unexpected end of input; expected ',' or '}'"},
        {"{\"a\":1,}", "expected a string naming a member, found '}'"},
        {"{\"a\":1 \"b\":2}", "expected ',' or '}', found '\"'"},
        {"{'a':1}", "expected a string naming a member, found '''"},
        {"{a:1}", "expected a string naming a member, found 'a'"},
        {"{1:1}", "expected a string naming a member"},
        {"[1,]", "at byte 3: expected a value, found ']'"},
        {"[1 2]", "expected ',' or ']', found '2'"},
        {"[1,2,x]", "at byte 5: expected a value, found 'x'"},
        {"[", "unexpected end of input"},
        {"]", "expected a value, found ']'"},
        {"[}", "expected a value, found '}'"},
        {"{]", "expected a string naming a member, found ']'"},
        {"[1}", "expected ',' or ']', found '}'"},
        {"\"abc", "unterminated string"},
        {"\"abc\\", "unterminated string"},
        {"\"\\q\"", "at byte 1: invalid escape \\q"},
        {"\"\\x41\"", "invalid escape \\x"},
        {"\"\\U0041\"", "invalid escape \\U"},
        {"\"\\u12\"", "\\u needs four hex digits, found '\"'"},
        {"\"\\u12G4\"", "\\u needs four hex digits, found 'G'"},
        {"\"\\u00", "unterminated string"},
        {"\"\\\xc3\xa9\"", "invalid escape: byte 0xC3 after \\"},
        {"\"a\x01\"", "control character U+0001 in a string must be escaped"},
        {"\"a\tb\"", "control character U+0009"},
        {"\"a\nb\"", "control character U+000A"},
        {"\"\xff\"", "at byte 1: invalid UTF-8"},
        {"\"\x80\"", "invalid UTF-8"},
        {"\"\xc0\xaf\"", "invalid UTF-8"},         /* overlong '/' */
        {"\"\xe0\x80\xaf\"", "invalid UTF-8"},     /* overlong, 3 bytes */
        {"\"\xf0\x80\x80\xaf\"", "invalid UTF-8"}, /* overlong, 4 bytes */
        {"\"\xed\xa0\x80\"", "invalid UTF-8"},     /* an encoded surrogate */
        {"\"\xf4\x90\x80\x80\"", "invalid UTF-8"}, /* past U+10FFFF */
        {"\"\xf5\x80\x80\x80\"", "invalid UTF-8"},
        {"\"\xe2\x82\"", "invalid UTF-8"},         /* truncated */
        {"\"\xe2\x82", "invalid UTF-8"},
        {"01", "a leading zero must stand alone"},
        {"-01", "a leading zero"},
        {"-", "invalid number: expected a digit, found the end of the input"},
        {"-a", "invalid number: expected a digit, found 'a'"},
        {"1.", "expected a digit after '.'"},
        {"1.e5", "expected a digit after '.', found 'e'"},
        {"1e", "expected a digit in the exponent"},
        {"1e+", "expected a digit in the exponent"},
        {".5", "expected a value, found '.'"},
        {"+1", "expected a value, found '+'"},
        {"0x10", "unexpected data after the value"},
        {"1 2", "at byte 2: unexpected data after the value"},
        {"{} {}", "unexpected data after the value"},
        {"{\"a\":1}x", "unexpected data after the value"},
        {"tru", "invalid literal; expected true"},
        {"fals", "invalid literal; expected false"},
        {"nul", "invalid literal; expected null"},
        {"nulL", "invalid literal; expected null"},
        {"truex", "unexpected data after the value"},
        {"True", "expected a value, found 'T'"},
        {"NaN", "expected a value, found 'N'"},
        {"Infinity", "expected a value, found 'I'"},
        {"-Infinity", "invalid number"},
        {"\xef\xbb\xbf{}", "expected a value, found byte 0xEF"}, /* a BOM is not JSON */
        {"/* c */ {}", "expected a value, found '/'"},
    };
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++)
        bad(cases[k].text, cases[k].want);

    /* A NUL byte is data, not the end of the text. */
    parse_bad("{\0}", 3, "expected a string naming a member, found byte 0x00");
    parse_bad("[1]\0", 4, "unexpected data after the value");
    parse_bad("\"a\0\"", 4, "control character U+0000");

    /* A small error buffer truncates; it is never overrun. */
    {
        char err[12];
        memset(err, 'X', sizeof err);
        CHECK(wasmcp_json_parse("[", 1, NULL, err, 10) == -1, "small buffer");
        CHECK(strlen(err) == 9 && err[10] == 'X', "error %s overran its buffer", err);
        CHECK(wasmcp_json_parse("[", 1, NULL, err, 1) == -1 && err[0] == '\0', "1-byte buffer");
    }
}

static void test_depth(void)
{
    size_t n = 200000, k;
    char *s = malloc(2 * n + 16);
    char err[200];
    wasmcp_json v;

    /* Exactly the limit parses; one more is refused. */
    for (k = 0; k < WASMCP_JSON_MAX_DEPTH; k++) {
        s[k] = '[';
        s[2 * WASMCP_JSON_MAX_DEPTH - 1 - k] = ']';
    }
    CHECK(wasmcp_json_parse(s, 2 * WASMCP_JSON_MAX_DEPTH, &v, err, sizeof err) == 0, "%s", err);
    CHECK(v.len == 2 * WASMCP_JSON_MAX_DEPTH, "deep span");
    {
        /* Walk to the bottom with next, as a tool would. */
        size_t levels = 0, pos;
        wasmcp_json inner = v;
        for (;;) {
            pos = 0;
            levels++;
            if (!wasmcp_json_next(inner, &pos, NULL, &inner))
                break;
        }
        CHECK(levels == WASMCP_JSON_MAX_DEPTH, "walked %zu levels", levels);
    }

    for (k = 0; k <= WASMCP_JSON_MAX_DEPTH; k++) {
        s[k] = '[';
        s[2 * WASMCP_JSON_MAX_DEPTH + 1 - k] = ']';
    }
    parse_bad(s, 2 * WASMCP_JSON_MAX_DEPTH + 2, "at byte 128: nested deeper than 128");

    /* Hostile depth costs a refusal, not the stack. */
    memset(s, '[', n);
    parse_bad(s, n, "nested deeper than 128");
    for (k = 0; k < n / 5; k++)
        memcpy(s + 5 * k, "{\"a\":", 5);
    parse_bad(s, n, "nested deeper than 128");
    /* Objects and arrays count alike. */
    for (k = 0; k < 64; k++)
        memcpy(s + 6 * k, "{\"a\":[", 6);
    parse_bad(s, 6 * 64, "unexpected end of input");
    free(s);
}

/* Visits every value the way a tool might, so that the sanitizers see each
 * accessor run over whatever the parser accepted. */
static size_t walk(wasmcp_json v, int depth)
{
    size_t pos = 0, n = 1;
    wasmcp_json key, item;
    double d;
    long long i;
    int b;
    free(wasmcp_json_string(v, NULL));
    wasmcp_json_number(v, &d);
    wasmcp_json_int(v, &i);
    wasmcp_json_bool(v, &b);
    wasmcp_json_get(v, "a");
    while (depth < 8 && wasmcp_json_next(v, &pos, &key, &item)) {
        free(wasmcp_json_string(key, NULL));
        n += walk(item, depth + 1);
    }
    return n;
}

static void test_random(void)
{
    /* Valid documents with one to three bytes replaced, inserted or
     * deleted: most are refused, some still parse, and none may make the
     * parser or the accessors read out of bounds. */
    static const char *const seeds[] = {
        "{\"a\":[1,2.5e-3,{\"b\":null}],\"c\":\"x\\u00e9\\ud83d\\ude00\\n\",\"d\":{}}",
        "[[],{},[[{\"a\":true}]],\"]\",\"}\\\"\",-0,1E+2,false]",
        "{\"a\":{\"a\":{\"a\":[\"\xc3\xa9\xf0\x9f\x98\x80\",\"\\ud800\\u0041\"]}}}",
    };
    static const char alphabet[] = "{}[]\",:  \\u0aF9-+.eE1tfnrul\xc3\xa9\xed\xf0\x80\x01";
    char doc[128];
    unsigned seed = 7;
    size_t k, m, accepted = 0, values = 0, odd = 0;
#define RAND() (seed = seed * 1103515245u + 12345u, (size_t)(seed >> 16))
    for (k = 0; k < 100000; k++) {
        const char *src = seeds[RAND() % 3];
        size_t len = strlen(src), at;
        wasmcp_json v;
        char err[120];
        memcpy(doc, src, len);
        for (m = RAND() % 3 + 1; m > 0; m--) {
            at = RAND() % len;
            switch (RAND() % 3) {
            case 0:
                doc[at] = alphabet[RAND() % (sizeof alphabet - 1)];
                break;
            case 1:
                memmove(doc + at + 1, doc + at, len - at);
                doc[at] = alphabet[RAND() % (sizeof alphabet - 1)];
                len++;
                break;
            default:
                memmove(doc + at, doc + at + 1, len - at - 1);
                len--;
            }
        }
        if (wasmcp_json_parse(doc, len, &v, err, sizeof err) == 0) {
            accepted++;
            values += walk(v, 0);
        } else if (strncmp(err, "invalid JSON at byte ", 21) != 0 && !odd++) {
            CHECK(0, "error %s", err);
        }
    }
#undef RAND
    CHECK(accepted > 1000 && values > 5 * accepted, "%zu mutants accepted, %zu values", accepted, values);
}

/* ---- Writer -------------------------------------------------------------- */

static void expect_out(wasmcp_out *o, const char *want, size_t wantlen, const char *what)
{
    CHECK(o->len == wantlen && memcmp(o->data, want, wantlen) == 0 && o->data[o->len] == '\0',
          "%s: wrote %s; want %s", what, o->data, want);
    wasmcp_out_free(o);
}

#define EXPECT(o, lit, what) expect_out(o, lit, sizeof lit - 1, what)

static void write_string(const char *s, size_t len, const char *want, size_t wantlen)
{
    wasmcp_out o = {0};
    char err[200];
    wasmcp_json v;
    wasmcp_out_string(&o, s, len);
    /* Whatever the writer writes, the reader must accept. */
    CHECK(wasmcp_json_parse(o.data, o.len, &v, err, sizeof err) == 0, "%s: %s", o.data, err);
    expect_out(&o, want, wantlen, "string");
}

#define STRING(in, want) write_string(in, sizeof in - 1, want, sizeof want - 1)

static void test_writer(void)
{
    wasmcp_out o = {0};
    size_t k;

    wasmcp_out_begin_object(&o);
    wasmcp_out_key(&o, "a");
    wasmcp_out_int(&o, 1);
    wasmcp_out_key(&o, "b");
    wasmcp_out_begin_array(&o);
    wasmcp_out_bool(&o, 1);
    wasmcp_out_bool(&o, 0);
    wasmcp_out_null(&o);
    wasmcp_out_str(&o, "x");
    wasmcp_out_begin_object(&o);
    wasmcp_out_end_object(&o);
    wasmcp_out_begin_array(&o);
    wasmcp_out_end_array(&o);
    wasmcp_out_end_array(&o);
    wasmcp_out_key(&o, "c");
    wasmcp_out_begin_object(&o);
    wasmcp_out_key(&o, "d\"e");
    wasmcp_out_number(&o, 1.5);
    wasmcp_out_end_object(&o);
    wasmcp_out_key(&o, "");
    wasmcp_out_begin_array(&o);
    wasmcp_out_begin_array(&o);
    wasmcp_out_end_array(&o);
    wasmcp_out_begin_array(&o);
    wasmcp_out_int(&o, 2);
    wasmcp_out_end_array(&o);
    wasmcp_out_end_array(&o);
    wasmcp_out_end_object(&o);
    EXPECT(&o, "{\"a\":1,\"b\":[true,false,null,\"x\",{},[]],\"c\":{\"d\\\"e\":1.5},\"\":[[],[2]]}",
           "nested");

    wasmcp_out_begin_array(&o);
    wasmcp_out_end_array(&o);
    EXPECT(&o, "[]", "empty array");
    wasmcp_out_str(&o, "");
    EXPECT(&o, "\"\"", "empty string");

    STRING("\x01\x02\x1f\b\f\n\r\t\"\\/\x7f", "\"\\u0001\\u0002\\u001f\\b\\f\\n\\r\\t\\\"\\\\/\x7f\"");
    STRING("a\0b", "\"a\\u0000b\"");
    STRING("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
    STRING("\xff", "\"\xef\xbf\xbd\"");
    STRING("a\x80z", "\"a\xef\xbf\xbdz\"");
    STRING("\xe2\x82", "\"\xef\xbf\xbd\xef\xbf\xbd\"");              /* truncated at the end */
    STRING("\xe2\x82z", "\"\xef\xbf\xbd\xef\xbf\xbdz\"");            /* truncated mid-string */
    STRING("\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""); /* a surrogate */
    STRING("\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\"");              /* overlong */
    STRING("\xf4\x90\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
    STRING("\xef\xbf\xbd", "\"\xef\xbf\xbd\"");

    {
        static const struct {
            double x;
            const char *want;
        } nums[] = {
            {0, "0"},
            {-0.0, "-0"},
            {1, "1"},
            {-7, "-7"},
            {90, "90"},
            {0.1, "0.1"},
            {1.0 / 3, "0.3333333333333333"},
            {2.5, "2.5"},
            {-1234.5678, "-1234.5678"},
            {1e20, "100000000000000000000"},
            {1e21, "1e+21"},
            {123456789012345678.0, "123456789012345680"},
            {0.000001, "0.000001"},
            {1.5e-6, "0.0000015"},
            {1e-7, "1e-07"},
            {5e-324, "5e-324"},
            {DBL_MAX, "1.7976931348623157e+308"},
            {-DBL_MIN, "-2.2250738585072014e-308"},
            {0.30000000000000004, "0.30000000000000004"},
            {9007199254740993.0, "9007199254740992"},
        };
        for (k = 0; k < sizeof nums / sizeof nums[0]; k++) {
            char err[100];
            wasmcp_json v;
            double back = NAN;
            wasmcp_out_number(&o, nums[k].x);
            CHECK(wasmcp_json_parse(o.data, o.len, &v, err, sizeof err) == 0 &&
                      wasmcp_json_number(v, &back) == 1 && back == nums[k].x,
                  "%s does not read back as %.17g", o.data, nums[k].x);
            CHECK(strcmp(o.data, nums[k].want) == 0, "number %.17g: %s; want %s", nums[k].x, o.data,
                  nums[k].want);
            wasmcp_out_free(&o);
        }
    }

    wasmcp_out_int(&o, LLONG_MIN);
    EXPECT(&o, "-9223372036854775808", "LLONG_MIN");
    wasmcp_out_int(&o, LLONG_MAX);
    EXPECT(&o, "9223372036854775807", "LLONG_MAX");

    /* Growth: a large array written piece by piece. */
    {
        char err[100];
        wasmcp_json v, item;
        size_t pos = 0, n = 0;
        long long i = -1;
        wasmcp_out_begin_array(&o);
        for (k = 0; k < 100000; k++)
            wasmcp_out_int(&o, (long long)k);
        wasmcp_out_end_array(&o);
        CHECK(wasmcp_json_parse(o.data, o.len, &v, err, sizeof err) == 0, "%s", err);
        while (wasmcp_json_next(v, &pos, NULL, &item))
            n++;
        CHECK(n == 100000 && wasmcp_json_int(item, &i) == 1 && i == 99999, "%zu items, last %lld", n, i);
        wasmcp_out_free(&o);
    }
}

/* ---- Host functions ------------------------------------------------------ */

static void test_host(void)
{
    static char big[WASMCP_MAX_MESSAGE * 2];

    host_result = WASMCP_OK;
    CHECK(wasmcp_log(WASMCP_INFO, "n=%d %s", 5, "x") == WASMCP_OK, "log");
    CHECK(last_level == 1 && last_len == 5 && memcmp(last_msg, "n=5 x", 5) == 0, "log sent %.*s",
          (int)last_len, last_msg);
    CHECK(WASMCP_DEBUG == 0 && WASMCP_EMERGENCY == 7 && WASMCP_ORDER == 6, "constants");

    host_result = WASMCP_LIMIT;
    CHECK(wasmcp_log(WASMCP_EMERGENCY, "x") == WASMCP_LIMIT, "the host's code is returned");
    CHECK(last_level == 7, "level");
    host_result = WASMCP_OK;

    /* Cut to 8 KiB, never inside a character. */
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    wasmcp_log(WASMCP_DEBUG, "%s", big);
    CHECK(last_len == WASMCP_MAX_MESSAGE, "long message: %zu bytes", last_len);
    memcpy(big + WASMCP_MAX_MESSAGE - 1, "\xc3\xa9", 2);
    wasmcp_log(WASMCP_DEBUG, "%s", big);
    CHECK(last_len == WASMCP_MAX_MESSAGE - 1, "2-byte character at the limit: %zu", last_len);
    memcpy(big + WASMCP_MAX_MESSAGE - 2, "\xf0\x9f\x98\x80", 4);
    wasmcp_log(WASMCP_DEBUG, "%s", big);
    CHECK(last_len == WASMCP_MAX_MESSAGE - 2, "4-byte character at the limit: %zu", last_len);
    memset(big, 'a', sizeof big - 1);
    big[WASMCP_MAX_MESSAGE] = '\0';
    wasmcp_log(WASMCP_DEBUG, "%s", big);
    CHECK(last_len == WASMCP_MAX_MESSAGE, "exactly the limit: %zu", last_len);
    wasmcp_log(WASMCP_DEBUG, "%s", "");
    CHECK(last_len == 0, "empty message");

    CHECK(wasmcp_progress(1, 10, "one") == WASMCP_OK, "progress");
    CHECK(last_progress == 1 && last_total == 10 && last_len == 3 && memcmp(last_msg, "one", 3) == 0,
          "progress sent");
    wasmcp_progress(2, -1, NULL);
    CHECK(last_progress == 2 && last_total == -1 && last_len == 0, "progress without a message");
    memset(big, 'b', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    memcpy(big + WASMCP_MAX_MESSAGE - 1, "\xe2\x82\xac", 3);
    wasmcp_progress(3, 3, big);
    CHECK(last_len == WASMCP_MAX_MESSAGE - 1, "long progress message: %zu", last_len);
}

static void test_utf8(void)
{
    uint32_t cp;
    CHECK(wasmcp_utf8_decode("A", 1, &cp) == 1 && cp == 'A', "ASCII");
    CHECK(wasmcp_utf8_decode("\xc3\xa9", 2, &cp) == 2 && cp == 0xE9, "2 bytes");
    CHECK(wasmcp_utf8_decode("\xf0\x9f\x98\x80", 4, &cp) == 4 && cp == 0x1F600, "4 bytes");
    CHECK(wasmcp_utf8_decode("\xf0\x9f\x98\x80", 3, &cp) == 1 && cp == 0xFFFD, "truncated by len");
    CHECK(wasmcp_utf8_decode("\xed\xa0\x80", 3, &cp) == 1 && cp == 0xFFFD, "surrogate");
    CHECK(wasmcp_utf8_decode("\x80", 1, &cp) == 1 && cp == 0xFFFD, "continuation byte");
    CHECK(wasmcp_utf8_decode("", 0, &cp) == 0, "empty");
    CHECK(wasmcp_tool(2, (char *[]){"m", "t", NULL}) != NULL, "tool name");
    CHECK(wasmcp_tool(1, (char *[]){"m", NULL}) == NULL, "no tool name");
}

/* ---- HTTP ---------------------------------------------------------------- */

/* Sends req and checks the request JSON the host received. */
static void sent_as(const wasmcp_http_request *req, const char *want, const char *what)
{
    wasmcp_http_response resp;
    char err[200];
    wasmcp_json v;
    answer(WASMCP_OK, "{\"status\":200}");
    CHECK(wasmcp_http(req, &resp, err, sizeof err) == WASMCP_OK, "%s: %s", what, err);
    CHECK(http_sent && strcmp(http_sent, want) == 0, "%s: sent %s; want %s", what, http_sent, want);
    CHECK(http_sent && wasmcp_json_parse(http_sent, http_sent_len, &v, err, sizeof err) == 0, "%s: %s", what, err);
    wasmcp_http_free(&resp);
}

static void test_ask(void)
{
    char *got;
    size_t len;
    char err[100];
    int rc;

    answer(WASMCP_OK, "{\"action\":\"accept\",\"content\":{\"ok\":true}}");
    rc = wasmcp_elicit("confirm", "{\"message\":\"Go on?\",\"requestedSchema\":{\"type\":\"object\"}}", &got, &len, err, sizeof err);
    CHECK(rc == WASMCP_OK && got && strcmp(got, "{\"action\":\"accept\",\"content\":{\"ok\":true}}") == 0 && len == strlen(got),
          "elicit: rc %d, answer %s", rc, got ? got : "(none)");
    CHECK(strcmp(asked_fn, "elicit") == 0 &&
              strcmp(http_sent, "{\"id\":\"confirm\",\"params\":{\"message\":\"Go on?\",\"requestedSchema\":{\"type\":\"object\"}}}") == 0,
          "elicit sent %s to %s", http_sent, asked_fn);
    free(got);

    answer(WASMCP_OK, "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"4\"},\"model\":\"m\"}");
    rc = wasmcp_create_message(NULL, "{\"messages\":[],\"maxTokens\":1}", &got, &len, err, sizeof err);
    CHECK(rc == WASMCP_OK && strcmp(asked_fn, "create_message") == 0 && strcmp(http_sent, "{\"params\":{\"messages\":[],\"maxTokens\":1}}") == 0,
          "create_message: rc %d, sent %s", rc, http_sent);
    free(got);

    answer(WASMCP_DENIED, "{\"error\":\"the client did not declare the roots capability\"}");
    rc = wasmcp_list_roots("roots", &got, &len, err, sizeof err);
    CHECK(rc == WASMCP_DENIED && got == NULL && strcmp(err, "the client did not declare the roots capability") == 0 &&
              strcmp(http_sent, "{\"id\":\"roots\",\"params\":{}}") == 0,
          "list_roots refused: rc %d, err %s, sent %s", rc, err, http_sent);

    answer(WASMCP_TOO_LONG, NULL);
    rc = wasmcp_elicit(NULL, "{}", &got, &len, err, sizeof err);
    CHECK(rc == WASMCP_TOO_LONG && got == NULL && strstr(err, "error 4"), "elicit too long: rc %d, err %s", rc, err);
}

static void test_http_request(void)
{
    static const wasmcp_http_header headers[] = {
        {"Accept", "application/json"}, {"X-\"Q\"", "tab\there\\"}, {"X-Utf8", "\xc3\xa9"}};
    static const unsigned char binary[] = {0x00, 0xff, 0xfe, 'a'};
    wasmcp_http_request req = {0};
    wasmcp_http_response resp;
    char err[100];

    req.url = "https://api.example.com/v1?q=a&b=\"c\"";
    sent_as(&req, "{\"method\":\"GET\",\"url\":\"https://api.example.com/v1?q=a&b=\\\"c\\\"\"}", "defaults");
    req.method = "";
    req.secret = "";
    sent_as(&req, "{\"method\":\"GET\",\"url\":\"https://api.example.com/v1?q=a&b=\\\"c\\\"\"}",
            "empty method and secret");

    req.method = "POST";
    req.url = "https://x.test/";
    req.headers = headers;
    req.nheaders = 3;
    req.body = "{\"a\":\"h\xc3\xa9\\n\"}\n\x01";
    req.body_len = strlen(req.body);
    req.secret = "github";
    sent_as(&req,
            "{\"method\":\"POST\",\"url\":\"https://x.test/\",\"headers\":{\"Accept\":\"application/json\","
            "\"X-\\\"Q\\\"\":\"tab\\there\\\\\",\"X-Utf8\":\"\xc3\xa9\"},"
            "\"body\":\"{\\\"a\\\":\\\"h\xc3\xa9\\\\n\\\"}\\n\\u0001\",\"secret\":\"github\"}",
            "everything, escaped");

    req.headers = NULL;
    req.nheaders = 0;
    req.secret = NULL;
    req.body = "";
    req.body_len = 0;
    sent_as(&req, "{\"method\":\"POST\",\"url\":\"https://x.test/\",\"body\":\"\"}", "an empty body is a body");
    req.body = "a\0b";
    req.body_len = 3;
    sent_as(&req, "{\"method\":\"POST\",\"url\":\"https://x.test/\",\"body\":\"a\\u0000b\"}", "NUL is UTF-8");

    /* Not UTF-8: base64, with each length of padding. */
    req.body = binary;
    req.body_len = 4;
    sent_as(&req, "{\"method\":\"POST\",\"url\":\"https://x.test/\",\"body_base64\":\"AP/+YQ==\"}", "binary");
    req.body = binary + 1;
    req.body_len = 1;
    sent_as(&req, "{\"method\":\"POST\",\"url\":\"https://x.test/\",\"body_base64\":\"/w==\"}", "1 byte");
    req.body_len = 2;
    sent_as(&req, "{\"method\":\"POST\",\"url\":\"https://x.test/\",\"body_base64\":\"//4=\"}", "2 bytes");
    req.body_len = 3;
    sent_as(&req, "{\"method\":\"POST\",\"url\":\"https://x.test/\",\"body_base64\":\"//5h\"}", "3 bytes");
    req.body = "\xed\xa0\x80"; /* an encoded surrogate is not UTF-8 */
    req.body_len = 3;
    sent_as(&req, "{\"method\":\"POST\",\"url\":\"https://x.test/\",\"body_base64\":\"7aCA\"}", "surrogate");
    req.body = "ab\xc3"; /* truncated character */
    sent_as(&req, "{\"method\":\"POST\",\"url\":\"https://x.test/\",\"body_base64\":\"YWLD\"}", "truncated");

    /* No URL: refused before the host is asked. */
    free(http_sent);
    http_sent = NULL;
    req.url = NULL;
    CHECK(wasmcp_http(&req, &resp, err, sizeof err) == WASMCP_INVALID && strstr(err, "no url"), "no url: %s", err);
    CHECK(http_sent == NULL, "a request without a url was sent");
}

/* Calls wasmcp_http against the answer set up and checks the code and the
 * error message (NULL: expect success). */
static int http_call(int want_code, const char *want_err, wasmcp_http_response *resp, const char *what)
{
    wasmcp_http_request req = {0};
    char err[200];
    int r;
    req.url = "https://x.test/";
    memset(resp, 0xAB, sizeof *resp); /* wasmcp_http must not rely on it */
    memset(err, 'X', sizeof err);
    r = wasmcp_http(&req, resp, err, sizeof err);
    CHECK(r == want_code, "%s: returned %d; want %d (%s)", what, r, want_code, err);
    if (want_err)
        CHECK(strstr(err, want_err) != NULL, "%s: error %s; want %s", what, err, want_err);
    else
        CHECK(err[0] == '\0', "%s: error %s on success", what, err);
    if (r != WASMCP_OK)
        CHECK(resp->status == 0 && resp->body == NULL && resp->headers == NULL && resp->nheaders == 0,
              "%s: a failed call left a response", what);
    return r == want_code;
}

static int body_is(const wasmcp_http_response *resp, const char *want, size_t len)
{
    return resp->body && resp->body_len == len && memcmp(resp->body, want, len) == 0 && resp->body[len] == '\0';
}

static void test_http_answers(void)
{
    wasmcp_http_response resp;

    answer(WASMCP_OK, "{\"status\":200,\"headers\":{\"Content-Type\":\"text/plain; charset=utf-8\",\"X-A\":\"1\"},"
                      "\"body\":\"h\\u00e9llo\\n\"}");
    if (http_call(WASMCP_OK, NULL, &resp, "text body")) {
        CHECK(resp.status == 200, "status %d", resp.status);
        CHECK(body_is(&resp, "h\xc3\xa9llo\n", 7), "body %s (%zu)", resp.body, resp.body_len);
        CHECK(resp.nheaders == 2 && strcmp(resp.headers[1].name, "X-A") == 0, "headers");
        CHECK(wasmcp_http_find_header(&resp, "content-type") &&
                  strcmp(wasmcp_http_find_header(&resp, "content-type"), "text/plain; charset=utf-8") == 0,
              "header lookup ignores case");
        CHECK(wasmcp_http_find_header(&resp, "X-A") && !wasmcp_http_find_header(&resp, "X-A2") &&
                  !wasmcp_http_find_header(&resp, "X-") && !wasmcp_http_find_header(&resp, ""),
              "header names match whole");
    }
    wasmcp_http_free(&resp);
    CHECK(resp.body == NULL && resp.headers == NULL && resp.nheaders == 0, "free empties");
    wasmcp_http_free(&resp); /* twice is harmless */

    answer(WASMCP_OK, "{\"status\":201,\"body_base64\":\"AP/+YQ==\"}");
    if (http_call(WASMCP_OK, NULL, &resp, "base64 body"))
        CHECK(resp.status == 201 && body_is(&resp, "\0\xff\xfe" "a", 4) && resp.nheaders == 0,
              "binary body: %zu bytes", resp.body_len);
    wasmcp_http_free(&resp);
    {
        static const char *const cases[][2] = {{"", ""}, {"Zg==", "f"}, {"Zm8=", "fo"}, {"Zm9v", "foo"},
                                               {"Zm9vYg==", "foob"}, {"+/+/", "\xfb\xff\xbf"}};
        char json[100];
        size_t k;
        for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            snprintf(json, sizeof json, "{\"status\":200,\"body_base64\":\"%s\"}", cases[k][0]);
            answer(WASMCP_OK, json);
            if (http_call(WASMCP_OK, NULL, &resp, cases[k][0]))
                CHECK(body_is(&resp, cases[k][1], strlen(cases[k][1])), "base64 %s: %s", cases[k][0], resp.body);
            wasmcp_http_free(&resp);
        }
    }

    answer(WASMCP_OK, "{\"status\":204}");
    if (http_call(WASMCP_OK, NULL, &resp, "no body"))
        CHECK(resp.status == 204 && body_is(&resp, "", 0), "no body is an empty one");
    wasmcp_http_free(&resp);
    answer(WASMCP_OK, "{\"status\":200,\"body\":\"a\\u0000b\",\"body_base64\":\"eA==\",\"headers\":null}");
    if (http_call(WASMCP_OK, NULL, &resp, "NUL in the body"))
        CHECK(body_is(&resp, "a\0b", 3), "body holds NUL; body wins over body_base64");
    wasmcp_http_free(&resp);
    answer(WASMCP_OK, "{\"headers\":{\"A\":\"1\",\"a\":\"2\"},\"status\":200,\"extra\":[1]}");
    if (http_call(WASMCP_OK, NULL, &resp, "duplicate header"))
        CHECK(strcmp(wasmcp_http_find_header(&resp, "A"), "2") == 0, "the last header of a name wins");
    wasmcp_http_free(&resp);

    /* Refusals carry the host's message. */
    answer(WASMCP_DENIED, "{\"error\":\"http requests to https://x.test/: this tool has no http grant\"}");
    http_call(WASMCP_DENIED, "http requests to https://x.test/: this tool has no http grant", &resp, "denied");
    answer(WASMCP_NETWORK, "{\"error\":\"dial tcp: i/o timeout\"}");
    http_call(WASMCP_NETWORK, "dial tcp: i/o timeout", &resp, "network");
    answer(WASMCP_INVALID, "{\"error\":\"give body or body_base64, not both\"}");
    http_call(WASMCP_INVALID, "give body or body_base64, not both", &resp, "invalid");
    /* Without one, or with an unreadable one, the code speaks. */
    answer(WASMCP_DENIED, NULL);
    http_call(WASMCP_DENIED, "wasmcp host: the server's policy does not allow this request", &resp, "bare 7");
    answer(WASMCP_TOO_LONG, NULL);
    http_call(WASMCP_TOO_LONG, "wasmcp host: the request is too long", &resp, "bare 4");
    answer(42, NULL);
    http_call(42, "wasmcp host: error 42", &resp, "unknown code");
    answer(WASMCP_NETWORK, "{\"error\":");
    http_call(WASMCP_NETWORK, "wasmcp host: the request failed", &resp, "truncated error answer");
    answer(WASMCP_DENIED, "{\"error\":7}");
    http_call(WASMCP_DENIED, "the server's policy does not allow", &resp, "error not a string");
    answer(WASMCP_DENIED, "{\"error\":\"\"}");
    http_call(WASMCP_DENIED, "the server's policy does not allow", &resp, "empty error");
    answer(WASMCP_DENIED, "[\"x\"]");
    http_call(WASMCP_DENIED, "the server's policy does not allow", &resp, "array answer");

    /* A host that announces less than it has: the buffer is too small. */
    answer(WASMCP_OK, "{\"status\":200,\"body\":\"0123456789\"}");
    http_announced = 5;
    http_call(WASMCP_TOO_LONG, "the answer did not fit the 5 bytes announced for it", &resp, "too small");
    answer(WASMCP_OK, "{\"status\":200}");
    http_announced = 5;
    http_call(WASMCP_TOO_LONG, "did not fit", &resp, "too small again");

    /* A small error buffer: cut, terminated, not overrun, and never inside a
     * character. */
    {
        wasmcp_http_request req = {0};
        char err[16];
        req.url = "u";
        answer(WASMCP_DENIED, "{\"error\":\"a\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"}");
        memset(err, 'X', sizeof err);
        CHECK(wasmcp_http(&req, &resp, err, 5) == WASMCP_DENIED, "small buffer");
        CHECK(strcmp(err, "a\xc3\xa9") == 0 && err[5] == 'X', "cut to %s", err);
        memset(err, 'X', sizeof err);
        CHECK(wasmcp_http(&req, &resp, err, 6) == WASMCP_DENIED, "small buffer");
        CHECK(strcmp(err, "a\xc3\xa9\xc3\xa9") == 0, "cut to %s", err);
        memset(err, 'X', sizeof err);
        CHECK(wasmcp_http(&req, &resp, err, 1) == WASMCP_DENIED && err[0] == '\0' && err[1] == 'X', "1 byte");
        CHECK(wasmcp_http(&req, &resp, NULL, 0) == WASMCP_DENIED, "no error buffer");
        answer(WASMCP_DENIED, "{\"error\":\"abcdefghijklmnopqrstuvwxyz\"}");
        CHECK(wasmcp_http(&req, &resp, err, sizeof err) == WASMCP_DENIED && strcmp(err, "abcdefghijklmno") == 0,
              "ASCII cut to %s", err);
    }

    /* Hostile or broken success answers fail cleanly, with -1. */
    {
        static const char *const cases[][2] = {
            {"{\"status\":200,\"body\":\"ab", "unreadable http answer: invalid JSON at byte 24: unterminated string"},
            {"{\"status\":200", "unreadable http answer: invalid JSON"},
            {"", "unreadable http answer: there is none"},
            {"[]", "unreadable http answer: not a JSON object"},
            {"\"ok\"", "not a JSON object"},
            {"{\"status\":\"200\"}", "status is not an HTTP status"},
            {"{\"status\":2.5}", "status is not an HTTP status"},
            {"{\"status\":-1}", "status is not an HTTP status"},
            {"{\"status\":1e400}", "status is not an HTTP status"},
            {"{\"status\":99999999999999999999999}", "status is not an HTTP status"},
            {"{\"status\":true}", "status is not an HTTP status"},
            {"{\"status\":200,\"headers\":[]}", "headers is not an object"},
            {"{\"status\":200,\"headers\":\"a\"}", "headers is not an object"},
            {"{\"status\":200,\"headers\":{\"A\":\"b\",\"C\":1}}", "a header's value is not a string"},
            {"{\"status\":200,\"headers\":{\"A\":\"b\"},\"body\":5}", "body is not a string"},
            {"{\"status\":200,\"body\":[\"x\"]}", "body is not a string"},
            {"{\"status\":200,\"body_base64\":7}", "body_base64 is not a string"},
            {"{\"status\":200,\"body_base64\":\"abc\"}", "body_base64 is not base64"},
            {"{\"status\":200,\"body_base64\":\"ab=c\"}", "body_base64 is not base64"},
            {"{\"status\":200,\"body_base64\":\"=abc\"}", "body_base64 is not base64"},
            {"{\"status\":200,\"body_base64\":\"Zg==Zg==\"}", "body_base64 is not base64"},
            {"{\"status\":200,\"body_base64\":\"Z===\"}", "body_base64 is not base64"},
            {"{\"status\":200,\"body_base64\":\"Zm9v!A==\"}", "body_base64 is not base64"},
            {"{\"status\":200,\"body_base64\":\"Zm9v\\u0000A==\"}", "body_base64 is not base64"},
            {"{\"status\":200,\"body\":\"\xff\"}", "invalid UTF-8"},
        };
        size_t k;
        for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            answer(WASMCP_OK, cases[k][0]);
            http_call(-1, cases[k][1], &resp, cases[k][0]);
            wasmcp_http_free(&resp);
        }
        answer_n(WASMCP_OK, "{\"status\":200}\0", 15);
        http_call(-1, "unexpected data after the value", &resp, "NUL after the answer");
    }

    /* Mutated answers: whatever the host sends, no out-of-bounds access,
     * no leak, and either a response or a message. */
    {
        static const char seed[] = "{\"status\":200,\"headers\":{\"A\":\"b\\u00e9\",\"Content-Type\":\"x\"},"
                                   "\"body\":\"\\ud83d\\ude00x\",\"body_base64\":\"Zm9vYg==\"}";
        static const char alphabet[] = "{}[]\",:0\\u=Zg+/ab\xc3\xa9\xff";
        char doc[sizeof seed + 8];
        unsigned rnd = 11;
        size_t k, ok = 0;
#define RAND() (rnd = rnd * 1103515245u + 12345u, (size_t)(rnd >> 16))
        for (k = 0; k < 20000; k++) {
            wasmcp_http_request req = {0};
            size_t len = sizeof seed - 1, at = RAND() % len;
            char err[64];
            int r;
            memcpy(doc, seed, len);
            if (RAND() % 2)
                doc[at] = alphabet[RAND() % (sizeof alphabet - 1)];
            else
                len = at; /* truncated */
            answer_n(RAND() % 4 ? WASMCP_OK : WASMCP_DENIED, doc, len);
            req.url = "u";
            r = wasmcp_http(&req, &resp, err, sizeof err);
            if (r == WASMCP_OK) {
                ok++;
                wasmcp_http_find_header(&resp, "content-type");
            } else {
                CHECK(err[0] != '\0' && resp.body == NULL, "mutant %.*s: code %d without a message", (int)len, doc, r);
            }
            wasmcp_http_free(&resp);
        }
#undef RAND
        CHECK(ok > 1000, "only %zu mutated answers were read", ok);
    }
    free(http_sent);
    http_sent = NULL;
}

/* ---- Modes driven from Go ------------------------------------------------ */

static void reencode(wasmcp_out *o, wasmcp_json v)
{
    size_t pos = 0, n;
    wasmcp_json key, item;
    char *s;
    double d;
    switch (v.type) {
    case WASMCP_JSON_OBJECT:
        wasmcp_out_begin_object(o);
        while (wasmcp_json_next(v, &pos, &key, &item)) {
            s = wasmcp_json_string(key, NULL);
            wasmcp_out_key(o, s);
            free(s);
            reencode(o, item);
        }
        wasmcp_out_end_object(o);
        break;
    case WASMCP_JSON_ARRAY:
        wasmcp_out_begin_array(o);
        while (wasmcp_json_next(v, &pos, NULL, &item))
            reencode(o, item);
        wasmcp_out_end_array(o);
        break;
    case WASMCP_JSON_STRING:
        s = wasmcp_json_string(v, &n);
        wasmcp_out_string(o, s, n);
        free(s);
        break;
    case WASMCP_JSON_NUMBER:
        if (wasmcp_json_number(v, &d) == 1)
            wasmcp_out_number(o, d);
        else
            wasmcp_out_str(o, "out of range");
        break;
    case WASMCP_JSON_BOOL:
        wasmcp_out_bool(o, v.ptr[0] == 't');
        break;
    default:
        wasmcp_out_null(o);
    }
}

static int roundtrip(void)
{
    size_t len;
    char err[300];
    while (scanf("%zu", &len) == 1 && getchar() == '\n') {
        char *buf = malloc(len + 1);
        wasmcp_json v;
        if (fread(buf, 1, len, stdin) != len) {
            fprintf(stderr, "short record\n");
            return 1;
        }
        if (wasmcp_json_parse(buf, len, &v, err, sizeof err) == 0) {
            wasmcp_out o = {0};
            reencode(&o, v);
            printf("ok %s\n", o.data);
            wasmcp_out_free(&o);
        } else {
            printf("err %s\n", err);
        }
        free(buf);
    }
    return 0;
}

static int args_tool(void)
{
    wasmcp_json args = wasmcp_args_object();
    wasmcp_out o = {0};
    size_t len = 0;
    char *s = wasmcp_arg_string(args, "s", &len);
    double n = -1;
    long long i = -1;
    int b = -1;
    int hn = wasmcp_arg_number(args, "n", &n);
    int hi = wasmcp_arg_int(args, "i", &i);
    int hb = wasmcp_arg_bool(args, "b", &b);
    wasmcp_out_begin_object(&o);
    if (s) {
        wasmcp_out_key(&o, "s");
        wasmcp_out_string(&o, s, len);
    }
    wasmcp_out_key(&o, "n");
    wasmcp_out_number(&o, n);
    wasmcp_out_key(&o, "i");
    wasmcp_out_int(&o, i);
    wasmcp_out_key(&o, "b");
    wasmcp_out_int(&o, b);
    wasmcp_out_key(&o, "present");
    wasmcp_out_int(&o, hn * 100 + hi * 10 + hb);
    wasmcp_out_end_object(&o);
    wasmcp_text(o.data, o.len);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "roundtrip") == 0)
        return roundtrip();
    if (strcmp(mode, "args") == 0)
        return args_tool();
    if (strcmp(mode, "nan") == 0) {
        wasmcp_out o = {0};
        wasmcp_out_number(&o, NAN);
        return 0;
    }
    if (strcmp(mode, "fail") == 0)
        wasmcp_fail("first line\nsecond\r\nthird %d", 3);
    if (*mode) {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    test_get();
    test_strings();
    test_numbers();
    test_malformed();
    test_depth();
    test_random();
    test_writer();
    test_host();
    test_http_request();
    test_http_answers();
    test_ask();
    test_utf8();
    printf("%d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
