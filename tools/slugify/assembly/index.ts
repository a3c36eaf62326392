// slugify: a wasmcp tool in AssemblyScript. See manifest.json for what a
// model is told about it and assembly/slugify.ts for the rules.

import { args, fail, text, log, quote, Level } from "../../../sdk-guest/assemblyscript/assembly/wasmcp";
import { slugify } from "./slugify";

const a = args();
const input = a.getString("text");

// The manifest's schema already holds separator and maxLength to these
// values under wasmcp; other hosts may not check.
let sep = "-";
if (a.has("separator")) {
  sep = a.getString("separator");
  if (sep != "-" && sep != "_") fail("separator must be \"-\" or \"_\", not " + quote(sep));
}
let maxLength: i64 = 0;
if (a.has("maxLength")) {
  maxLength = a.getInteger("maxLength");
  if (maxLength < 1 || maxLength > 200) fail("maxLength must be from 1 to 200, not " + maxLength.toString());
}

const slug = slugify(input, sep, <i32>maxLength);
if (slug.length == 0) fail("text has no letters or digits to make a slug from");
log(Level.Debug, "slug of " + slug.length.toString() + " characters from " + input.length.toString());
text(slug);
