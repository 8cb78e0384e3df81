// Installs the pinned dependencies (npm ci) when node_modules is missing or older than the lock
// file, so `npm start` and `npm test` work on a fresh clone. Uses only Node built-ins.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export function ensureInstalled(root) {
  const marker = path.join(root, 'node_modules/.package-lock.json');
  const lock = path.join(root, 'package-lock.json');
  if (fs.existsSync(marker) && fs.statSync(marker).mtimeMs >= fs.statSync(lock).mtimeMs - 1000) return;
  console.log('Installing dependencies (npm ci)…');
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('npm ci failed; see above.');
    process.exit(r.status ?? 1);
  }
}
