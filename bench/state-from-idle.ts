/**
 * Opening a workspace nobody has open (the server loads it from storage first), as a browser asks
 * for it: `GET …/first-screen` and `GET …/state` (Brotli accepted) at once, timed to the last byte
 * of each. Two ways, alternating round by round on the same server and the same stored workspace:
 * - now: the first screen remembered at the last unload is sent from memory without waiting for
 *   the load, and a document loaded from a stored snapshot alone keeps that snapshot as its encoded
 *   state (persistence `onLoadedState` → opening-reads `keepLoaded`), so `/state` sends it without
 *   encoding the document again;
 * - before: the remembered first screen forgotten and the hook unset: both wait for the load, and
 *   `/state` encodes the loaded document.
 * Before each round the server has unloaded the workspace and folded its log (as an idle
 * workspace is). In this process: an in-process server on a fresh data dir (kernel off, as in
 * bench/browser-load.ts: a running kernel keeps the document loaded for minutes), the notebook
 * from bench/fixtures.ts (20 lines per cell, every fifth markdown), a new connection per request.
 *
 *   node --import tsx bench/state-from-idle.ts [--cells=1000,10000] [--rounds=5]
 */
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '@plexus/server/config';
import { startServer } from '@plexus/server/app';
import { tmpDir, waitFor } from '@plexus/testkit';
import { fillNotebook } from './fixtures.ts';
import { fmt, machine, median, printTable } from './lib.ts';

const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const SIZES = arg('cells', '1000,10000').split(',').map(Number);
const ROUNDS = Number(arg('rounds', '5'));

const dir = tmpDir('plexus-bench-state-idle-');
const server = await startServer(
  loadConfig({ PLEXUS_LOG_LEVEL: 'warn' } as NodeJS.ProcessEnv, { port: 0, host: '127.0.0.1', dataDir: dir, seedDemo: false, kernel: false, secret: 'bench-state-idle-secret-0123456789', clientDir: path.join(dir, 'no-client') }),
);
const keep = server.persistence.onLoadedState;
const ways = [
  { name: 'now', hook: keep, forget: false },
  { name: 'before', hook: null, forget: true },
];

/** Milliseconds to the last byte of GET `p`, and the bytes received (as sent). */
function timedGet(p: string): Promise<{ ms: number; bytes: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(`${server.url}${p}`, { agent: false, headers: { authorization: `Bearer ${server.ownerToken}`, 'accept-encoding': 'br, gzip' } }, (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => void (bytes += c.byteLength));
        res.on('end', () => (res.statusCode === 200 ? resolve({ ms: performance.now() - t0, bytes }) : reject(new Error(`${p}: HTTP ${res.statusCode}`))));
      })
      .on('error', reject);
  });
}

console.log(`State from an idle server — ${machine()}; ${ROUNDS} rounds, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
try {
  for (const cells of SIZES) {
    const id = (await server.workspaces.create({ name: `Idle ${cells}`, fill: (doc) => fillNotebook(doc, cells, 20, 5) })).id;
    const results = ways.map(() => ({ state: [] as number[], first: [] as number[], bytes: 0 }));
    for (let r = 0; r <= ROUNDS; r++) {
      const order = r % 2 ? [1, 0] : [0, 1];
      for (const i of order) {
        await waitFor(async () => !server.hocuspocus.documents.has(id) && (await server.store.loadParts(id)).entries.length === 0, { timeout: 120_000, interval: 50, message: 'unloaded, log folded' });
        server.persistence.onLoadedState = ways[i]!.hook;
        if (ways[i]!.forget) server.openingReads.forget(id);
        const [first, state] = await Promise.all([timedGet(`/api/workspaces/${id}/first-screen`), timedGet(`/api/workspaces/${id}/state`)]);
        if (r === 0) continue; // warm-up round (compiles the paths)
        results[i]!.state.push(state.ms);
        results[i]!.first.push(first.ms);
        results[i]!.bytes = state.bytes;
      }
    }
    server.persistence.onLoadedState = keep;
    console.log(`\n${cells} cells — ms to the last byte, p50 (max) over ${ROUNDS} rounds`);
    printTable(
      ['way', 'first screen', 'state', 'state bytes sent'],
      ways.map((w, i) => [w.name, `${fmt(median(results[i]!.first), 0)} (${fmt(Math.max(...results[i]!.first), 0)})`, `${fmt(median(results[i]!.state), 0)} (${fmt(Math.max(...results[i]!.state), 0)})`, `${fmt(results[i]!.bytes / 1024 / 1024, 2)} MiB`]),
    );
    console.log(`now / before: first screen ${fmt(median(results[0]!.first) / median(results[1]!.first), 2)}×, state ${fmt(median(results[0]!.state) / median(results[1]!.state), 2)}×`);
  }
} finally {
  await server.close();
}
console.log(`load average at end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
