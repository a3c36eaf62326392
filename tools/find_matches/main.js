// find_matches: the JavaScript example. Two tools in one module: regular
// expressions with JavaScript's own semantics, and dice rolled with
// Math.random (fresh in every call, even from a snapshot), stamped with
// the call's own time.
import { tools, json, log } from "wasmcp";

function findMatches({ text, pattern, flags = "", limit = 100 }) {
  if (/[^dimsu]/.test(flags) || new Set(flags).size !== flags.length) {
    throw new Error(`flags "${flags}" must be distinct letters from d, i, m, s, u (g is implied)`);
  }
  let re;
  try {
    re = new RegExp(pattern, flags + "g");
  } catch (e) {
    throw new Error(`pattern is not a valid regular expression: ${e.message}`);
  }
  const matches = [];
  let count = 0;
  for (const m of text.matchAll(re)) {
    count++;
    if (matches.length < limit) {
      const found = { match: m[0], index: m.index, groups: m.slice(1).map((g) => g ?? null) };
      if (m.groups) found.named = m.groups;
      matches.push(found);
    }
  }
  log("debug", `${count} matches of /${pattern}/${flags} in ${text.length} characters`);
  return { count, matches };
}

function rollDice({ count = 1, sides = 6 }) {
  const rolls = Array.from({ length: count }, () => 1 + Math.floor(Math.random() * sides));
  return { rolls, total: rolls.reduce((a, b) => a + b, 0), rolledAt: new Date().toISOString() };
}

tools({
  find_matches: json(findMatches),
  roll_dice: json(rollDice),
});
