// The bench's TypeScript baseline: the `calculate` tool of tools/calculate,
// with the same schema and the same output, served natively with the
// official MCP TypeScript SDK (v2: @modelcontextprotocol/server, the
// successor of the single @modelcontextprotocol/sdk package, and the first
// to speak the 2026-07-28 revision the bench's client uses).
//
//   node server.mjs                        stdio (the default)
//   node server.mjs --http 127.0.0.1:8080  Streamable HTTP on /mcp
//
// Over HTTP, 2026-07-28 requests are served statelessly, one server
// instance per request (createMcpHandler), and 2025-era requests by the
// SDK's stateless fallback, as wasmcp routes them.
import { createServer } from 'node:http';

import { localhostHostValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

// The tool as tools/calculate/manifest.json describes it.
const inputSchema = {
    type: 'object',
    properties: {
        a: { type: 'number', description: 'The first operand.' },
        b: { type: 'number', description: 'The second operand; the divisor for divide.' },
        operation: {
            type: 'string',
            enum: ['add', 'subtract', 'multiply', 'divide'],
            description: 'What to do with a and b.'
        }
    },
    required: ['a', 'b', 'operation'],
    additionalProperties: false
};

const description =
    'Adds, subtracts, multiplies or divides two numbers and returns the result as a decimal number, e.g. 15.0. Dividing by zero is an error.';

// formatFloat writes x as Python's repr does (and tools/calculate does):
// always a decimal point or an exponent, and an exponent only outside
// 1e-4 <= |x| < 1e16.
function formatFloat(x) {
    if (!Number.isFinite(x)) return String(x);
    if (Object.is(x, -0)) return '-0.0';
    // toExponential() without digits gives the shortest round-trip form.
    const e = x.toExponential();
    const i = e.indexOf('e');
    const exp = Number(e.slice(i + 1));
    if (exp < -4 || exp >= 16) {
        const sign = exp < 0 ? '-' : '+';
        return e.slice(0, i) + 'e' + sign + String(Math.abs(exp)).padStart(2, '0');
    }
    const digits = e.slice(0, i).replace('-', '').replace('.', '').length;
    let s = x.toFixed(Math.max(0, digits - 1 - exp));
    if (!s.includes('.')) s += '.0';
    return s;
}

function calculate({ a, b, operation }) {
    let r;
    switch (operation) {
        case 'add':
            r = a + b;
            break;
        case 'subtract':
            r = a - b;
            break;
        case 'multiply':
            r = a * b;
            break;
        case 'divide':
            if (b === 0) throw new Error('division by zero');
            r = a / b;
            break;
        default:
            throw new Error(`unknown operation "${operation}": want add, subtract, multiply or divide`);
    }
    if (!Number.isFinite(r)) throw new Error('result is too large for a 64-bit float');
    return formatFloat(r);
}

function newServer() {
    const server = new McpServer({ name: 'native-ts', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.registerTool(
        'calculate',
        {
            title: 'Calculator',
            description,
            inputSchema: fromJsonSchema(inputSchema),
            annotations: { title: 'Calculator', readOnlyHint: true, idempotentHint: true, openWorldHint: false }
        },
        async args => {
            try {
                return { content: [{ type: 'text', text: calculate(args) }] };
            } catch (err) {
                return { content: [{ type: 'text', text: err.message }], isError: true };
            }
        }
    );
    return server;
}

function main() {
    const args = process.argv.slice(2);
    const at = args.indexOf('--http');
    if (at < 0) {
        serveStdio(newServer);
        return;
    }
    const addr = args[at + 1];
    const colon = addr?.lastIndexOf(':') ?? -1;
    if (colon < 0) {
        console.error('usage: server.mjs [--http HOST:PORT]');
        process.exit(2);
    }
    const host = addr.slice(0, colon) || '127.0.0.1';
    const port = Number(addr.slice(colon + 1));
    const handle = toNodeHandler(createMcpHandler(newServer));
    const validateHost = localhostHostValidation();
    const httpServer = createServer((req, res) => {
        if (!validateHost(req, res)) return;
        if (new URL(req.url, 'http://x').pathname !== '/mcp') {
            res.writeHead(404).end('not found\n');
            return;
        }
        handle(req, res);
    });
    httpServer.keepAliveTimeout = 60_000;
    httpServer.listen(port, host, () => console.error(`native-ts: serving http://${addr}/mcp`));
    for (const sig of ['SIGTERM', 'SIGINT']) {
        process.on(sig, () => httpServer.close(() => process.exit(0)));
    }
}

main();
