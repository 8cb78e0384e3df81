/**
 * What checking a JSON value costs the document schema (every run output the kernel writes, every
 * viewer property, imported notebook metadata), side by side in one run: zod's `z.json()` (a union
 * of six schemas tried per value, as the schema used before) against `isJson` (shared/json.ts, as
 * the schema uses now), on values like those the document holds: a finished SQL run with its
 * table output at 1, 10 and 100 rows of 5 columns, a chart's data, a Neuroglancer layer's
 * properties. The two alternate per batch so both see the same machine state.
 * Run: npx tsx bench/json-check.ts [--rounds=15]. Prints figures; asserts nothing.
 */
import os from 'node:os';
import { z } from 'zod';
import { isJson } from '@plexus/shared';

const ROUNDS = Number(process.argv.find((a) => a.startsWith('--rounds='))?.split('=')[1] ?? 15);
const zodJson = z.json();

const tableRun = (rows: number) => ({
  runId: 'r_k3x9', state: 'done', trigger: 'upstream', count: 12, generation: 1, startedAt: 1.7e12, endedAt: 1.7e12 + 3, durationMs: 0.7,
  sourceHash: 'a1b2c3d4e5f60718', source: 'SELECT * FROM t', defines: ['q'],
  outputs: [{
    type: 'table', name: 'q', totalRows: rows, truncated: false,
    columns: ['id', 'cell', 'dff', 'label', 'ok'].map((name, i) => ({ name, type: ['INTEGER', 'VARCHAR', 'DOUBLE', 'VARCHAR', 'BOOLEAN'][i] })),
    rows: Array.from({ length: rows }, (_, i) => ({ id: i, cell: `roi_${i}`, dff: Math.sin(i) * 0.3, label: i % 3 ? 'active' : 'quiet', ok: i % 2 === 0 })),
  }],
});
const chart = { type: 'chart', spec: { mark: 'line', encoding: { x: { field: 't', type: 'quantitative' }, y: { field: 'dff', type: 'quantitative' } } }, data: Array.from({ length: 500 }, (_, i) => ({ t: i / 30, dff: Math.cos(i / 10) })) };
const layer = { type: 'image', source: 'precomputed://volumes/demo', tab: 'rendering', opacity: 0.8, blend: 'additive', shader: '#uicontrol vec3 color color(default="green")\nvoid main() {}', shaderControls: { color: '#00ff00', normalized: { range: [0, 255] } }, crossSectionRenderScale: 1, visible: true };

const cases: Array<[string, unknown, number]> = [
  ['SQL run, 1 row', tableRun(1), 2000],
  ['SQL run, 10 rows', tableRun(10), 1000],
  ['SQL run, 100 rows', tableRun(100), 200],
  ['chart, 500 points', chart, 200],
  ['viewer layer', layer, 2000],
];

const timeIt = (f: () => boolean, n: number) => {
  const t = performance.now();
  for (let i = 0; i < n; i++) if (!f()) throw new Error('not JSON?');
  return ((performance.now() - t) / n) * 1000;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

console.log(`JSON value checks, ${ROUNDS} rounds, node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model}); load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log('case                 z.json() µs   isJson µs   isJson / z.json()');
for (const [name, value, n] of cases) {
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < ROUNDS + 2; r++) {
    const first = r % 2 === 0;
    const x = first ? timeIt(() => zodJson.safeParse(value).success, n) : 0;
    const y = timeIt(() => isJson(value), n);
    const x2 = first ? x : timeIt(() => zodJson.safeParse(value).success, n);
    if (r < 2) continue; // warm-up
    a.push(x2);
    b.push(y);
  }
  console.log(`${name.padEnd(20)} ${median(a).toFixed(2).padStart(11)}  ${median(b).toFixed(2).padStart(10)}   ${(median(b) / median(a)).toFixed(3).padStart(17)}`);
}
console.log(`load average at end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
