/* The counting behind text_stats, apart from wasmcp's I/O so that it can be
 * tested natively. */
#ifndef TEXT_STATS_H
#define TEXT_STATS_H

#include <stddef.h>

/* The most topWords a call may ask for; the manifest's maximum for "top". */
#define STATS_MAX_TOP 50

/* Bytes of text between two progress reports. */
#define STATS_PROGRESS_STEP 65536

struct word_count {
    const char *word; /* lower-cased (ASCII only), not NUL-terminated */
    size_t len;
    size_t count;
};

struct text_stats {
    size_t characters; /* Unicode code points */
    size_t bytes;      /* of UTF-8 */
    size_t words;
    size_t lines;
    size_t sentences;
    size_t word_chars; /* code points in all words, for the average */
    size_t distinct;   /* different words */
    struct word_count top[STATS_MAX_TOP];
    size_t ntop;
    char *arena; /* holds the words of top */
};

/* Called every STATS_PROGRESS_STEP bytes with how many are done. */
typedef void stats_progress_fn(size_t done, size_t total, void *ctx);

/* Counts text (len bytes of UTF-8) into *st, keeping the top most frequent
 * words (top <= STATS_MAX_TOP). Returns 0, or -1 when out of memory.
 * progress may be NULL. Free *st with text_stats_free. */
int text_stats(const char *text, size_t len, size_t top, struct text_stats *st,
               stats_progress_fn *progress, void *ctx);

/* Code points per word, rounded to two decimals; 0 without words. */
double text_stats_average(const struct text_stats *st);

void text_stats_free(struct text_stats *st);

#endif
