#!/usr/bin/env node
// `npm test`: every suite — type check, unit + integration (vitest), browser (Playwright) — then
// one closing line `N passed, N failed` with the totals over all suites. Exit code 0 only when
// nothing failed. The line is also written to .tmp/test-summary.txt for .ci/run.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureInstalled } from './ensure-install.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
ensureInstalled(root);
const tmp = path.join(root, '.tmp');
fs.mkdirSync(tmp, { recursive: true });
const only = process.argv[2]; // optional: typecheck | vitest | e2e
const suites = [];

function run(cmd, args, env = {}) {
  console.log(`\n$ ${cmd} ${args.join(' ')}`);
  return spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } }).status;
}

if (!only || only === 'typecheck') {
  const status = run('npm', ['run', 'typecheck']);
  suites.push({ name: 'typecheck', passed: status === 0 ? 1 : 0, failed: status === 0 ? 0 : 1 });
}

if (!only || only === 'vitest') {
  const out = path.join(tmp, 'vitest.json');
  fs.rmSync(out, { force: true });
  const status = run('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile=${out}`]);
  if (fs.existsSync(out)) {
    const r = JSON.parse(fs.readFileSync(out, 'utf8'));
    // A suite that fails to load, or whose beforeAll fails (its tests then show as skipped — e.g.
    // the Postgres suite without Postgres), counts as a failure even if no test of it failed.
    const brokenFiles = (r.testResults ?? []).filter((f) => f.status === 'failed' && !(f.assertionResults ?? []).some((a) => a.status === 'failed')).length;
    suites.push({ name: 'unit + integration (vitest)', passed: r.numPassedTests, failed: r.numFailedTests + brokenFiles });
  } else suites.push({ name: 'unit + integration (vitest)', passed: 0, failed: 1, note: `vitest exited ${status} without results` });
}

if (!only || only === 'e2e') {
  const out = path.join(root, 'e2e/results.json');
  fs.rmSync(out, { force: true });
  const chromium = process.env.PLEXUS_CHROMIUM ?? '/usr/bin/chromium';
  const build = fs.existsSync(chromium) ? run('npm', ['run', 'build', '-w', 'client']) : -1;
  if (build === -1) suites.push({ name: 'browser (playwright)', passed: 0, failed: 1, note: `no Chromium at ${chromium}: install Debian's (apt-get install -y chromium) or set PLEXUS_CHROMIUM` });
  else if (build !== 0) suites.push({ name: 'browser (playwright)', passed: 0, failed: 1, note: 'client build failed' });
  else {
    const status = run('npx', ['playwright', 'test', '-c', 'e2e/playwright.config.ts']);
    if (fs.existsSync(out)) {
      const s = JSON.parse(fs.readFileSync(out, 'utf8')).stats;
      suites.push({ name: 'browser (playwright)', passed: s.expected + (s.flaky ?? 0), failed: s.unexpected + (status !== 0 && s.unexpected === 0 ? 1 : 0) });
    } else suites.push({ name: 'browser (playwright)', passed: 0, failed: 1, note: `playwright exited ${status} without results` });
  }
}

console.log('\nSuites:');
for (const s of suites) console.log(`  ${s.name}: ${s.passed} passed, ${s.failed} failed${s.note ? ` (${s.note})` : ''}`);
const passed = suites.reduce((a, s) => a + s.passed, 0);
const failed = suites.reduce((a, s) => a + s.failed, 0);
const line = `${passed} passed, ${failed} failed`;
fs.writeFileSync(path.join(tmp, 'test-summary.txt'), line + '\n');
console.log(line);
process.exit(failed === 0 ? 0 : 1);
