/*
 * What counts as what:
 *   word       a run of letters and digits: ASCII letters and digits and any
 *              other code point that is not a space, punctuation or symbol
 *              of the common blocks below (so accented and non-Latin letters
 *              are word characters). An apostrophe (' or U+2019) or hyphen
 *              between two word characters joins them ("don't",
 *              "well-known"), as do '.' and ',' between two digits ("3.14",
 *              "1,000"). Scripts written without spaces count a run as one
 *              word.
 *   line       text up to a line break (\n, \r\n or \r) or the end; a final
 *              line break does not start another line.
 *   sentence   words up to a run of terminators (. ! ? and their Unicode
 *              kin), or up to the end. A '.' followed directly by a word
 *              character ("e.g", "example.com") ends nothing. Abbreviations
 *              followed by a space do end one: this is an estimate.
 */
#include "stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wasmcp.h"

static int is_terminator(uint32_t c)
{
    switch (c) {
    case '.': case '!': case '?':
    case 0x037E: /* Greek question mark */
    case 0x0589: /* Armenian full stop */
    case 0x061F: /* Arabic question mark */
    case 0x06D4: /* Arabic full stop */
    case 0x0964: case 0x0965: /* Devanagari danda, double danda */
    case 0x2026: /* horizontal ellipsis */
    case 0x203C: case 0x2047: case 0x2048: case 0x2049:
    case 0x3002: /* ideographic full stop */
    case 0xFF01: case 0xFF0E: case 0xFF1F: case 0xFF61:
        return 1;
    }
    return 0;
}

static int is_word_char(uint32_t c)
{
    if (c < 0x80)
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (c <= 0xBF) /* C1 controls, no-break space, Latin-1 punctuation and signs */
        return c == 0xAA || c == 0xB5 || c == 0xBA; /* ª µ º are letters */
    if (c == 0xD7 || c == 0xF7 || is_terminator(c))
        return 0;
    if (c >= 0x2000 && c <= 0x2BFF) /* punctuation, spaces, symbols, arrows, shapes */
        return 0;
    if (c >= 0x3000 && c <= 0x303F) /* CJK symbols and punctuation */
        return 0;
    if ((c >= 0xFE10 && c <= 0xFE1F) || (c >= 0xFE30 && c <= 0xFE6F)) /* punctuation forms */
        return 0;
    if ((c >= 0xFF01 && c <= 0xFF0F) || (c >= 0xFF1A && c <= 0xFF20) ||
        (c >= 0xFF3B && c <= 0xFF40) || (c >= 0xFF5B && c <= 0xFF65)) /* fullwidth punctuation */
        return 0;
    if (c == 0xFEFF || c == 0xFFFD)
        return 0;
    if (c >= 0x1F000 && c <= 0x1FAFF) /* emoji and pictographs */
        return 0;
    return 1;
}

static int is_digit(uint32_t c)
{
    return c >= '0' && c <= '9';
}

/* What a joining character becomes inside a word, so that "don’t" and
 * "don't" are one word; 0 when c does not join here. */
static uint32_t joiner(uint32_t prev, uint32_t c, uint32_t next)
{
    if (!is_word_char(next))
        return 0;
    switch (c) {
    case '\'': case 0x2019: return '\'';
    case '-': case 0x2010: case 0x2011: return '-';
    case '.': case ',': return is_digit(prev) && is_digit(next) ? c : 0;
    }
    return 0;
}

/* ---- Word counts: open addressing over the words' bytes in the arena ---- */

struct entry {
    size_t off, len, count; /* count 0: empty slot */
    uint32_t hash;
};

struct table {
    struct entry *slots;
    size_t cap, used;
};

static uint32_t hash_bytes(const char *s, size_t n)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    size_t i;
    for (i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static int grow(struct table *t)
{
    size_t cap = t->cap ? t->cap * 2 : 1024, i;
    struct entry *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (i = 0; i < t->cap; i++) {
        size_t j;
        if (!t->slots[i].count)
            continue;
        for (j = t->slots[i].hash & (cap - 1); slots[j].count; j = (j + 1) & (cap - 1))
            ;
        slots[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

/* Counts the word at arena + off; keeps its bytes (returns 1) only if it is
 * new, else the caller reuses them. -1: out of memory. */
static int add_word(struct table *t, const char *arena, size_t off, size_t len)
{
    uint32_t h = hash_bytes(arena + off, len);
    size_t j;
    if ((t->used + 1) * 2 > t->cap && grow(t) < 0)
        return -1;
    for (j = h & (t->cap - 1); t->slots[j].count; j = (j + 1) & (t->cap - 1)) {
        struct entry *e = &t->slots[j];
        if (e->hash == h && e->len == len && memcmp(arena + e->off, arena + off, len) == 0) {
            e->count++;
            return 0;
        }
    }
    t->slots[j].off = off;
    t->slots[j].len = len;
    t->slots[j].count = 1;
    t->slots[j].hash = h;
    t->used++;
    return 1;
}

/* More frequent first, then in byte order, which for lower-case ASCII is
 * alphabetical. */
static int before(const struct word_count *a, const struct word_count *b)
{
    size_t n = a->len < b->len ? a->len : b->len;
    int c;
    if (a->count != b->count)
        return a->count > b->count;
    c = memcmp(a->word, b->word, n);
    return c != 0 ? c < 0 : a->len < b->len;
}

static void keep_top(struct text_stats *st, size_t top, struct word_count w)
{
    size_t i;
    if (st->ntop == top && !before(&w, &st->top[top - 1]))
        return;
    i = st->ntop < top ? st->ntop++ : top - 1;
    for (; i > 0 && before(&w, &st->top[i - 1]); i--)
        st->top[i] = st->top[i - 1];
    st->top[i] = w;
}

/* ---- Counting ------------------------------------------------------------ */

int text_stats(const char *text, size_t len, size_t top, struct text_stats *st,
               stats_progress_fn *progress, void *ctx)
{
    struct table t = {NULL, 0, 0};
    size_t i = 0, n, arena_len = 0, word_off = 0, report = STATS_PROGRESS_STEP, breaks = 0;
    uint32_t cp = 0, prev = 0, last = 0;
    int in_word = 0, open_sentence = 0;

    memset(st, 0, sizeof *st);
    if (top > STATS_MAX_TOP)
        top = STATS_MAX_TOP;
    st->bytes = len;
    /* Lower-casing keeps a word's length and a joiner never grows, so the
     * distinct words fit in as many bytes as the text. */
    st->arena = malloc(len + 1);
    if (!st->arena)
        return -1;

    n = len ? wasmcp_utf8_decode(text, len, &cp) : 0;
    while (i < len) {
        uint32_t next = 0, c = cp;
        size_t nn = 0;
        if (progress && i >= report) {
            progress(i, len, ctx);
            report = (i / STATS_PROGRESS_STEP + 1) * STATS_PROGRESS_STEP;
        }
        if (i + n < len)
            nn = wasmcp_utf8_decode(text + i + n, len - i - n, &next);
        st->characters++;

        if (c == '\r' || (c == '\n' && prev != '\r'))
            breaks++;

        if (is_word_char(c) || (in_word && (c = joiner(prev, c, next)) != 0)) {
            if (!in_word) {
                in_word = 1;
                word_off = arena_len;
            }
            if (c >= 'A' && c <= 'Z')
                c += 'a' - 'A';
            if (c < 0x80) {
                st->arena[arena_len++] = (char)c;
            } else {
                /* The text is valid UTF-8, so its bytes are the encoding. */
                memcpy(st->arena + arena_len, text + i, n);
                arena_len += n;
            }
            st->word_chars++;
            open_sentence = 1;
        } else {
            c = cp;
            if (in_word) {
                int added = add_word(&t, st->arena, word_off, arena_len - word_off);
                if (added < 0)
                    goto oom;
                if (!added)
                    arena_len = word_off;
                st->words++;
                in_word = 0;
            }
            if (is_terminator(c) && !(c == '.' && is_word_char(next)) && open_sentence) {
                st->sentences++;
                open_sentence = 0;
            }
        }
        prev = cp;
        last = cp;
        i += n;
        n = nn;
        cp = next;
    }
    if (in_word) {
        int added = add_word(&t, st->arena, word_off, arena_len - word_off);
        if (added < 0)
            goto oom;
        st->words++;
    }
    if (open_sentence)
        st->sentences++;
    st->lines = breaks + (len > 0 && last != '\n' && last != '\r');
    st->distinct = t.used;

    for (i = 0; i < t.cap && top > 0; i++) {
        struct word_count w;
        if (!t.slots[i].count)
            continue;
        w.word = st->arena + t.slots[i].off;
        w.len = t.slots[i].len;
        w.count = t.slots[i].count;
        keep_top(st, top, w);
    }
    free(t.slots);
    return 0;
oom:
    free(t.slots);
    text_stats_free(st);
    return -1;
}

double text_stats_average(const struct text_stats *st)
{
    if (st->words == 0)
        return 0;
    return round((double)st->word_chars / (double)st->words * 100) / 100;
}

void text_stats_free(struct text_stats *st)
{
    free(st->arena);
    st->arena = NULL;
    st->ntop = 0;
}
