/**
 * Atlas projection benchmark: how long a map's coordinates take to compute (projection +
 * k-means labels, as the job process runs them: server/src/atlas/projection.ts) for 10k and 100k
 * rows — numeric (6 columns, three Gaussian groups, a few missing values) by PCA and by UMAP
 * (fit on a 10,000-row sample above that, the rest placed among their nearest sampled rows), and
 * text (generated notes of 6–12 words from three topics) by TF-IDF + truncated SVD. Also: how
 * well the groups stay apart (nearest-centroid accuracy in 2-D), per-stage times, and the load
 * average before and after each case (the machine may be busy: figures are what this machine did
 * then). Each case runs once (UMAP dominates; about a minute in all on 2 busy cores).
 *
 * Run: npx tsx bench/atlas-projection.ts [--sizes=10000,100000] [--methods=pca,umap,tfidf]
 * Prints figures; asserts nothing.
 */
import os from 'node:os';
import { nearestCentroidAccuracy } from '../server/src/atlas/evaluate.ts';
import { project, type ProjectionInput } from '@plexus/server/atlas/projection';
import { gaussian, seededRandom } from '@plexus/server/atlas/seeded-random';
import { fmt, machine, printTable } from './lib.ts';

const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const SIZES = arg('sizes', '10000,100000').split(',').map(Number);
const METHODS = arg('methods', 'pca,umap,tfidf').split(',') as Array<'pca' | 'umap' | 'tfidf'>;

const TOPICS = [
  ['neuron', 'spike', 'burst', 'firing', 'rate', 'axon', 'synapse', 'potential', 'threshold', 'channel'],
  ['mouse', 'behaviour', 'lever', 'reward', 'trial', 'lick', 'running', 'whisker', 'arena', 'task'],
  ['imaging', 'laser', 'objective', 'galvo', 'frame', 'pixel', 'motion', 'focus', 'power', 'lens'],
];
const FILLER = ['today', 'again', 'new', 'session', 'looks', 'good', 'check', 'later', 'maybe', 'strong'];

function numeric(n: number, seed: number): { input: ProjectionInput; truth: Int32Array } {
  const rand = seededRandom(seed);
  const columns = Array.from({ length: 6 }, () => new Float64Array(n));
  const truth = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const g = i % 3;
    truth[i] = g;
    for (let d = 0; d < 6; d++) columns[d]![i] = i % 997 === d ? NaN : gaussian(rand) + (d === g ? 6 : 0) - (d === g + 3 ? 6 : 0);
  }
  return { input: { method: 'pca', names: ['a', 'b', 'c', 'd', 'e', 'f'], columns }, truth };
}

function texts(n: number, seed: number): { input: ProjectionInput; truth: Int32Array } {
  const rand = seededRandom(seed);
  const pick = (ws: string[]) => ws[Math.floor(rand() * ws.length)]!;
  const truth = new Int32Array(n);
  const out = Array.from({ length: n }, (_, i) => {
    const g = i % 3;
    truth[i] = g;
    const len = 6 + Math.floor(rand() * 7);
    return Array.from({ length: len }, () => (rand() < 0.6 ? pick(TOPICS[g]!) : pick(FILLER))).join(' ');
  });
  return { input: { method: 'tfidf', name: 'note', texts: out }, truth };
}

const accuracy = nearestCentroidAccuracy;

const load = () => os.loadavg()[0]!.toFixed(1);

console.log(`Atlas projection — ${machine()}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
const rows: Array<Array<string | number>> = [];
for (const n of SIZES)
  for (const method of METHODS) {
    const { input, truth } = method === 'tfidf' ? texts(n, 1) : numeric(n, 1);
    const job: ProjectionInput = input.method === 'tfidf' ? input : { ...input, method: method as 'pca' | 'umap' };
    const stages = new Map<string, number>();
    let stage = '';
    let stageStart = 0;
    const loadBefore = load();
    const t0 = performance.now();
    stageStart = t0;
    const p = project(job, {
      seed: 1,
      onProgress: (s) => {
        if (s === stage) return;
        const now = performance.now();
        if (stage) stages.set(stage, (stages.get(stage) ?? 0) + now - stageStart);
        stage = s;
        stageStart = now;
      },
    });
    const total = performance.now() - t0;
    if (stage) stages.set(stage, (stages.get(stage) ?? 0) + performance.now() - stageStart);
    const breakdown = [...stages.entries()].filter(([, ms]) => ms >= 50).map(([s, ms]) => `${s} ${fmt(ms / 1000, 1)}`).join(', ');
    rows.push([method, n.toLocaleString('en-US'), fmt(total / 1000, 2), fmt(accuracy(p.x, p.y, truth, 3), 3), p.labels.length, `${loadBefore} → ${load()}`, breakdown]);
    console.log(`  ${method} ${n}: ${fmt(total / 1000, 2)} s — ${p.how}`);
  }
console.log('');
printTable(['method', 'rows', 'seconds', 'groups apart (NC acc.)', 'clusters', 'load 1-min', 'stages (s)'], rows);
console.log(`\nNC acc.: share of rows nearer their own group's 2-D centroid than another's (1.0 = groups fully apart).`);
