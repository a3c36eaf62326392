// A JavaScript tool, in a module that declares no "client", that asks
// all the same (js_ask_test.go).
import { tools, json, elicit, AskError } from "wasmcp";

tools({
  js_undeclared: json(() => {
    try {
      elicit({ message: "May I?", requestedSchema: { type: "object", properties: {} } });
      return { asked: true };
    } catch (e) {
      if (e instanceof AskError) return { code: e.code, error: e.message };
      throw e;
    }
  }),
});
