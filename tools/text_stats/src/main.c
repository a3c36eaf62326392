/* Command text_stats is a wasmcp tool, written in C with the guest SDK
 * (sdk-guest/c), that counts the characters, words, lines and sentences of
 * a text and lists its most frequent words. */
#include <stdio.h>
#include <string.h>

#include "stats.h"
#include "wasmcp.h"

static void report(size_t done, size_t total, void *ctx)
{
    char msg[64];
    (void)ctx;
    snprintf(msg, sizeof msg, "counted %zu of %zu bytes", done, total);
    wasmcp_progress((double)done, (double)total, msg);
}

int main(int argc, char **argv)
{
    const char *tool = wasmcp_tool(argc, argv);
    wasmcp_json args;
    struct text_stats st;
    wasmcp_out out = {0};
    long long top = 5;
    size_t len, i;
    char *text;

    if (tool && strcmp(tool, "text_stats") != 0)
        wasmcp_fail("unknown tool \"%s\"; this module has text_stats", tool);
    args = wasmcp_args_object();
    text = wasmcp_arg_string(args, "text", &len);
    if (!text)
        wasmcp_fail("invalid arguments: \"text\" is required");
    wasmcp_arg_int(args, "top", &top);
    if (top < 1 || top > STATS_MAX_TOP)
        wasmcp_fail("invalid arguments: \"top\" must be between 1 and %d, not %lld", STATS_MAX_TOP, top);

    if (text_stats(text, len, (size_t)top, &st, report, NULL) < 0)
        wasmcp_fail("out of memory counting %zu bytes of text", len);
    report(len, len, NULL);
    wasmcp_log(WASMCP_DEBUG, "counted %zu words (%zu different) in %zu bytes", st.words, st.distinct,
               st.bytes);

    wasmcp_out_begin_object(&out);
    wasmcp_out_key(&out, "characters");
    wasmcp_out_int(&out, (long long)st.characters);
    wasmcp_out_key(&out, "bytes");
    wasmcp_out_int(&out, (long long)st.bytes);
    wasmcp_out_key(&out, "words");
    wasmcp_out_int(&out, (long long)st.words);
    wasmcp_out_key(&out, "lines");
    wasmcp_out_int(&out, (long long)st.lines);
    wasmcp_out_key(&out, "sentences");
    wasmcp_out_int(&out, (long long)st.sentences);
    wasmcp_out_key(&out, "averageWordLength");
    wasmcp_out_number(&out, text_stats_average(&st));
    wasmcp_out_key(&out, "topWords");
    wasmcp_out_begin_array(&out);
    for (i = 0; i < st.ntop; i++) {
        wasmcp_out_begin_object(&out);
        wasmcp_out_key(&out, "word");
        wasmcp_out_string(&out, st.top[i].word, st.top[i].len);
        wasmcp_out_key(&out, "count");
        wasmcp_out_int(&out, (long long)st.top[i].count);
        wasmcp_out_end_object(&out);
    }
    wasmcp_out_end_array(&out);
    wasmcp_out_end_object(&out);
    wasmcp_text(out.data, out.len);
    return 0;
}
