// Unit tests of the slug rules, built as a wasmcp tool and run under the real
// server by slugify_test.go: {"case":"unit"} prints one line per failed
// check and a closing count.

import { args, text, fail, quote } from "../../../sdk-guest/assemblyscript/assembly/wasmcp";
import { slugify, fold } from "../assembly/slugify";

let passed = 0;
let failed = 0;
const failures: string[] = [];

function eq(name: string, got: string, want: string): void {
  if (got == want) {
    passed++;
  } else {
    failed++;
    failures.push("FAIL " + name + ": got " + quote(got) + ", want " + quote(want));
  }
}

function testSlugs(): void {
  // text, separator, maxLength, slug
  const cases: string[][] = [
    ["Hello World", "-", "0", "hello-world"],
    ["Hello World", "_", "0", "hello_world"],
    ["  --Hello,   World!!  ", "-", "0", "hello-world"],
    ["Crème Brûlée: 2 Ways!", "-", "0", "creme-brulee-2-ways"],
    ["é ü ß æ ø å ç ñ", "-", "0", "e-u-ss-ae-o-a-c-n"],
    ["ÉÜÆØÅÇÑ", "-", "0", "euaeoacn"],
    ["Straße", "-", "0", "strasse"],
    ["Œuvre Ĳssel Þór Łódź Şişli Ștefan", "-", "0", "oeuvre-ijssel-thor-lodz-sisli-stefan"],
    ["e\u0301te\u0301", "-", "0", "ete"], // é as e + combining accent
    ["\u0301start", "-", "0", "start"],
    ["a_b-c.d", "-", "0", "a-b-c-d"],
    ["a_b-c.d", "_", "0", "a_b_c_d"],
    ["ABC123def", "-", "0", "abc123def"],
    ["100% sure", "-", "0", "100-sure"],
    ["日本語 text", "-", "0", "text"],
    ["😀 smile 😀", "-", "0", "smile"],
    ["a😀b", "-", "0", "a-b"],
    ["a\tb\nc\u00a0d", "-", "0", "a-b-c-d"],
    ["× ÷", "-", "0", ""], // signs, not letters
    ["!!!", "-", "0", ""],
    ["", "-", "0", ""],
    // maxLength: a cut never leaves a separator at the end.
    ["hello world", "-", "5", "hello"],
    ["hello world", "-", "6", "hello"],
    ["hello world", "-", "7", "hello-w"],
    ["hello world", "-", "11", "hello-world"],
    ["hello world", "-", "200", "hello-world"],
    ["a b c", "_", "2", "a"],
    ["a b c", "_", "1", "a"],
    ["Straße", "-", "5", "stras"],
    ["x", "-", "1", "x"],
  ];
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i];
    eq("slugify(" + quote(c[0]) + ", " + quote(c[1]) + ", " + c[2] + ")", slugify(c[0], c[1], I32.parseInt(c[2])), c[3]);
  }
  const long = "word ".repeat(100);
  const cut = slugify(long, "-", 200);
  eq("200 characters", cut.length.toString(), "199"); // the 200th is a separator
  eq("long text", slugify("ab ".repeat(50000), "-").length.toString(), (50000 * 3 - 1).toString());
}

// Every letter of Latin-1 and Latin Extended-A has an ASCII spelling.
function testFoldsCoverLatin(): void {
  for (let c = 0xC0; c <= 0x17F; c++) {
    if (c == 0xD7 || c == 0xF7) continue; // × and ÷
    const f = fold(c);
    eq("fold U+" + c.toString(16), f == null ? "(none)" : "folded", "folded");
  }
}

if (args().getString("case") == "unit") {
  testSlugs();
  testFoldsCoverLatin();
  failures.push(passed.toString() + " passed, " + failed.toString() + " failed");
  text(failures.join("\n") + "\n");
} else {
  fail("unknown case");
}
