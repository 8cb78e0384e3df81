/**
 * Summarises a V8 .cpuprofile (as written by `node --cpu-prof`): the functions with the most
 * self time and the most inclusive time. Run: npx tsx bench/cpuprofile.ts <file.cpuprofile> [top]
 */
import fs from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileEntry {
  fn: string;
  selfMs: number;
  totalMs: number;
}

function label(n: ProfileNode): string {
  const { functionName, url, lineNumber } = n.callFrame;
  const file = url ? url.replace(/^file:\/\//, '').replace(/.*\/node_modules\//, '~/').replace(/.*\/(server|shared|bench)\/src\//, '$1/src/') : '';
  return `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`.trim();
}

/** Self and inclusive time per function (recursion counted once per sample). */
export function summarizeProfile(file: string): { totalMs: number; entries: ProfileEntry[] } {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let all = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = (p.timeDeltas[i] ?? 0) / 1000;
    all += dt;
    let id: number | undefined = p.samples[i]!;
    const leaf = label(byId.get(id)!);
    self.set(leaf, (self.get(leaf) ?? 0) + dt);
    const seen = new Set<string>();
    while (id !== undefined) {
      const l = label(byId.get(id)!);
      if (!seen.has(l)) {
        seen.add(l);
        total.set(l, (total.get(l) ?? 0) + dt);
      }
      id = parent.get(id);
    }
  }
  const entries = [...total.keys()].map((fn) => ({ fn, selfMs: self.get(fn) ?? 0, totalMs: total.get(fn)! }));
  return { totalMs: all, entries };
}

/** Prints the top functions by self time and (optionally filtered) inclusive time. */
export function printProfile(file: string, top = 15, inclusiveFilter: RegExp = /server\/src|shared\/src|yjs|better-sqlite3|hocuspocus/): void {
  const { totalMs, entries } = summarizeProfile(file);
  console.log(`profile ${path.basename(file)}: ${totalMs.toFixed(0)} ms sampled`);
  console.log('  self time:');
  for (const e of [...entries].sort((a, b) => b.selfMs - a.selfMs).slice(0, top)) console.log(`    ${e.selfMs.toFixed(1).padStart(8)} ms  ${e.fn}`);
  console.log('  inclusive time (server, shared, yjs, sqlite, hocuspocus frames):');
  for (const e of entries.filter((e) => inclusiveFilter.test(e.fn)).sort((a, b) => b.totalMs - a.totalMs).slice(0, top))
    console.log(`    ${e.totalMs.toFixed(1).padStart(8)} ms  ${e.fn}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: npx tsx bench/cpuprofile.ts <file.cpuprofile> [top]');
    process.exit(2);
  }
  printProfile(file, Number(process.argv[3] ?? 15));
}
