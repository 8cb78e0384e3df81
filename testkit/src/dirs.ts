/** The repository root and temporary directories. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The repository's root directory. */
export const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

/** A fresh temporary directory (not removed: see `tempDirs` for ones removed together). */
export function tmpDir(prefix = 'plexus-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Temporary directories for a test file, all removed by `cleanup` (call it in afterAll). */
export function tempDirs(prefix: string): { make: () => string; cleanup: () => void } {
  const made: string[] = [];
  return {
    make: () => {
      const d = tmpDir(prefix);
      made.push(d);
      return d;
    },
    cleanup: () => made.forEach((d) => fs.rmSync(d, { recursive: true, force: true })),
  };
}
