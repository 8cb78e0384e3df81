/**
 * The storage worker (compaction and checkpoints off the event loop) runs in a server process
 * started with loaders and preloads. It used to inherit them, fail to load a TypeScript preload and
 * silently hand every compaction back to the event loop — the cause of the typing stalls measured
 * while the agent wrote (performance.md §9).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));

describe('storage worker', () => {
  it('compacts on the worker in a process started with --import tsx and a TypeScript preload', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--import', path.join(here, '../fixtures/typescript-preload.ts'), path.join(here, '../fixtures/store-worker-child.ts')], {
      cwd: path.join(here, '../..'),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.stderr).not.toMatch(/storage worker failed/);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
    expect(out).toEqual({ folded: 50, onWorker: 1, failure: null, log: 0 });
  });
});
