/*
 * wasmcp.h: the C guest SDK for wasmcp tools (ABI 1, see docs/abi.md).
 *
 * A tool is a WASI preview 1 command. For each call the host starts it with
 * argv = {stem, tool name}, the call's arguments as a JSON object on stdin;
 * it reads the result from stdout and the exit status. This SDK reads the
 * arguments, writes JSON, reports failures the way the host expects, and
 * wraps the optional host functions log, progress and HTTP.
 *
 * Build:  clang --target=wasm32-wasi -O2 -o tool.wasm main.c wasmcp.c
 * Native builds (for unit tests) replace the host functions with stubs that
 * print to stderr.
 *
 * Memory: a tool runs once and exits, so strings this SDK allocates are
 * never freed by it. Allocation failure ends the call with "out of memory".
 */
#ifndef WASMCP_H
#define WASMCP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define WASMCP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define WASMCP_NORETURN __attribute__((noreturn))
#else
#define WASMCP_PRINTF(f, a)
#define WASMCP_NORETURN
#endif

/* ---- The call ---------------------------------------------------------- */

/* The tool the host asked for (argv[1]), or NULL when run without one. */
const char *wasmcp_tool(int argc, char **argv);

/* All of stdin, read on the first call; later calls return the same bytes.
 * The buffer is NUL-terminated; *len (if len is not NULL) excludes the NUL. */
const char *wasmcp_args(size_t *len);

/* Writes len bytes to stdout: the result, read as the manifest's output mode
 * says. May be called several times; the pieces are concatenated. */
void wasmcp_text(const char *s, size_t len);

/* Ends the call as a tool error: writes the message to stderr as one line
 * (newlines become spaces, since the host shows the model stderr's tail) and
 * exits with status 1. Say what went wrong in words a model can act on. */
WASMCP_NORETURN void wasmcp_fail(const char *fmt, ...) WASMCP_PRINTF(1, 2);

/* ---- Host functions ---------------------------------------------------- */

/* Log levels, in increasing severity (docs/abi.md). */
enum {
    WASMCP_DEBUG, WASMCP_INFO, WASMCP_NOTICE, WASMCP_WARNING,
    WASMCP_ERROR, WASMCP_CRITICAL, WASMCP_ALERT, WASMCP_EMERGENCY
};

/* What the host functions return (docs/abi.md, "Result codes"). Anything
 * but WASMCP_OK means the message was not sent or the request got no
 * answer; the tool may carry on regardless. */
enum {
    WASMCP_OK = 0,       /* done: sent (or filtered out by the client, which is fine), or answered */
    WASMCP_FAULT = 1,    /* pointer and length outside the module's memory */
    WASMCP_INVALID = 2,  /* level outside 0-7; NaN or infinite progress; infinite total; bad request */
    WASMCP_ENCODING = 3, /* message is not UTF-8 */
    WASMCP_TOO_LONG = 4, /* message over WASMCP_MAX_MESSAGE bytes; request over a size limit */
    WASMCP_LIMIT = 5,    /* this call used up an allowance: of messages, or of requests or their bytes */
    WASMCP_ORDER = 6,    /* progress did not increase */
    WASMCP_DENIED = 7,   /* HTTP: the operator's policy does not allow the request */
    WASMCP_NETWORK = 8   /* HTTP: allowed, but failed (no answer, timeout, too large, redirects) */
};

#define WASMCP_MAX_MESSAGE 8192

/* Sends a printf-formatted log message to the client. A message longer than
 * WASMCP_MAX_MESSAGE bytes is cut at a UTF-8 character boundary. */
int wasmcp_log(int level, const char *fmt, ...) WASMCP_PRINTF(2, 3);

/* Reports progress if the client asked for it. progress must increase from
 * one report to the next; total is the expected final value, or negative
 * when unknown. msg may be NULL; a long one is cut like wasmcp_log's. */
int wasmcp_progress(double progress, double total, const char *msg);

/* The raw imports, for messages that are not NUL-terminated. They are
 * imported only if used, so a tool that never logs runs on hosts without
 * them. */
#ifdef __wasm__
#define WASMCP_IMPORT(name) __attribute__((import_module("wasmcp"), import_name(name)))
#else
#define WASMCP_IMPORT(name)
#endif
WASMCP_IMPORT("log")
int32_t wasmcp_host_log(int32_t level, const char *msg, size_t len);
WASMCP_IMPORT("progress")
int32_t wasmcp_host_progress(double progress, double total, const char *msg, size_t len);
/* http_request makes the request (JSON, see wasmcp_http) and writes the
 * length of its answer to *answer_len; http_response copies that answer
 * into buf, whole, and forgets it. wasmcp_http does both. */
WASMCP_IMPORT("http_request")
int32_t wasmcp_host_http_request(const char *req, size_t len, uint32_t *answer_len);
WASMCP_IMPORT("http_response")
int32_t wasmcp_host_http_response(char *buf, size_t len);

/* ---- HTTP -------------------------------------------------------------- */

/* A tool has no network of its own: the host makes the request, if the
 * operator's policy allows it (docs/abi.md, "Permissions"). */

typedef struct {
    const char *name, *value; /* NUL-terminated */
} wasmcp_http_header;

typedef struct {
    const char *method; /* NULL: GET */
    const char *url;
    const wasmcp_http_header *headers;
    size_t nheaders;
    /* NULL: no body. Bytes that are not UTF-8 are sent base64-encoded. */
    const void *body;
    size_t body_len;
    /* NULL, or the name of a secret the operator bound to the URL's host:
     * the host adds it to the request and the tool never sees its value. */
    const char *secret;
} wasmcp_http_request;

/* Fill with wasmcp_http; release with wasmcp_http_free. */
typedef struct {
    int status;
    wasmcp_http_header *headers; /* as the host sent them */
    size_t nheaders;
    char *body; /* NUL-terminated, but may hold NUL bytes: use body_len */
    size_t body_len;
} wasmcp_http_response;

/* Has the host make req. Returns WASMCP_OK with *resp filled (any HTTP
 * status counts: check resp->status), or the host's code with a message in
 * err (err_size bytes, cut at a character boundary; err may be NULL):
 * WASMCP_DENIED names what the policy lacks, WASMCP_NETWORK says what
 * failed, WASMCP_INVALID and WASMCP_TOO_LONG are a bad or oversized
 * request, WASMCP_LIMIT says the call has used up its requests or their
 * bytes. -1 means the host's answer was unreadable. On failure *resp is
 * left empty, and wasmcp_http_free on it is harmless. */
int wasmcp_http(const wasmcp_http_request *req, wasmcp_http_response *resp, char *err,
                size_t err_size);

/* The value of the response header called name (any case), or NULL. */
const char *wasmcp_http_find_header(const wasmcp_http_response *resp, const char *name);

/* Frees what wasmcp_http allocated in resp, and empties it. */
void wasmcp_http_free(wasmcp_http_response *resp);

/* ---- Asking the client --------------------------------------------------- */

/* Each asks the client that called the tool (docs/abi.md, "Asking the
 * client"), with the request's JSON ({"id", "params"}), and writes the
 * length of the answer to *answer_len; ask_response copies that answer
 * into buf, whole, and forgets it. The tool's manifest must declare the
 * capability: "client": ["elicitation"], "sampling" or "roots". */
WASMCP_IMPORT("elicit")
int32_t wasmcp_host_elicit(const char *req, size_t len, uint32_t *answer_len);
WASMCP_IMPORT("create_message")
int32_t wasmcp_host_create_message(const char *req, size_t len, uint32_t *answer_len);
WASMCP_IMPORT("list_roots")
int32_t wasmcp_host_list_roots(const char *req, size_t len, uint32_t *answer_len);
WASMCP_IMPORT("ask_response")
int32_t wasmcp_host_ask_response(char *buf, size_t len);

/* wasmcp_elicit (elicitation/create), wasmcp_create_message
 * (sampling/createMessage) and wasmcp_list_roots (roots/list) ask the
 * client and wait for its answer. params is the MCP request's params, a
 * JSON object ("{}" for roots); id names the ask within the call (on MCP
 * 2026-07-28 the key of its input request), or NULL for "ask-N". On
 * WASMCP_OK, *answer is the client's result as JSON (NUL-terminated,
 * *answer_len bytes; free it), for wasmcp_json_parse. Any other code
 * leaves *answer NULL and err (if not NULL) saying why: WASMCP_DENIED when
 * the manifest or the client lacks the capability. On 2026-07-28 the host
 * may end the run at an ask and run the tool again with the answer: ask
 * the same things in the same order each time, and act after the last
 * ask. A call may ask 16 times. */
int wasmcp_elicit(const char *id, const char *params, char **answer, size_t *answer_len, char *err,
                  size_t err_size);
int wasmcp_create_message(const char *id, const char *params, char **answer, size_t *answer_len,
                          char *err, size_t err_size);
int wasmcp_list_roots(const char *id, char **answer, size_t *answer_len, char *err, size_t err_size);

/* ---- Reading JSON ------------------------------------------------------ */

/* Values are views into text that wasmcp_json_parse accepted: nothing is
 * copied until a string is asked for, so the text must outlive them, and
 * the functions below trust that the view came from the parser. */
typedef enum {
    WASMCP_JSON_NONE, /* absent: a member that is not there */
    WASMCP_JSON_NULL,
    WASMCP_JSON_BOOL,
    WASMCP_JSON_NUMBER,
    WASMCP_JSON_STRING,
    WASMCP_JSON_ARRAY,
    WASMCP_JSON_OBJECT
} wasmcp_json_type;

typedef struct {
    const char *ptr; /* the value's text, e.g. "\"a\\n\"" for a string */
    size_t len;
    wasmcp_json_type type;
} wasmcp_json;

/* Arrays and objects nested deeper than this are refused. */
#define WASMCP_JSON_MAX_DEPTH 128

/* Checks that text is one JSON value (RFC 8259, UTF-8) and sets *out to it.
 * Returns 0, or -1 with a message such as "invalid JSON at byte 7: invalid
 * escape \q" in err (errsize bytes, may be 0). Lone surrogate escapes
 * (\ud800) are valid JSON and decode to U+FFFD, as Go decodes them;
 * invalid UTF-8 is refused. Uses no recursion and allocates nothing. */
int wasmcp_json_parse(const char *text, size_t len, wasmcp_json *out, char *err, size_t errsize);

/* The member called name of an object; WASMCP_JSON_NONE when obj is not an
 * object or has no such member. With duplicate names the last one wins. */
wasmcp_json wasmcp_json_get(wasmcp_json obj, const char *name);

/* Iterates over an array or object: start with *pos = 0; each call returns 1
 * and sets *value and *key (the member's name, a string; NONE in an array)
 * until the end, when it returns 0. key and value may be NULL. */
int wasmcp_json_next(wasmcp_json container, size_t *pos, wasmcp_json *key, wasmcp_json *value);

/* Accessors. Each returns 1 and sets *out when v has that type, 0 when it
 * does not (and a number is not an integer for wasmcp_json_int), and -1
 * when the number does not fit (beyond a double's range, or for
 * wasmcp_json_int, outside [-2^63, 2^63)). 2.0 and 1e2 are integers. */
int wasmcp_json_number(wasmcp_json v, double *out);
int wasmcp_json_int(wasmcp_json v, long long *out);
int wasmcp_json_bool(wasmcp_json v, int *out);

/* A string value decoded to UTF-8 in a new NUL-terminated buffer, or NULL
 * when v is not a string. *len (if len is not NULL) is its length: it may
 * contain NUL bytes, from \u0000. */
char *wasmcp_json_string(wasmcp_json v, size_t *len);

/* ---- Tool arguments ---------------------------------------------------- */

/* The arguments (stdin) as an object. Empty stdin or null count as {}.
 * Anything else that is not an object fails the call. */
wasmcp_json wasmcp_args_object(void);

/* Reads one argument. Absent or null: returns NULL / 0 and leaves *out
 * alone, so initialise it with the default. Present: returns the string /
 * 1. Of another type or out of range: fails the call with a message such as
 * invalid arguments: "top" must be an integer, not a string. The host has
 * usually checked the inputSchema already; these checks are for other
 * hosts and for running by hand. */
char *wasmcp_arg_string(wasmcp_json args, const char *name, size_t *len);
int wasmcp_arg_number(wasmcp_json args, const char *name, double *out);
int wasmcp_arg_int(wasmcp_json args, const char *name, long long *out);
int wasmcp_arg_bool(wasmcp_json args, const char *name, int *out);

/* ---- Writing JSON ------------------------------------------------------ */

/* A growable buffer. Start with wasmcp_out o = {0}; then write values in
 * order: a key before each member's value inside an object. Commas are
 * added for you. Send it with wasmcp_text(o.data, o.len). */
typedef struct {
    char *data;
    size_t len, cap;
    int comma; /* a value was just completed, so the next one needs a ',' */
} wasmcp_out;

void wasmcp_out_begin_object(wasmcp_out *o);
void wasmcp_out_end_object(wasmcp_out *o);
void wasmcp_out_begin_array(wasmcp_out *o);
void wasmcp_out_end_array(wasmcp_out *o);
void wasmcp_out_key(wasmcp_out *o, const char *key); /* NUL-terminated */
/* Escapes as JSON requires; invalid UTF-8 is replaced by U+FFFD per byte. */
void wasmcp_out_string(wasmcp_out *o, const char *s, size_t len);
void wasmcp_out_str(wasmcp_out *o, const char *s); /* NUL-terminated */
/* The shortest form that reads back as the same double. JSON has no NaN or
 * infinity: writing one fails the call, as a tool bug. */
void wasmcp_out_number(wasmcp_out *o, double x);
void wasmcp_out_int(wasmcp_out *o, long long x);
void wasmcp_out_bool(wasmcp_out *o, int b);
void wasmcp_out_null(wasmcp_out *o);
void wasmcp_out_free(wasmcp_out *o);

/* ---- UTF-8 ------------------------------------------------------------- */

/* Decodes the character at s (len > 0 bytes): sets *cp and returns its
 * length. An invalid or truncated sequence gives U+FFFD and length 1. */
size_t wasmcp_utf8_decode(const char *s, size_t len, uint32_t *cp);

#ifdef __cplusplus
}
#endif

#endif /* WASMCP_H */
