/* Command calculate is tools/calculate written in C with the guest SDK
 * (sdk-guest/c), so that the bench compares like with like: the same tool,
 * schema (it is packed with tools/calculate/manifest.json) and output as
 * the Go guest, in a language whose modules start in microseconds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wasmcp.h"

/* Writes x as Python's repr does, as tools/calculate does: the fewest
 * digits that read back as x, always with a decimal point or an exponent,
 * and an exponent only outside 1e-4 <= |x| < 1e16 ("15.0", "1e+16"). */
static int format_float(char *buf, size_t size, double x)
{
    int prec, n = 0, exp;
    for (prec = 1; prec <= 17; prec++) {
        n = snprintf(buf, size, "%.*e", prec - 1, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    exp = atoi(strchr(buf, 'e') + 1);
    if (exp < -4 || exp >= 16)
        return n;
    n = snprintf(buf, size, "%.*f", prec - 1 - exp > 0 ? prec - 1 - exp : 0, x);
    if (!strchr(buf, '.'))
        n += snprintf(buf + n, size - (size_t)n, ".0");
    return n;
}

int main(int argc, char **argv)
{
    const char *tool = wasmcp_tool(argc, argv);
    wasmcp_json args;
    double a = 0, b = 0, r;
    char *op, buf[64];
    int n;

    if (tool && strcmp(tool, "calculate") != 0)
        wasmcp_fail("unknown tool \"%s\"; this module has calculate", tool);
    args = wasmcp_args_object();
    if (!wasmcp_arg_number(args, "a", &a) || !wasmcp_arg_number(args, "b", &b))
        wasmcp_fail("invalid arguments: \"a\" and \"b\" are required");
    op = wasmcp_arg_string(args, "operation", NULL);
    if (!op)
        wasmcp_fail("invalid arguments: \"operation\" is required");

    if (strcmp(op, "add") == 0)
        r = a + b;
    else if (strcmp(op, "subtract") == 0)
        r = a - b;
    else if (strcmp(op, "multiply") == 0)
        r = a * b;
    else if (strcmp(op, "divide") == 0) {
        if (b == 0)
            wasmcp_fail("division by zero");
        r = a / b;
    } else
        wasmcp_fail("unknown operation \"%s\": want add, subtract, multiply or divide", op);
    if (isinf(r))
        wasmcp_fail("result is too large for a 64-bit float");

    n = format_float(buf, sizeof buf, r);
    wasmcp_text(buf, (size_t)n);
    return 0;
}
