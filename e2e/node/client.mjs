// Drives a wasmcp server with the official MCP TypeScript SDK's client,
// in one of three scenarios, on one protocol revision, and prints one
// JSON object of what it saw, for e2e/tsclient_test.go to judge:
//   examples  tools, resources, templates, prompts and completions of the
//             example tools
//   ask       calls of askall (e2e's WAT module that asks the client to
//             elicit and for its roots at once) and asksample (which asks
//             for sampling), the client answering each ask
//   tasks     calls as tasks (2025-11-25's, through the SDK's experimental
//             tasks API) of search_invoices, followed to its result, and
//             of task_spin, which runs until it is cancelled
// 2025-11-25 is spoken by the SDK's v1 (@modelcontextprotocol/sdk), whose
// latest revision it is; 2026-07-28 by its v2 (@modelcontextprotocol/client),
// pinned to it. v2 has no runtime for 2025-11-25's tasks.
// Usage: node client.mjs SCENARIO REVISION http URL
//        node client.mjs SCENARIO REVISION stdio COMMAND ARG...
const [scenario, revision, kind, target, ...rest] = process.argv.slice(2);
const modern = revision === "2026-07-28";
const sdk = modern ? await v2() : await v1();

// v1 and v2 differ in their modules, in the options that pick the
// revision, and in naming a request handler by schema or by method.
async function v1() {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const types = await import("@modelcontextprotocol/sdk/types.js");
  const schemas = {
    "elicitation/create": types.ElicitRequestSchema,
    "roots/list": types.ListRootsRequestSchema,
    "sampling/createMessage": types.CreateMessageRequestSchema,
  };
  return { Client, StdioClientTransport, StreamableHTTPClientTransport, types, options: {}, handler: (method) => schemas[method] };
}

async function v2() {
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
  return { Client, StdioClientTransport, StreamableHTTPClientTransport, options: { versionNegotiation: { mode: { pin: revision } } }, handler: (method) => method };
}

const transport = kind === "http"
  ? new sdk.StreamableHTTPClientTransport(new URL(target))
  : new sdk.StdioClientTransport({ command: target, args: rest, env: process.env, stderr: "inherit" });
const client = new sdk.Client({ name: "wasmcp-e2e-ts", version: "1" }, { capabilities: { elicitation: {}, roots: {}, sampling: {} }, ...sdk.options });
const asked = [];
client.setRequestHandler(sdk.handler("elicitation/create"), async (req) => {
  asked.push("elicitation/create: " + req.params.message);
  return { action: "accept", content: { name: "ts" } };
});
client.setRequestHandler(sdk.handler("roots/list"), async () => {
  asked.push("roots/list");
  return { roots: [{ uri: "file:///ts", name: "ts" }] };
});
client.setRequestHandler(sdk.handler("sampling/createMessage"), async (req) => {
  asked.push(`sampling/createMessage: ${req.params.messages[0].content.text} (${req.params.maxTokens} tokens)`);
  return { role: "assistant", content: { type: "text", text: "teal" }, model: "ts-model", stopReason: "endTurn" };
});
await client.connect(transport);
const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");

const called = (res) => ({ isError: res.isError === true, text: text(res) });
// done reports seen, with the revision the SDK says it speaks (v2 says;
// v1 asks for its latest, 2025-11-25, and has no getter).
const done = async (seen) => {
  const protocolVersion = client.getNegotiatedProtocolVersion?.();
  await client.close();
  process.stdout.write(JSON.stringify({ ...seen, protocolVersion }) + "\n");
  process.exit(0);
};

if (scenario === "ask") {
  const all = called(await client.callTool({ name: "askall", arguments: {} }));
  const sample = called(await client.callTool({ name: "asksample", arguments: {} }));
  await done({ ...all, sample, asked: asked.sort() });
}

if (scenario === "tasks") {
  const tasks = client.experimental.tasks;
  const seen = {};
  // tools/list tells the SDK which tools run as tasks.
  seen.taskSupport = Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t.execution?.taskSupport ?? ""]));
  // callToolStream makes search_invoices a task (its taskSupport is
  // "optional"), polls it, and ends with its result.
  seen.search = { statuses: [] };
  const args = { startDate: "2026-01-01", endDate: "2026-01-31", status: "paid" };
  for await (const m of tasks.callToolStream({ name: "search_invoices", arguments: args })) {
    if (m.type === "taskCreated") seen.search.created = m.task;
    if (m.type === "taskStatus") seen.search.statuses.push(m.task.status);
    if (m.type === "result") seen.search.result = m.result;
    if (m.type === "error") seen.search.error = m.error.message;
  }
  const id = seen.search.created?.taskId;
  seen.search.got = (await tasks.getTask(id)).status;
  seen.search.again = (await tasks.getTaskResult(id, sdk.types.CallToolResultSchema)).structuredContent;
  seen.search.listed = (await tasks.listTasks()).tasks.some((t) => t.taskId === id);
  // task_spin runs only as a task: the SDK refuses a plain call of it,
  // and its task runs until tasks/cancel.
  seen.spin = { statuses: [] };
  try {
    await client.callTool({ name: "task_spin", arguments: {} });
  } catch (e) {
    seen.spin.plain = e.message;
  }
  for await (const m of tasks.callToolStream({ name: "task_spin", arguments: {} })) {
    if (m.type === "taskCreated") {
      seen.spin.created = m.task;
      seen.spin.cancelled = (await tasks.cancelTask(m.task.taskId)).status;
    }
    if (m.type === "taskStatus") seen.spin.statuses.push(m.task.status);
    if (m.type === "result") seen.spin.result = m.result;
    if (m.type === "error") seen.spin.error = m.error.message;
  }
  await done(seen);
}

const seen = {};
seen.tools = (await client.listTools()).tools.map((t) => t.name).sort();
seen.calculate = text(await client.callTool({ name: "calculate", arguments: { a: 10, b: 5, operation: "add" } }));
seen.divideByZero = called(await client.callTool({ name: "calculate", arguments: { a: 1, b: 0, operation: "divide" } }));

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

await done(seen);
