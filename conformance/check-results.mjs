// Judges one conformance suite run against its expected-failures file, from
// the suite's own output: the checks.json of every scenario (-o DIR) and the
// "=== Running scenario: NAME ===" lines of its log, which say what ran even
// when a scenario crashed before writing its checks.
//
// The suite's --expected-failures already fails a run on an unexpected
// failure or on an entry whose scenario now passes. This script does it
// again, the same way in both suite versions, and also refuses entries the
// suite lets pass silently: a scenario that did not run at all (misspelt,
// renamed, or dropped from the suite) and a per-check entry whose check the
// scenario no longer emits. It prints the per-suite summary conformance/run
// shows, and writes it as summary.json in the results directory.
//
// A scenario fails when any check is FAILURE or WARNING, or when it left no
// checks.json: the rule the suite's baseline uses.
//
// usage: node check-results.mjs LABEL EXPECTED.yml RESULTS_DIR SUITE.log
import { readFileSync, readdirSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [label, expectedFile, resultsDir, logFile] = process.argv.slice(2);
if (!logFile) {
  console.error('usage: check-results.mjs LABEL EXPECTED.yml RESULTS_DIR SUITE.log');
  process.exit(2);
}

// The expected-failures file, in the subset of YAML the suite reads that
// these files use: a top-level "server:" list of plain scalars, each
// "scenario" or "scenario:check-id", with comments, or "server: []" for
// none. Anything else is an error, so that a typo cannot silently empty
// the list.
function readExpected(file) {
  const entries = [];
  let inServer = false;
  readFileSync(file, 'utf8').split('\n').forEach((raw, i) => {
    const line = raw.replace(/(^|\s)#.*$/, '').trimEnd();
    if (line.trim() === '') return;
    if (/^server:\s*$/.test(line)) {
      inServer = true;
      return;
    }
    if (/^server:\s*\[\]\s*$/.test(line) && entries.length === 0) {
      return;
    }
    const m = line.match(/^\s+-\s+([A-Za-z0-9_./-]+(?::[A-Za-z0-9_.$/-]+)?)$/);
    if (!inServer || !m) {
      throw new Error(`${file}:${i + 1}: expected "server:" and then "  - scenario" or "  - scenario:check-id" lines, got ${JSON.stringify(raw)}`);
    }
    const [scenario, check] = m[1].split(':');
    entries.push({ text: m[1], scenario, check });
  });
  return entries;
}

const isFailed = (c) => c.status === 'FAILURE' || c.status === 'WARNING';

let expected;
try {
  expected = readExpected(expectedFile);
} catch (err) {
  console.error(err.message);
  process.exit(2);
}
const ran = [...readFileSync(logFile, 'utf8').matchAll(/^=== Running scenario: (\S+) ===$/gm)].map((m) => m[1]);

// Result directories are named server-<scenario>-<ISO time with : and . as ->.
const checksOf = new Map();
for (const name of existsSync(resultsDir) ? readdirSync(resultsDir) : []) {
  const m = name.match(/^server-(.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/);
  const file = join(resultsDir, name, 'checks.json');
  if (m && existsSync(file)) checksOf.set(m[1], JSON.parse(readFileSync(file, 'utf8')));
}

const scenarios = ran.map((name) => {
  const checks = checksOf.get(name);
  const failing = checks ? checks.filter(isFailed) : null;
  return {
    name,
    checks,
    failed: !checks || failing.length > 0,
    failing: failing
      ? failing.map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? c.description}`)
      : ['no checks.json: the scenario crashed (see the suite log)'],
  };
});
const byName = new Map(scenarios.map((s) => [s.name, s]));

const problems = [];
const expectedFailures = [];
for (const e of expected) {
  const s = byName.get(e.scenario);
  if (!s) {
    problems.push(`stale entry ${e.text}: scenario ${e.scenario} did not run in this suite`);
  } else if (!e.check) {
    if (s.failed) expectedFailures.push(e.text);
    else problems.push(`stale entry ${e.text}: the scenario now passes`);
  } else if (!s.checks) {
    expectedFailures.push(e.text);
  } else {
    const emitted = s.checks.filter((c) => c.id === e.check && c.status !== 'INFO');
    if (emitted.length === 0) problems.push(`stale entry ${e.text}: the scenario emitted no check ${e.check}`);
    else if (emitted.some(isFailed)) expectedFailures.push(e.text);
    else problems.push(`stale entry ${e.text}: the check now passes`);
  }
}
for (const s of scenarios.filter((s) => s.failed)) {
  if (expected.some((e) => e.scenario === s.name && !e.check)) continue;
  const allowed = new Set(expected.filter((e) => e.scenario === s.name).map((e) => e.check));
  const unexpected = s.checks
    ? s.checks.filter((c) => isFailed(c) && !allowed.has(c.id)).map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? c.description}`)
    : s.failing;
  for (const u of new Set(unexpected)) problems.push(`unexpected failure in ${s.name}: ${u}`);
}

const passed = scenarios.filter((s) => !s.failed).map((s) => s.name);
const failed = scenarios.filter((s) => s.failed).map((s) => s.name);
const summary = { label, scenarios: scenarios.length, passed, failed, expectedFailures, problems };
if (existsSync(resultsDir)) writeFileSync(join(resultsDir, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');

console.log(`${label}: ${scenarios.length} scenarios, ${passed.length} passed, ${failed.length} failed (${expectedFailures.length} expected-failure entries matched)`);
console.log(`  passed: ${passed.join(', ') || '-'}`);
console.log(`  failed as expected: ${expectedFailures.join(', ') || '-'}`);
for (const p of problems) console.log(`  PROBLEM: ${p.length > 400 ? p.slice(0, 400) + '…' : p}`);
if (scenarios.length === 0) {
  console.log('  PROBLEM: no scenario ran');
  process.exit(1);
}
process.exit(problems.length ? 1 : 0);
