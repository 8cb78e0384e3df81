/**
 * Opening a workspace nobody has open, as a browser does it: `GET …/first-screen` and `GET …/state`
 * (Brotli accepted) at once, the state applied to a fresh Y.Doc, then the socket connected with that
 * document until it has synced (the browser can type then). The opener runs on a worker thread,
 * so that, as with a browser, its apply overlaps with what the server does meanwhile. Times from
 * the first request: first screen and state to the last byte, state applied, socket synced (p50).
 * Three ways, rotated round by round on the same server and the same stored workspace:
 * - now: the first screen remembered at the last unload is sent from memory, and the state straight
 *   from storage (the collected snapshot, persistence `collectedSnapshot`) without waiting for the
 *   load, which starts once it is sent;
 * - load first (§28): the state waits for the document to load, then sends the snapshot it was
 *   loaded from (persistence `onLoadedState`), as the first screen comes from memory;
 * - before (§27): the remembered first screen forgotten, nothing kept: both wait for the load, and
 *   `/state` encodes the loaded document.
 * Before each round the server has unloaded the workspace and folded its log (as an idle workspace
 * is). The server runs in this process (kernel off, as in bench/browser-load.ts: a running kernel
 * keeps the document loaded for minutes) on a fresh data dir, with the notebook of
 * bench/fixtures.ts (20 lines per cell, every fifth markdown).
 *
 *   node --import tsx bench/state-from-idle.ts [--cells=1000,10000] [--rounds=5] [--part-structs=N]
 */
import os from 'node:os';
import path from 'node:path';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import * as Y from 'yjs';
import { loadConfig } from '@plexus/server/config';
import { startServer } from '@plexus/server/app';
import { hocuspocusClient, tmpDir, waitFor } from '@plexus/testkit';
import { unpackStateParts } from '@plexus/shared/state-parts';
import { fillNotebook } from './fixtures.ts';
import { fmt, machine, median, printTable } from './lib.ts';

interface Open {
  url: string;
  id: string;
  token: string;
}
interface Opened {
  first: number;
  state: number;
  applied: number;
  synced: number;
  stateBytes: number;
}

if (!isMainThread) {
  // The opener (a browser's part, without the page).
  parentPort!.on('message', async ({ url, id, token }: Open) => {
    const headers = { authorization: `Bearer ${token}`, 'accept-encoding': 'br' };
    const t0 = performance.now();
    const first = fetch(`${url}/api/workspaces/${id}/first-screen`, { headers }).then(async (r) => (await r.text(), performance.now() - t0));
    const r = await fetch(`${url}/api/workspaces/${id}/state`, { headers });
    const bytes = new Uint8Array(await r.arrayBuffer());
    const state = performance.now() - t0;
    const doc = new Y.Doc();
    doc.transact(() => unpackStateParts(bytes).forEach((u) => Y.applyUpdate(doc, u))); // a large one comes as its stored parts
    const applied = performance.now() - t0;
    const c = hocuspocusClient(url, id, token, { doc });
    await c.synced;
    const synced = performance.now() - t0;
    c.destroy();
    parentPort!.postMessage({ first: await first, state, applied, synced, stateBytes: bytes.byteLength } satisfies Opened);
  });
} else {
  const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
  const SIZES = arg('cells', '1000,10000').split(',').map(Number);
  const ROUNDS = Number(arg('rounds', '5'));
  // The server's `snapshotPartStructs` (store/split-state.mjs; 0: snapshots stored whole, as before §41).
  const PART_STRUCTS = arg('part-structs', '') === '' ? undefined : Number(arg('part-structs', ''));

  const dir = tmpDir('plexus-bench-state-idle-');
  const server = await startServer(
    loadConfig({ PLEXUS_LOG_LEVEL: 'warn' } as NodeJS.ProcessEnv, { port: 0, host: '127.0.0.1', dataDir: dir, seedDemo: false, kernel: false, secret: 'bench-state-idle-secret-0123456789', clientDir: path.join(dir, 'no-client'), ...(PART_STRUCTS === undefined ? {} : { snapshotPartStructs: PART_STRUCTS }) }),
  );
  const p = server.persistence;
  const keep = p.onLoadedState;
  const stored = p.collectedSnapshot.bind(p);
  const none = async () => null;
  const ways = [
    { name: 'now', hook: keep, stored, forget: false },
    { name: 'load first (§28)', hook: keep, stored: none, forget: false },
    { name: 'before (§27)', hook: null, stored: none, forget: true },
  ];
  // This file again, on a worker thread, with tsx registered there too.
  const opener = new Worker(`import('tsx/esm/api').then((m) => (m.register(), import(${JSON.stringify(import.meta.url)})));`, { eval: true });
  let answer: { resolve: (o: Opened) => void; reject: (e: Error) => void } | null = null;
  opener.on('message', (o: Opened) => answer?.resolve(o));
  opener.on('error', (e) => answer?.reject(e));
  const open = (id: string) =>
    new Promise<Opened>((resolve, reject) => {
      answer = { resolve, reject };
      opener.postMessage({ url: server.url, id, token: server.ownerToken } satisfies Open);
    });

  console.log(`Opening an idle workspace${PART_STRUCTS === undefined ? '' : ` (snapshotPartStructs ${PART_STRUCTS})`} — ${machine()}; ${ROUNDS} rounds, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  try {
    for (const cells of SIZES) {
      const id = (await server.workspaces.create({ name: `Idle ${cells}`, fill: (doc) => fillNotebook(doc, cells, 20, 5) })).id;
      const results = ways.map(() => [] as Opened[]);
      for (let r = 0; r <= ROUNDS; r++) {
        for (let k = 0; k < ways.length; k++) {
          const i = (k + r) % ways.length; // each way goes first, second, third in turn
          await waitFor(async () => !server.hocuspocus.documents.has(id) && p.unloadFoldsRunning === 0 && (await server.store.loadParts(id)).entries.length === 0, { timeout: 120_000, interval: 50, message: 'unloaded, log folded' });
          p.onLoadedState = ways[i]!.hook;
          p.collectedSnapshot = ways[i]!.stored;
          if (ways[i]!.forget) server.openingReads.forget(id);
          const opened = await open(id);
          if (r > 0) results[i]!.push(opened); // round 0 warms up (compiles the paths)
        }
      }
      p.onLoadedState = keep;
      p.collectedSnapshot = stored;
      const col = (xs: Opened[], k: keyof Opened) => `${fmt(median(xs.map((x) => x[k])), 0)} (${fmt(Math.max(...xs.map((x) => x[k])), 0)})`;
      console.log(`\n${cells} cells — ms from the first request, p50 (max) over ${ROUNDS} rounds`);
      printTable(
        ['way', 'first screen', 'state', 'applied', 'socket synced', 'state (decoded)'],
        ways.map((w, i) => [w.name, col(results[i]!, 'first'), col(results[i]!, 'state'), col(results[i]!, 'applied'), col(results[i]!, 'synced'), `${fmt(results[i]![0]!.stateBytes / 1024 / 1024, 2)} MiB`]),
      );
      const ratio = (k: keyof Opened, j: number) => fmt(median(results[0]!.map((x) => x[k])) / median(results[j]!.map((x) => x[k])), 2);
      console.log(`now / load first: state ${ratio('state', 1)}×, synced ${ratio('synced', 1)}×; now / before: first screen ${ratio('first', 2)}×, synced ${ratio('synced', 2)}×`);
    }
  } finally {
    await opener.terminate();
    await server.close();
  }
  console.log(`load average at end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
}
