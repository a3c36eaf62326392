// Types of "wasmcp", the JavaScript guest SDK that the QuickJS runtime
// provides to every JavaScript and TypeScript tool (sdk-guest/js/README.md).
declare module "wasmcp" {
  /** A tool's arguments: the JSON object of the call, checked by the host against the manifest's inputSchema. */
  export type Args = { [name: string]: unknown };

  /** A handler may return its result, or a promise of it. */
  export type Handler<A, R> = (args: A) => R | Promise<R>;

  /** What text(), json() and result() make: a handler and its output mode. */
  export interface Tool {
    readonly mode: "text" | "json" | "result";
    readonly handler: Handler<any, unknown>;
  }

  /** A tool whose handler returns a string, sent as one text block ("output": "text"). */
  export function text<A = Args>(handler: Handler<A, string>): Tool;
  /** A tool whose handler returns an object, sent as structuredContent ("output": "json"). */
  export function json<A = Args, R extends object = { [key: string]: unknown }>(handler: Handler<A, R>): Tool;
  /** A tool whose handler returns an MCP CallToolResult ("output": "result"). */
  export function result<A = Args>(handler: Handler<A, CallToolResult>): Tool;

  /**
   * Registers the module's tools by name, as its manifest names them. Call it
   * once, at the top level of the tool's code.
   */
  export function tools(map: { [name: string]: Tool }): void;

  /**
   * One of a read's contents: text, or blob (bytes). uri may be left out (it
   * is the URI read), and mimeType defaults to the manifest's.
   */
  export type ResourceContents =
    | { uri?: string; mimeType?: string; text: string }
    | { uri?: string; mimeType?: string; blob: Uint8Array | ArrayBuffer };

  /**
   * Registers the handler of the module's resources/read (docs/abi.md,
   * "Reading a resource"): it answers the reads of every resource the
   * manifest declares without contents and of every URI its templates match.
   * args holds the template's variables (a string each, an array for an
   * exploded variable with several values), and is {} for a declared
   * resource. It returns a string (text), bytes (a blob) or an array of
   * contents; a thrown error fails the read with its message. Call it once.
   */
  export function resources(
    handler: (uri: string, args: { [name: string]: string | string[] }) =>
      string | Uint8Array | ArrayBuffer | ResourceContents[] | Promise<string | Uint8Array | ArrayBuffer | ResourceContents[]>,
  ): void;

  /** One message of a prompt: a content block, or a string for a text block. */
  export interface PromptMessage {
    role: "user" | "assistant";
    content: Content | string;
  }

  /** What a prompt handler returns: its messages, with or without a description. */
  export type PromptResult = PromptMessage[] | { description?: string; messages: PromptMessage[] };

  /**
   * Registers the handler of the module's prompts/get (docs/abi.md, "Getting
   * a prompt"): it gets every prompt the manifest declares without messages,
   * by name. The host has checked args against the arguments the manifest
   * declares. A thrown error fails the request with its message. Call it once.
   */
  export function prompts(
    handler: (name: string, args: { [name: string]: string }) => PromptResult | Promise<PromptResult>,
  ): void;

  /** What completion/complete completes: a prompt's argument or a template's variable. */
  export type CompleteRef = { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string };

  /** A completion: its values (at most 100), or them with a total and whether there are more. */
  export type CompleteResult = string[] | { values: string[]; total?: number; hasMore?: boolean };

  /**
   * Registers the handler of the module's completion/complete (docs/abi.md,
   * "Completions"): it offers values for name, an argument or variable of
   * ref, beginning with value (what the client typed), for every prompt and
   * template whose manifest entry says "complete": "module" and that
   * declare no values of their own. context holds the other arguments the
   * client sent. A thrown error fails the request with its message. Call
   * it once.
   */
  export function completions(
    handler: (ref: CompleteRef, name: string, value: string, context: { [name: string]: string }) => CompleteResult | Promise<CompleteResult>,
  ): void;

  /** The MCP log levels, in increasing severity. */
  export type Level = "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";

  /** Result codes of the host functions (docs/abi.md, "Result codes"). */
  export const Code: {
    readonly OK: 0; readonly Fault: 1; readonly Invalid: 2; readonly Encoding: 3; readonly TooLong: 4;
    readonly Limit: 5; readonly Order: 6; readonly Denied: 7; readonly Network: 8;
  };

  /**
   * Sends notifications/message to the client, if it asked for this level.
   * Returns Code.OK, or the host's code (a failed log never stops the tool).
   */
  export function log(level: Level, message: string): number;

  /**
   * Sends notifications/progress, if the client's request asked for progress.
   * done must grow from one report to the next; total is the expected final
   * value (omitted: unknown). Returns Code.OK or the host's code.
   */
  export function progress(done: number, total?: number, message?: string): number;

  export interface Request {
    /** GET when omitted. */
    method?: string;
    url: string;
    headers?: { [name: string]: string };
    /** A string is sent as UTF-8; bytes travel base64-encoded and arrive as they were. */
    body?: string | Uint8Array | ArrayBuffer;
    /**
     * The name of a secret the operator bound to the URL's host: the host adds
     * it to the request and the tool never sees its value.
     */
    secret?: string;
  }

  export interface Response {
    /** Any HTTP status counts as a response. */
    status: number;
    headers: { [name: string]: string };
    /** A string when the response body is UTF-8, its bytes otherwise. */
    body: string | Uint8Array;
  }

  /** A request the host refused or could not complete; message says why and what the policy lacks. */
  export class HTTPError extends Error {
    /** One of Code: Denied, Network, Limit, Invalid, TooLong; -1 for an unreadable answer. */
    readonly code: number;
    /** The operator's policy does not allow the request. */
    readonly denied: boolean;
  }

  /**
   * Has the host make an HTTP request, if the operator's policy allows it
   * (the tool has no network of its own). Synchronous: it returns when the
   * answer is in. Throws HTTPError when there is no response.
   */
  export function http(request: Request): Response;

  /** An ask of the client that brought no answer; message says why. */
  export class AskError extends Error {
    /** One of Code: Denied (the tool or the client did not declare the capability), Invalid, Network, …; -1 for an unreadable answer. */
    readonly code: number;
  }

  /**
   * Asks the user, by elicitation: a form (message and requestedSchema) or
   * a URL to visit (message, url, elicitationId). id names the ask within
   * the call. The tool's manifest declares "client": ["elicitation"].
   * Synchronous; on 2026-07-28 the call ends here until the client answers,
   * and runs again from the start with the answer. Throws AskError when
   * there is no answer.
   */
  export function elicit(request: {
    id?: string; message: string; requestedSchema?: object; url?: string; elicitationId?: string; mode?: "form" | "url";
  }): { action: "accept" | "decline" | "cancel"; content?: { [name: string]: unknown } };

  /** Asks the client's model for a completion ("client": ["sampling"]). */
  export function createMessage(request: {
    id?: string; messages: { role: "user" | "assistant"; content: object }[]; maxTokens: number; systemPrompt?: string;
  }): { role: string; content: { type: string; text?: string }; model: string; stopReason?: string };

  /** Asks the client for its roots ("client": ["roots"]). */
  export function listRoots(id?: string): { uri: string; name?: string }[];

  /** A content block of a CallToolResult. */
  export type Content =
    | { type: "text"; text: string; _meta?: { [key: string]: unknown } }
    | { type: "image" | "audio"; data: string; mimeType: string; _meta?: { [key: string]: unknown } }
    | { type: "resource_link"; uri: string; name: string; mimeType?: string; description?: string }
    | { type: "resource"; resource: { uri: string; mimeType?: string; text?: string; blob?: string } };

  /** An MCP CallToolResult, as a result() tool returns it (docs/abi.md, "Output modes"). */
  export interface CallToolResult {
    content: Content[];
    structuredContent?: { [key: string]: unknown };
    isError?: boolean;
    _meta?: { [key: string]: unknown };
  }
}

/** console.log and the like write one line to stderr; stdout is the tool's result. */
declare var console: {
  log(...data: unknown[]): void;
  info(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
  debug(...data: unknown[]): void;
};
