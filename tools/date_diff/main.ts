// date_diff: the TypeScript example. Counts the days between two dates, and
// the working days among them, reporting progress over long spans.
import { tools, json, progress } from "wasmcp";

interface Args {
  start: string;
  end: string;
  holidays?: string[];
}

interface Diff {
  days: number;
  weeks: number;
  businessDays: number;
}

const dayMs = 86_400_000;

function parseDate(what: string, s: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  const t = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  // Date.UTC rolls 2026-02-30 over to March: a date that does not print
  // back as itself does not exist.
  if (Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== s) {
    throw new Error(`${what} "${s}" is not a date in YYYY-MM-DD form`);
  }
  return t;
}

export function dateDiff({ start, end, holidays = [] }: Args): Diff {
  const from = parseDate("start", start);
  const to = parseDate("end", end);
  const off = new Set(holidays.map((h) => parseDate("holiday", h)));
  const sign = to < from ? -1 : 1;
  const days = Math.round((to - from) / dayMs);
  let businessDays = 0;
  // Counts the working days after start up to and including end.
  for (let i = 1; i <= Math.abs(days); i++) {
    const t = from + sign * i * dayMs;
    const wd = new Date(t).getUTCDay();
    if (wd !== 0 && wd !== 6 && !off.has(t)) businessDays++;
    if (i % 3650 === 0) progress(i, Math.abs(days), "counting working days");
  }
  return { days, weeks: Math.trunc(days / 7), businessDays: sign * businessDays };
}

tools({ date_diff: json<Args, Diff>(dateDiff) });
