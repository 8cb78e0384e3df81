// Installs the pinned dependencies (npm ci) when node_modules is missing or older than the lock
// file, so `npm start` and `npm test` work on a fresh clone. Uses only Node built-ins.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The oldest Node this project runs on (package.json "engines"; vite 8 and yargs need 20.19). */
export const MIN_NODE = [20, 19];

/**
 * Packages that declare Node >= 22 but run on 20.19+ (the whole suite runs on Node 20 in CI):
 * npm ci prints EBADENGINE for them on Node 20. Kept in sync with package-lock.json by
 * server/test/unit/node-support.test.ts, and named in the README.
 */
export const NODE_22_DECLARED = ['@hocuspocus/server', 'neuroglancer', 'vega-lite'];

export function checkNode() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major < MIN_NODE[0] || (major === MIN_NODE[0] && minor < MIN_NODE[1])) {
    console.error(`Plexus needs Node ${MIN_NODE.join('.')} or newer; this is Node ${process.versions.node}.`);
    process.exit(1);
  }
  return major;
}

export function ensureInstalled(root) {
  const major = checkNode();
  const marker = path.join(root, 'node_modules/.package-lock.json');
  const lock = path.join(root, 'package-lock.json');
  if (fs.existsSync(marker) && fs.statSync(marker).mtimeMs >= fs.statSync(lock).mtimeMs - 1000) return;
  console.log('Installing dependencies (npm ci)…');
  if (major < 22)
    console.log(`(On Node ${major}, npm warns "EBADENGINE" for ${NODE_22_DECLARED.join(', ')}: they declare Node 22 but run on Node 20.19+, where every Plexus test runs.)`);
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('npm ci failed; see above.');
    process.exit(r.status ?? 1);
  }
}
