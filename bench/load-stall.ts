/**
 * What everyone else on a node feels while someone opens a large idle workspace (speed issue, gaps 1
 * and 3): the server loads the stored document on its event loop. Stored whole, that is one Yjs
 * call over the whole document (10,000 cells: 1–2 s on 2 cores), during which no keystroke of any
 * workspace is relayed; stored in parts (store/split-state.mjs), the load applies a part per turn
 * of the event loop.
 *
 * Two servers in this process, on their own data dirs, kernel off (a running kernel keeps
 * documents loaded): `parts` as shipped, `whole` with `snapshotPartStructs: 0` (every snapshot
 * stored whole, as before). Each holds the same large notebook (bench/fixtures.ts: 20 lines per
 * cell, every fifth markdown), idle: unloaded, stored as that server stores it. Per round, on one
 * server then the other (the order alternates): in a small workspace a typist types a key every
 * 20 ms and another client sees it (both on a worker thread: their clocks keep running while the
 * server's loop is held); a second worker opens the large workspace as a browser does — first
 * screen and state over HTTP, the state applied, then the socket until synced (`--socket-only`:
 * the socket alone, as a stock Yjs client) — and then leaves. Reported per server: keystroke latency (typist → other client) while the large
 * workspace opens — p50, p99, max, and how many took over 50 ms — the longest pause of the server's
 * event loop then (`monitorEventLoopDelay`), and the opener's time to a synced document.
 *
 *   node --import tsx bench/load-stall.ts [--cells=1000,10000] [--rounds=5] [--socket-only] [--part-structs=N] [--storage=postgres] [--unchecked]
 * (`--part-structs`: the parts server's `snapshotPartStructs`, default as shipped; `--storage=postgres`:
 * both servers store in Postgres — a cluster started here, a database each — as several nodes do;
 * `--unchecked`: each round the large workspace has a log entry on top of its snapshot, so its load
 * checks the document against the schema, as the first load after a restart does, and the state
 * the opener fetches is encoded from the loaded document (no checked snapshot alone to send) — and
 * a third server, `parts, check and state in one turn` (`loadCheckStep: 0`, `openingPartStructs: 0`),
 * does both in one turn, as before; `whole` then does too.)
 */
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { PlexusServer } from '@plexus/server/app';
import { createCell, insertCellText, listCells, userOrigin } from '@plexus/shared';
import { hocuspocusClient, waitFor } from '@plexus/testkit';
import * as Y from 'yjs';
import { unpackStateParts } from '@plexus/shared/state-parts';
import { fillNotebook } from './fixtures.ts';
import { answerTypist, arg, startNode, storageFromArgs, type TypistMsg } from './elsewhere.ts';
import { fmt, machine, median, pct, printTable } from './lib.ts';

type Msg = TypistMsg | { type: 'open'; url: string; id: string; token: string };

if (!isMainThread) {
  const role = workerData.role as 'typist' | 'opener';
  parentPort!.on('message', async (m: Msg) => {
    if (m.type === 'open') {
      // The opener, as a browser opens a workspace (bench/state-from-idle.ts): the first screen and
      // the whole state over HTTP at once, the state applied, then the socket with that document
      // until it has synced; then it leaves. `--socket-only`: the socket alone (a stock client).
      const t0 = performance.now();
      const doc = new Y.Doc();
      if (!workerData.socketOnly) {
        const headers = { authorization: `Bearer ${m.token}`, 'accept-encoding': 'br' };
        const first = fetch(`${m.url}/api/workspaces/${m.id}/first-screen`, { headers }).then((r) => r.text());
        const bytes = new Uint8Array(await (await fetch(`${m.url}/api/workspaces/${m.id}/state`, { headers })).arrayBuffer());
        doc.transact(() => unpackStateParts(bytes).forEach((u) => Y.applyUpdate(doc, u)));
        await first;
      }
      const c = hocuspocusClient(m.url, m.id, m.token, { doc });
      await c.synced;
      const ms = performance.now() - t0;
      const cells = listCells(c.doc).length;
      c.destroy();
      parentPort!.postMessage({ ms, cells });
    } else if (role === 'typist') await answerTypist(m as TypistMsg, (a) => parentPort!.postMessage(a));
  });
} else {
  const SIZES = arg('cells', '1000,10000').split(',').map(Number);
  const ROUNDS = Number(arg('rounds', '5'));
  const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

  const SOCKET_ONLY = process.argv.includes('--socket-only');
  const UNCHECKED = process.argv.includes('--unchecked');
  const PART_STRUCTS = arg('part-structs', '') ? Number(arg('part-structs', '')) : undefined;
  const { storage: STORAGE, postgres } = await storageFromArgs();
  let databases = 0;
  const worker = (role: string) => new Worker(`import('tsx/esm/api').then((m) => (m.register(), import(${JSON.stringify(import.meta.url)})));`, { eval: true, workerData: { role, socketOnly: SOCKET_ONLY } });
  const typist = worker('typist');
  const opener = worker('opener');
  let failed: Error | null = null;
  for (const w of [typist, opener]) w.on('error', (e) => (failed = e));
  const ask = <T>(w: Worker, m: Msg) =>
    new Promise<T>((resolve, reject) => {
      if (failed) return reject(failed);
      w.once('message', resolve);
      w.postMessage(m);
    });
  const start = async (partStructs: number | undefined, inOneTurn = false) =>
    startNode('load-stall', {
      ...(partStructs === undefined ? {} : { snapshotPartStructs: partStructs }),
      ...(inOneTurn ? { loadCheckStep: 0, openingPartStructs: 0 } : {}),
      ...(postgres ? { databaseUrl: await postgres.createDatabase(`load_stall_${databases++}`) } : {}),
    });
  const servers: Array<{ name: string; server: PlexusServer; whole?: boolean }> = [
    { name: 'parts (now)', server: await start(PART_STRUCTS) },
    { name: 'whole (before)', server: await start(0, UNCHECKED), whole: true },
    ...(UNCHECKED ? [{ name: 'parts, check and state in one turn', server: await start(PART_STRUCTS, true) }] : []),
  ];
  console.log(`Opening a large idle workspace beside a typist (opened ${SOCKET_ONLY ? 'by a socket alone' : 'as a browser does'}; stored in ${STORAGE}) — ${machine()}; ${ROUNDS} rounds, load average ${load()}`);
  const delay = monitorEventLoopDelay({ resolution: 1 });
  try {
    for (const cells of SIZES) {
      const ids: string[] = [];
      const small: string[] = [];
      const notebook = new Y.Doc();
      fillNotebook(notebook, cells, 20, 5);
      const state = Y.encodeStateAsUpdate(notebook);
      // `--unchecked`: a key typed into the first code cell, stored as a log entry on top of the snapshot.
      const typedOnTop = (() => {
        const before = Y.encodeStateVector(notebook);
        insertCellText(notebook, listCells(notebook).find((c) => c.kind === 'code')!.id, 0, 'k', userOrigin('bench'));
        return Y.encodeStateAsUpdate(notebook, before);
      })();
      for (const { server } of servers) {
        ids.push((await server.workspaces.create({ name: `Large ${cells}`, fill: (doc) => Y.applyUpdate(doc, state) })).id);
        small.push((await server.workspaces.create({ name: 'Typing', fill: (doc) => void createCell(doc, { kind: 'code', source: '// typing here', author: 'bench' }, userOrigin('bench')) })).id);
      }
      const results = servers.map(() => ({ lat: [] as number[], over50: 0, pause: [] as number[], open: [] as number[], parts: 0 }));
      for (let r = 0; r <= ROUNDS; r++) {
        for (let k = 0; k < servers.length; k++) {
          const i = (k + r) % servers.length;
          const { server } = servers[i]!;
          const id = ids[i]!;
          // Idle: unloaded, and stored as this server stores it (parts: cut by its storage worker;
          // on Postgres by a fold, which cuts a snapshot stored whole even with no log to fold).
          if (postgres && !server.hocuspocus.documents.has(id)) await server.store.compactInBackground(id);
          await waitFor(
            async () => {
              if (server.hocuspocus.documents.has(id) || server.persistence.unloadFoldsRunning) return false;
              const parts = await server.store.loadParts(id);
              return parts.entries.length === 0 && (servers[i]!.whole || parts.snapshot!.length > 1);
            },
            { timeout: 300_000, interval: 100, message: 'idle and stored' },
          );
          results[i]!.parts = (await server.store.loadParts(id)).snapshot!.length;
          if (UNCHECKED) await server.store.append(id, typedOnTop);
          await ask(typist, { type: 'start', url: server.url, id: small[i]!, token: server.ownerToken });
          // Enabled ahead: the monitor measures a pause from its last tick, and a pause before its first is lost.
          delay.enable();
          await new Promise((resolve) => setTimeout(resolve, 300)); // typing before the open
          delay.reset();
          const opened = await ask<{ ms: number; cells: number }>(opener, { type: 'open', url: server.url, id, token: server.ownerToken });
          delay.disable();
          await new Promise((resolve) => setTimeout(resolve, 100));
          const { latencies } = await ask<{ latencies: number[] }>(typist, { type: 'stop' });
          if (opened.cells !== cells) throw new Error(`opened ${opened.cells} cells, expected ${cells}`);
          if (r === 0) continue; // round 0 warms up (compiles the paths)
          results[i]!.lat.push(...latencies);
          results[i]!.over50 += latencies.filter((l) => l > 50).length;
          results[i]!.pause.push(delay.max / 1e6);
          results[i]!.open.push(opened.ms);
        }
      }
      console.log(`\n${cells} cells — keystrokes of a typist in another workspace while it opens (${ROUNDS} rounds)`);
      printTable(
        ['stored', 'parts', 'keys', 'p50 ms', 'p99 ms', 'max ms', 'keys > 50 ms', 'longest loop pause ms (p50 / max of rounds)', 'opened in ms (p50)'],
        servers.map((s, i) => {
          const x = results[i]!;
          const sorted = [...x.lat].sort((a, b) => a - b);
          return [s.name, x.parts, x.lat.length, fmt(pct(sorted, 50), 1), fmt(pct(sorted, 99), 1), fmt(sorted.at(-1)!, 1), x.over50, `${fmt(median(x.pause), 1)} / ${fmt(Math.max(...x.pause), 1)}`, fmt(median(x.open), 0)];
        }),
      );
      const now = results[0]!;
      for (let j = 1; j < servers.length; j++) {
        const other = results[j]!;
        console.log(`${servers[0]!.name} / ${servers[j]!.name}: longest pause ${fmt(median(now.pause) / median(other.pause), 2)}×, max keystroke ${fmt(Math.max(...now.lat) / Math.max(...other.lat), 2)}×, opening ${fmt(median(now.open) / median(other.open), 2)}×`);
      }
    }
  } finally {
    await typist.terminate();
    await opener.terminate();
    for (const { server } of servers) await server.close();
    await postgres?.destroy();
  }
  console.log(`load average at end ${load()}`);
}
