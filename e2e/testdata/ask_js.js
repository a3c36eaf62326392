// A JavaScript tool that asks the user to confirm by elicitation
// (js_ask_test.go).
import { tools, json, elicit } from "wasmcp";

tools({
  js_confirm: json(({ note }) => {
    const r = elicit({
      id: "confirm",
      message: `Remove the note ${note}?`,
      requestedSchema: { type: "object", properties: { confirm: { type: "boolean" } }, required: ["confirm"] },
    });
    return { action: r.action, confirm: r.content?.confirm ?? null };
  }),
});
