// A JavaScript tool that passes its arguments to the SDK's http(), and
// reports what came back or why nothing did (js_http_test.go).
import { tools, json, http, HTTPError } from "wasmcp";

tools({
  js_fetch: json(({ url, method, body, bytes, secret }) => {
    try {
      const r = http({ url, method, secret, body: bytes ? Uint8Array.from(bytes) : body });
      return typeof r.body === "string"
        ? { status: r.status, text: r.body, type: r.headers["Content-Type"] ?? null }
        : { status: r.status, bytes: Array.from(r.body) };
    } catch (e) {
      if (e instanceof HTTPError) return { error: e.message, code: e.code, denied: e.denied };
      throw e;
    }
  }),
});
