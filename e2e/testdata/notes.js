// A JavaScript module serving a resource template and prompts through the
// SDK's resources(), prompts() and completions() (e2e/guest_entries_test.go). notes://none
// and the prompt broken_note answer what the SDK refuses to write.
import { resources, prompts, completions } from "wasmcp";

const notes = { a: "note A", b: "note B" };

resources((uri, args) => {
  if (args.id === "none") return [];
  if (!(args.id in notes)) throw new Error(`there is no note ${args.id}: the notes are ${Object.keys(notes).join(", ")}`);
  return notes[args.id];
});

prompts((name, args) => {
  if (name === "broken_note") return [{ role: "system", content: "You are a note." }];
  return {
    description: `Summary of note ${args.id}`,
    messages: [{ role: "user", content: `Summarise note ${args.id}: ${notes[args.id] ?? "?"}` }],
  };
});

completions((ref, name, value) => {
  const ids = Object.keys(notes).filter((id) => id.startsWith(value));
  return ref.type === "ref/prompt" ? { values: ids, total: ids.length } : ids;
});
