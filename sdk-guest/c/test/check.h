/* A minimal check macro for the C SDK's native tests and the C tools'.
 * A test program counts checks and failures, and exits 1 if any failed. */
#ifndef WASMCP_CHECK_H
#define WASMCP_CHECK_H

#include <stdio.h>

static int failures, checks;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);              \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#endif
