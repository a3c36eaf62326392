// A JavaScript tool whose top level throws, for attack/snapwhy.py: what do
// the operator and the model learn of why?
import { tools, text } from "wasmcp";

throw new Error("boom at load: the tool's config is missing");

tools({ jsbroken: text(() => "unreachable") });
