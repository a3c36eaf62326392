// Tools that misbehave in JavaScript: each must end as a tool error that
// names the cause, within the module's limits (js_limits_test.go).
import { tools, text } from "wasmcp";

function down(n) {
  return down(n + 1) + 1;
}

tools({
  js_spin: text(() => {
    for (;;) {}
  }),
  js_hog: text(() => {
    const keep = [];
    for (;;) keep.push(new Uint8Array(1 << 20).fill(1));
  }),
  js_deep: text(() => String(down(0))),
  js_pending: text(() => new Promise(() => {})),
  js_wrong_type: text(() => 42),
  js_import: text(async () => {
    await import("fs");
    return "imported";
  }),
  js_throw_string: text(() => {
    throw "a string, not an Error";
  }),
});
