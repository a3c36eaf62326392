/* Command count_primes counts the primes below a bound by trial division.
 * It is the bench's compute-heavy tool: its time goes to tight loops, where
 * an engine's interrupt checks (wazero's at every loop header, wasmtime's
 * epoch checks) cost the most. */
#include <stdio.h>
#include <string.h>

#include "wasmcp.h"

int main(int argc, char **argv)
{
    const char *tool = wasmcp_tool(argc, argv);
    wasmcp_json args;
    double below = 0;
    long count = 0, i, d;
    char buf[32];
    int n;

    if (tool && strcmp(tool, "count_primes") != 0)
        wasmcp_fail("unknown tool \"%s\"; this module has count_primes", tool);
    args = wasmcp_args_object();
    if (!wasmcp_arg_number(args, "below", &below))
        wasmcp_fail("invalid arguments: \"below\" is required");
    for (i = 2; i < (long)below; i++) {
        int prime = 1;
        for (d = 2; d * d <= i; d++) {
            if (i % d == 0) {
                prime = 0;
                break;
            }
        }
        count += prime;
    }
    n = snprintf(buf, sizeof buf, "%ld", count);
    wasmcp_text(buf, (size_t)n);
    return 0;
}
