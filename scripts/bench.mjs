// `npm run bench`: runs every benchmark (bench/run-all.ts) and prints their figures.
// Extra arguments are passed on, e.g. `npm run bench -- --only=latency,memory`.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const r = spawnSync('npx', ['tsx', 'bench/run-all.ts', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
