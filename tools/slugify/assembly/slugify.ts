// The slug rules, apart from the tool's input and output so that the unit
// tests (test/slugify_test.ts) can call them directly.

// Latin letters with diacritics, and the ASCII each is spelled with: all of
// Latin-1 and Latin Extended-A, plus the Romanian comma-below letters.
const FOLDS: string[][] = [
  ["ÀÁÂÃÄÅàáâãäåĀāĂăĄą", "a"],
  ["Ææ", "ae"],
  ["ÇçĆćĈĉĊċČč", "c"],
  ["ÐðĎďĐđ", "d"],
  ["ÈÉÊËèéêëĒēĔĕĖėĘęĚě", "e"],
  ["ĜĝĞğĠġĢģ", "g"],
  ["ĤĥĦħ", "h"],
  ["ÌÍÎÏìíîïĨĩĪīĬĭĮįİı", "i"],
  ["Ĳĳ", "ij"],
  ["Ĵĵ", "j"],
  ["Ķķĸ", "k"],
  ["ĹĺĻļĽľĿŀŁł", "l"],
  ["ÑñŃńŅņŇňŉŊŋ", "n"],
  ["ÒÓÔÕÖØòóôõöøŌōŎŏŐő", "o"],
  ["Œœ", "oe"],
  ["ŔŕŖŗŘř", "r"],
  ["ŚśŜŝŞşŠšſȘș", "s"],
  ["ß", "ss"],
  ["ŢţŤťŦŧȚț", "t"],
  ["Þþ", "th"],
  ["ÙÚÛÜùúûüŨũŪūŬŭŮůŰűŲų", "u"],
  ["Ŵŵ", "w"],
  ["ÝýÿŶŷŸ", "y"],
  ["ŹźŻżŽž", "z"],
];

function buildFolds(): Map<i32, string> {
  const m = new Map<i32, string>();
  for (let i = 0; i < FOLDS.length; i++) {
    const chars = FOLDS[i][0];
    for (let j = 0; j < chars.length; j++) m.set(chars.charCodeAt(j), FOLDS[i][1]);
  }
  return m;
}

const folds = buildFolds();

/** The ASCII spelling of c, or null when c is not a letter or digit the slug keeps. */
export function fold(c: i32): string | null {
  if ((c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39)) return String.fromCharCode(c);
  if (c >= 0x41 && c <= 0x5A) return String.fromCharCode(c + 0x20);
  return folds.has(c) ? folds.get(c) : null;
}

/**
 * text as a slug: lower-case ASCII letters and digits, with each run of
 * other characters turned into one sep and none at either end, at most
 * maxLength characters long (0 for no limit). "" when text has no letter or
 * digit.
 */
export function slugify(text: string, sep: string, maxLength: i32 = 0): string {
  const parts: string[] = [];
  let pending = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // Combining accents (U+0300..U+036F) belong to the letter before them:
    // "e" + U+0301 is é written in two characters, and folds to "e".
    if (c >= 0x300 && c <= 0x36F) continue;
    const piece = fold(c);
    if (piece == null) {
      pending = parts.length > 0;
      continue;
    }
    if (pending) {
      parts.push(sep);
      pending = false;
    }
    parts.push(piece);
  }
  let slug = parts.join("");
  if (maxLength > 0 && slug.length > maxLength) {
    slug = slug.substring(0, maxLength);
    // Runs of separators were already merged, so at most one can be left.
    if (slug.endsWith(sep)) slug = slug.substring(0, slug.length - sep.length);
  }
  return slug;
}
