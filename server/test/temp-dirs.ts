/** Temporary directories for a test file, all removed by `cleanup` (call it in afterAll). Not a test file. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function tempDirs(prefix: string): { make: () => string; cleanup: () => void } {
  const made: string[] = [];
  return {
    make: () => {
      const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
      made.push(d);
      return d;
    },
    cleanup: () => made.forEach((d) => fs.rmSync(d, { recursive: true, force: true })),
  };
}
