// Runs the MCP conformance suite (@modelcontextprotocol/conformance, pinned in ../package.json)
// against one server URL for each protocol revision we serve with a conformance requirement set
// (2025-11-25: the stateful-handshake wire, answered statelessly by us; 2026-07-28: the stateless
// wire), then compares every failing check with the ratcheting baseline.
//
//   node run.mjs <server-url> <baseline.txt>
//
// Baseline lines: `<revision> <scenario>[:<check-id>]  # reason`. A scenario entry excuses every
// failing check of that scenario; a check entry only that check (all its occurrences). The run
// fails on a FAILURE check no entry excuses, and on an entry that excuses nothing (it passes now:
// delete it), so the baseline only ever shrinks. WARNING (a SHOULD) and SKIPPED are reported but
// do not fail. Env: MCP_COUNTS (file for "passed failed"), MCP_CONFORMANCE_WORK (results dir).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REVISIONS = ['2025-11-25', '2026-07-28'];
const SEVERITY = { FAILURE: 4, WARNING: 3, SKIPPED: 2, SUCCESS: 1, INFO: 0 };

const [url, baselinePath] = process.argv.slice(2);
if (!url || !baselinePath) {
  console.error('usage: node run.mjs <server-url> <baseline.txt>');
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '..', 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const work = process.env.MCP_CONFORMANCE_WORK || join(here, '..', '.conformance-results');

/** @returns {{revision: string, scenario: string, check: string|null, reason: string, line: number}[]} */
function readBaseline(path) {
  const entries = [];
  readFileSync(path, 'utf8').split('\n').forEach((raw, i) => {
    const hash = raw.search(/(^|\s)#/);
    const text = (hash >= 0 ? raw.slice(0, hash) : raw).trim();
    const reason = hash >= 0 ? raw.slice(hash).replace(/^\s*#\s*/, '').trim() : '';
    if (!text) return;
    const [revision, target, ...rest] = text.split(/\s+/);
    if (!REVISIONS.includes(revision) || !target || rest.length) {
      throw new Error(`${path}:${i + 1}: expected '<revision> <scenario>[:<check-id>]  # reason', got '${raw}'`);
    }
    if (!reason) throw new Error(`${path}:${i + 1}: every baseline entry needs a reason after '#'`);
    const colon = target.indexOf(':');
    entries.push({
      revision,
      scenario: colon < 0 ? target : target.slice(0, colon),
      check: colon < 0 ? null : target.slice(colon + 1),
      reason,
      line: i + 1,
    });
  });
  return entries;
}

/** Runs one requirement set; returns Map "scenario:check" -> {status, message}. */
function runRevision(revision) {
  const out = join(work, revision);
  mkdirSync(out, { recursive: true });
  const started = Date.now();
  const run = spawnSync(process.execPath, [cli, 'server', '--url', url, '--requirements', revision, '-o', out], {
    encoding: 'utf8',
    timeout: 600_000,
    maxBuffer: 64 << 20,
  });
  writeFileSync(join(work, `${revision}.log`), `${run.stdout}\n${run.stderr}`);
  if (run.error) throw run.error;
  const checks = new Map();
  const scenarios = new Set();
  for (const dir of readdirSync(out)) {
    const file = join(out, dir, 'checks.json');
    if (!existsSync(file)) continue;
    // server-<scenario>-<ISO timestamp with dashes>
    const scenario = dir.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
    scenarios.add(scenario);
    for (const c of JSON.parse(readFileSync(file, 'utf8'))) {
      const key = `${scenario}:${c.id}`;
      const prev = checks.get(key);
      if (!prev || SEVERITY[c.status] > SEVERITY[prev.status]) {
        checks.set(key, { status: c.status, message: c.errorMessage || '' });
      }
    }
  }
  if (scenarios.size === 0) {
    throw new Error(`conformance ${revision}: no scenario results (exit ${run.status}); see ${join(work, revision + '.log')}\n${run.stdout}\n${run.stderr}`);
  }
  console.log(`${revision}: ${scenarios.size} scenarios, ${checks.size} distinct checks in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { checks, scenarios };
}

const baseline = readBaseline(baselinePath);
let passed = 0;
let failed = 0;
let excused = 0;
let warnings = 0;
const problems = [];

for (const revision of REVISIONS) {
  const { checks, scenarios } = runRevision(revision);
  const entries = baseline.filter((e) => e.revision === revision);
  const used = new Set();
  for (const [key, { status, message }] of checks) {
    const [scenario, check] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
    if (status === 'SUCCESS') passed++;
    if (status === 'WARNING') {
      warnings++;
      console.log(`  warning  ${revision} ${key}: ${message.slice(0, 160)}`);
    }
    if (status !== 'FAILURE') continue;
    const entry = entries.find((e) => e.scenario === scenario && (e.check === null || e.check === check));
    if (entry) {
      used.add(entry);
      excused++;
    } else {
      failed++;
      problems.push(`UNEXPECTED FAILURE ${revision} ${key}: ${message.slice(0, 300)}`);
    }
  }
  for (const e of entries) {
    if (used.has(e)) continue;
    failed++;
    const what = `${e.scenario}${e.check ? ':' + e.check : ''}`;
    problems.push(
      scenarios.has(e.scenario)
        ? `STALE BASELINE ENTRY ${revision} ${what} (line ${e.line}): nothing fails there now; delete the line`
        : `STALE BASELINE ENTRY ${revision} ${what} (line ${e.line}): the suite did not run this scenario; delete or fix the line`,
    );
  }
}

for (const p of problems) console.log(p);
console.log(`conformance: ${excused} failing checks excused by the baseline, ${warnings} warnings (SHOULD)`);
if (process.env.MCP_COUNTS) writeFileSync(process.env.MCP_COUNTS, `${passed} ${failed}\n`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
