// Drives a wasmcp server with the official MCP TypeScript SDK's client,
// in one of two scenarios, and prints one JSON object of what it saw, for
// e2e/tsclient_test.go to judge:
//   examples  tools, resources, templates, prompts and completions of the
//             example tools
//   ask       a call of askall (e2e's WAT module that asks the client to
//             elicit and for its roots at once), the client answering both
// Usage: node client.mjs SCENARIO http URL
//        node client.mjs SCENARIO stdio COMMAND ARG...
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [scenario, kind, target, ...rest] = process.argv.slice(2);
const transport = kind === "http"
  ? new StreamableHTTPClientTransport(new URL(target))
  : new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: "inherit" });
const client = new Client({ name: "wasmcp-e2e-ts", version: "1" }, { capabilities: { elicitation: {}, roots: {} } });
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked.push("elicitation/create: " + req.params.message);
  return { action: "accept", content: { name: "ts" } };
});
client.setRequestHandler(ListRootsRequestSchema, async () => {
  asked.push("roots/list");
  return { roots: [{ uri: "file:///ts", name: "ts" }] };
});
await client.connect(transport);
const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");

if (scenario === "ask") {
  const res = await client.callTool({ name: "askall", arguments: {} });
  await client.close();
  process.stdout.write(JSON.stringify({ isError: res.isError === true, text: text(res), asked: asked.sort() }) + "\n");
  process.exit(0);
}

const seen = {};
seen.tools = (await client.listTools()).tools.map((t) => t.name).sort();
seen.calculate = text(await client.callTool({ name: "calculate", arguments: { a: 10, b: 5, operation: "add" } }));
const failed = await client.callTool({ name: "calculate", arguments: { a: 1, b: 0, operation: "divide" } });
seen.divideByZero = { isError: failed.isError === true, text: text(failed) };

seen.resources = (await client.listResources()).resources.map((r) => r.uri).sort();
seen.templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate).sort();
seen.about = (await client.readResource({ uri: "invoices://about" })).contents[0].text;
seen.invoice = JSON.parse((await client.readResource({ uri: "invoices://INV-2026-007" })).contents[0].text).id;

seen.prompts = (await client.listPrompts()).prompts.map((p) => p.name).sort();
const chase = await client.getPrompt({ name: "chase_invoice", arguments: { id: "INV-2026-007", tone: "firm" } });
seen.chase = chase.messages[0].content.text;
const review = await client.getPrompt({ name: "review_invoice", arguments: { id: "INV-2026-007" } });
seen.review = review.messages.map((m) => m.content.type);

const complete = async (ref, name, value) => (await client.complete({ ref, argument: { name, value } })).completion;
seen.completeDeclared = await complete({ type: "ref/prompt", name: "chase_invoice" }, "tone", "f");
seen.completeModule = await complete({ type: "ref/resource", uri: "invoices://{id}" }, "id", "inv-2026-01");

await client.close();
process.stdout.write(JSON.stringify(seen) + "\n");
