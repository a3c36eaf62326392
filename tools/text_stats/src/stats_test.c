/* Native tests of the counting in stats.c, built with gcc by
 * ../stats_test.go. Exits 1 if any check fails. */
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/check.h"

/* The top words as "word:count word:count". */
static void top_string(const struct text_stats *st, char *buf, size_t size)
{
    size_t i, n = 0;
    buf[0] = '\0';
    for (i = 0; i < st->ntop && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%.*s:%zu", i ? " " : "", (int)st->top[i].len,
                              st->top[i].word, st->top[i].count);
}

struct want {
    const char *text;
    size_t top, characters, words, lines, sentences;
    double average;
    const char *top_words;
};

static void test_counts(void)
{
    static const struct want cases[] = {
        {"", 5, 0, 0, 0, 0, 0, ""},
        {" \t\n ", 5, 4, 0, 2, 0, 0, ""},
        {"hello", 5, 5, 1, 1, 1, 5, "hello:1"},
        {"Hello, world!", 5, 13, 2, 1, 1, 5, "hello:1 world:1"},
        {"The cat and the hat. THE END", 5, 28, 7, 1, 2, 3, "the:3 and:1 cat:1 end:1 hat:1"},
        {"b a c b a b", 2, 11, 6, 1, 1, 1, "b:3 a:2"},
        {"b a c b a b", 1, 11, 6, 1, 1, 1, "b:3"},
        /* ties in byte order: shorter prefix first */
        {"ab a abc b", 5, 10, 4, 1, 1, 1.75, "a:1 ab:1 abc:1 b:1"},
        /* lines */
        {"a\nb", 5, 3, 2, 2, 1, 1, "a:1 b:1"},
        {"a\nb\n", 5, 4, 2, 2, 1, 1, "a:1 b:1"},
        {"a\r\nb\r\n", 5, 6, 2, 2, 1, 1, "a:1 b:1"},
        {"a\rb", 5, 3, 2, 2, 1, 1, "a:1 b:1"},
        {"\n\n\n", 5, 3, 0, 3, 0, 0, ""},
        {"a\n\nb", 5, 4, 2, 3, 1, 1, "a:1 b:1"},
        {"\r\n", 5, 2, 0, 1, 0, 0, ""},
        /* sentences */
        {"One. Two! Three? Four", 5, 21, 4, 1, 4, 3.75, "four:1 one:1 three:1 two:1"},
        {"Wait... what?!", 5, 14, 2, 1, 2, 4, "wait:1 what:1"},
        {"...!?", 5, 5, 0, 1, 0, 0, ""},
        {"See e.g. this.", 5, 14, 4, 1, 2, 2.25, "e:1 g:1 see:1 this:1"},
        {"Visit example.com today.", 5, 24, 4, 1, 1, 5, "com:1 example:1 today:1 visit:1"},
        {"Pi is 3.14. Yes.", 5, 16, 4, 1, 2, 2.75, "3.14:1 is:1 pi:1 yes:1"},
        {"\xe3\x81\x93\xe3\x82\x8c\xe3\x80\x82\xe3\x81\x82\xe3\x82\x8c\xe3\x80\x82", 5, 6, 2, 1, 2, 2,
         "\xe3\x81\x82\xe3\x82\x8c:1 \xe3\x81\x93\xe3\x82\x8c:1"}, /* これ。あれ。 */
        {"\"Quoted.\" Then", 5, 14, 2, 1, 2, 5, "quoted:1 then:1"},
        /* joiners */
        {"Don't don\xe2\x80\x99t DON'T", 5, 17, 3, 1, 1, 5, "don't:3"},
        {"well-known well - known -x y-", 5, 29, 5, 1, 1, 4.2, "known:1 well:1 well-known:1 x:1 y:1"},
        {"rock 'n' roll", 5, 13, 3, 1, 1, 3, "n:1 rock:1 roll:1"},
        {"1,000 and 1.5 and a,b a.b", 5, 25, 8, 1, 1, 2.25, "a:2 and:2 b:2 1,000:1 1.5:1"},
        {"it's", 5, 4, 1, 1, 1, 4, "it's:1"},
        {"'tis", 5, 4, 1, 1, 1, 3, "tis:1"},
        /* Unicode: characters are code points; only ASCII letters fold */
        {"Caf\xc3\xa9 CAF\xc3\x89 caf\xc3\xa9", 5, 14, 3, 1, 1, 4, "caf\xc3\xa9:2 caf\xc3\x89:1"},
        /* non-ASCII words sort by their bytes, that is by code point */
        {"na\xc3\xafve \xce\xb1\xce\xb2\xce\xb3 \xd0\xbc\xd0\xb8\xd1\x80", 5, 13, 3, 1, 1, 3.67,
         "na\xc3\xafve:1 \xce\xb1\xce\xb2\xce\xb3:1 \xd0\xbc\xd0\xb8\xd1\x80:1"},
        {"x\xe2\x80\x94y \xc2\xabz\xc2\xbb \xf0\x9f\x98\x80 w\xe2\x80\xa6", 5, 12, 4, 1, 1, 1,
         "w:1 x:1 y:1 z:1"}, /* em dash, guillemets, emoji, ellipsis */
        {"a\xc2\xa0" "b\xe3\x80\x80" "c\xef\xbb\xbf" "d", 5, 7, 4, 1, 1, 1, "a:1 b:1 c:1 d:1"},
        {"e\xcc\x81t\xc3\xa9", 5, 4, 1, 1, 1, 4, "e\xcc\x81t\xc3\xa9:1"}, /* combining accent */
        {"a\xef\xbf\xbd" "b", 5, 3, 2, 1, 1, 1, "a:1 b:1"},
        {"\xf0\x9d\x84\x9e", 5, 1, 1, 1, 1, 1, "\xf0\x9d\x84\x9e:1"}, /* a non-BMP symbol, not emoji */
    };
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const struct want *w = &cases[k];
        struct text_stats st;
        char top[512];
        double avg;
        int r = text_stats(w->text, strlen(w->text), w->top, &st, NULL, NULL);
        CHECK(r == 0, "%s: out of memory", w->text);
        top_string(&st, top, sizeof top);
        avg = text_stats_average(&st);
        CHECK(st.bytes == strlen(w->text), "%s: bytes %zu", w->text, st.bytes);
        CHECK(st.characters == w->characters, "%s: characters %zu; want %zu", w->text, st.characters,
              w->characters);
        CHECK(st.words == w->words, "%s: words %zu; want %zu", w->text, st.words, w->words);
        CHECK(st.lines == w->lines, "%s: lines %zu; want %zu", w->text, st.lines, w->lines);
        CHECK(st.sentences == w->sentences, "%s: sentences %zu; want %zu", w->text, st.sentences,
              w->sentences);
        CHECK(avg == w->average, "%s: average %g; want %g", w->text, avg, w->average);
        CHECK(strcmp(top, w->top_words) == 0, "%s: top %s; want %s", w->text, top, w->top_words);
        text_stats_free(&st);
    }
}

struct progress_log {
    size_t calls, last, total;
    int increasing;
};

static void record(size_t done, size_t total, void *ctx)
{
    struct progress_log *p = ctx;
    if (p->calls > 0 && done <= p->last)
        p->increasing = 0;
    p->calls++;
    p->last = done;
    p->total = total;
}

static void test_large(void)
{
    /* 300,000 words from a 1,000-word vocabulary plus multi-byte text, so
     * that progress boundaries fall inside characters. */
    size_t n = 300000, k, len = 0, sum = 0;
    char *text = malloc(n * 12 + 1);
    struct text_stats st;
    struct progress_log log = {0, 0, 0, 1};
    unsigned seed = 1;
    for (k = 0; k < n; k++) {
        seed = seed * 1103515245u + 12345u;
        len += (size_t)sprintf(text + len, "w%u\xc3\xa9%s", (seed >> 8) % 1000, k % 10 == 9 ? ".\n" : " ");
    }
    CHECK(text_stats(text, len, 50, &st, record, &log) == 0, "out of memory");
    CHECK(st.words == n, "words %zu", st.words);
    CHECK(st.distinct == 1000, "distinct %zu", st.distinct);
    CHECK(st.sentences == n / 10 && st.lines == n / 10, "sentences %zu lines %zu", st.sentences, st.lines);
    CHECK(st.ntop == 50, "ntop %zu", st.ntop);
    for (k = 0; k < st.ntop; k++) {
        sum += st.top[k].count;
        if (k > 0)
            CHECK(st.top[k].count <= st.top[k - 1].count, "top not in order at %zu", k);
    }
    CHECK(sum > 50 * n / 1000 && sum < n, "top counts sum %zu", sum);
    CHECK(log.increasing, "progress did not increase");
    /* A report at each step the text goes past; the caller reports the end. */
    CHECK(log.calls == (len - 1) / STATS_PROGRESS_STEP, "%zu progress calls for %zu bytes", log.calls, len);
    CHECK(log.total == len && log.last < len &&
              log.last >= (len - 1) / STATS_PROGRESS_STEP * STATS_PROGRESS_STEP,
          "last progress %zu of %zu", log.last, log.total);
    text_stats_free(&st);

    /* No reports for a text under one step. */
    log.calls = 0;
    text_stats("short", 5, 5, &st, record, &log);
    CHECK(log.calls == 0, "%zu calls for a short text", log.calls);
    text_stats_free(&st);

    /* One huge word. */
    memset(text, 'A', n * 12);
    CHECK(text_stats(text, n * 12, 5, &st, NULL, NULL) == 0, "out of memory");
    CHECK(st.words == 1 && st.ntop == 1 && st.top[0].len == n * 12 && st.top[0].word[0] == 'a',
          "one huge word: %zu words", st.words);
    text_stats_free(&st);
    free(text);
}

int main(void)
{
    test_counts();
    test_large();
    printf("%d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
