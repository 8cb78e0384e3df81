/**
 * What everyone on a node feels when one open workspace needs a validation replica (speed issue,
 * gap 1; collab/shadow.ts): an update the pre-check cannot decide — here one that breaks the
 * document schema, as a broken or hostile client sends, and sends again each time it reconnects —
 * is decided on a replica of the document, built for it and dropped after a refusal. Built in one
 * turn (the whole state encoded and applied), a 10,000-cell workspace held the event loop, and so
 * every workspace of the node, for about half a second per refusal; built a part per turn, only
 * the cut into parts is one turn. On Postgres (every update decided on the replica) the refusal
 * itself is decided at once and the rebuild comes with the next update of that workspace.
 *
 * Two servers in this process, on their own data dirs, kernel off: `in parts (now)` as shipped and
 * `one turn (before)` with `replicaPartStructs: 0`. Each holds the same large notebook
 * (bench/fixtures.ts), open (a client holds it). Per round, on one server then the other (the
 * order alternates): a typist in a small workspace types a key every 20 ms and another client sees
 * it (both on a worker thread, their clocks running while the server's loop is held); a client
 * that has the large document sends an update adding a root the schema does not have (refused:
 * 4423, its socket closed), then the client holding the workspace types one key there (accepted,
 * and stored). Reported per server: keystroke latency in the small workspace meanwhile — p50, p99,
 * max, how many over 50 ms — the longest pause of the server's event loop (`monitorEventLoopDelay`),
 * and how long the refusal and the next key of the large workspace took.
 *
 *   node --import tsx bench/replica-stall.ts [--cells=1000,10000] [--rounds=5] [--storage=postgres]
 */
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import type { PlexusServer } from '@plexus/server/app';
import { createCell, insertCellText, cellSource, getCell, listCells, userOrigin } from '@plexus/shared';
import { hocuspocusClient, hpUpdate, rawHocuspocus, waitFor } from '@plexus/testkit';
import * as Y from 'yjs';
import { fillNotebook } from './fixtures.ts';
import { answerTypist, arg, startNode, storageFromArgs, type TypistMsg } from './elsewhere.ts';
import { fmt, machine, median, pct, printTable } from './lib.ts';

type Msg = TypistMsg;

if (!isMainThread) {
  parentPort!.on('message', (m: Msg) => answerTypist(m, (a) => parentPort!.postMessage(a)));
} else {
  const SIZES = arg('cells', '1000,10000').split(',').map(Number);
  const ROUNDS = Number(arg('rounds', '5'));
  const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
  const { storage: STORAGE, postgres } = await storageFromArgs();
  let databases = 0;
  const typist = new Worker(`import('tsx/esm/api').then((m) => (m.register(), import(${JSON.stringify(import.meta.url)})));`, { eval: true });
  let failed: Error | null = null;
  typist.on('error', (e) => (failed = e));
  const ask = <T>(m: Msg) =>
    new Promise<T>((resolve, reject) => {
      if (failed) return reject(failed);
      typist.once('message', resolve);
      typist.postMessage(m);
    });
  const start = async (replicaPartStructs: number | undefined) =>
    startNode('replica-stall', {
      ...(replicaPartStructs === undefined ? {} : { replicaPartStructs }),
      ...(postgres ? { databaseUrl: await postgres.createDatabase(`replica_stall_${databases++}`) } : {}),
    });
  const servers: Array<{ name: string; server: PlexusServer }> = [
    { name: 'in parts (now)', server: await start(undefined) },
    { name: 'one turn (before)', server: await start(0) },
  ];
  console.log(`A refused update in a large open workspace, beside a typist in another (stored in ${STORAGE}) — ${machine()}; ${ROUNDS} rounds, load average ${load()}`);
  const delay = monitorEventLoopDelay({ resolution: 1 });
  try {
    for (const cells of SIZES) {
      const notebook = new Y.Doc();
      fillNotebook(notebook, cells, 20, 5);
      const state = Y.encodeStateAsUpdate(notebook);
      const setups = [];
      for (const { server } of servers) {
        const id = (await server.workspaces.create({ name: `Large ${cells}`, fill: (doc) => Y.applyUpdate(doc, state) })).id;
        const small = (await server.workspaces.create({ name: 'Typing', fill: (doc) => void createCell(doc, { kind: 'code', source: '// typing here', author: 'bench' }, userOrigin('bench')) })).id;
        // Whoever holds the large workspace open (and types one key into it after each refusal).
        const holder = hocuspocusClient(server.url, id, server.ownerToken, { doc: (() => { const d = new Y.Doc(); Y.applyUpdate(d, state); return d; })() });
        await holder.synced;
        setups.push({ id, small, holder });
      }
      const results = servers.map(() => ({ lat: [] as number[], over50: 0, pause: [] as number[], refusal: [] as number[], next: [] as number[] }));
      for (let r = 0; r <= ROUNDS; r++) {
        for (let k = 0; k < servers.length; k++) {
          const i = (k + r) % servers.length;
          const { server } = servers[i]!;
          const { id, small, holder } = setups[i]!;
          const live = server.hocuspocus.documents.get(id)!;
          // A client with the document (its state vector: the server sends it nothing back).
          const mallory = await rawHocuspocus(server.url, id, server.ownerToken, { stateVector: Y.encodeStateVector(live) });
          await mallory.roundTrip();
          const bad = new Y.Doc();
          bad.getMap('not-a-root').set('x', r);
          await ask({ type: 'start', url: server.url, id: small, token: server.ownerToken });
          // Enabled ahead: the monitor measures a pause from its last tick, and a pause before its first is lost.
          delay.enable();
          await new Promise((resolve) => setTimeout(resolve, 300)); // typing before
          delay.reset();
          let t0 = performance.now();
          mallory.send(hpUpdate(id, Y.encodeStateAsUpdate(bad)));
          const closed = await mallory.closed;
          const refusal = performance.now() - t0;
          if (closed.code !== 4423) throw new Error(`the bad update was not refused as a schema violation: ${JSON.stringify(closed)}`);
          const cell = listCells(holder.doc).find((c) => c.kind === 'code')!.id;
          const before = cellSource(getCell(live, cell)!).length;
          t0 = performance.now();
          insertCellText(holder.doc, cell, 0, 'k', userOrigin('holder'));
          await waitFor(() => cellSource(getCell(live, cell)!).length > before, { interval: 1, timeout: 30_000, message: 'the next key reached the server' });
          const next = performance.now() - t0;
          await new Promise((resolve) => setTimeout(resolve, 100));
          delay.disable();
          const { latencies } = await ask<{ latencies: number[] }>({ type: 'stop' });
          if (r === 0) continue; // round 0 warms up (compiles the paths)
          results[i]!.lat.push(...latencies);
          results[i]!.over50 += latencies.filter((l) => l > 50).length;
          results[i]!.pause.push(delay.max / 1e6);
          results[i]!.refusal.push(refusal);
          results[i]!.next.push(next);
        }
      }
      console.log(`\n${cells} cells — keystrokes of a typist in another workspace while an update is refused in the large one (${ROUNDS} rounds)`);
      printTable(
        ['replica built', 'keys', 'p50 ms', 'p99 ms', 'max ms', 'keys > 50 ms', 'longest loop pause ms (p50 / max of rounds)', 'refused in ms (p50)', 'next key stored in ms (p50)'],
        servers.map((s, i) => {
          const x = results[i]!;
          const sorted = [...x.lat].sort((a, b) => a - b);
          return [s.name, x.lat.length, fmt(pct(sorted, 50), 1), fmt(pct(sorted, 99), 1), fmt(sorted.at(-1)!, 1), x.over50, `${fmt(median(x.pause), 1)} / ${fmt(Math.max(...x.pause), 1)}`, fmt(median(x.refusal), 1), fmt(median(x.next), 1)];
        }),
      );
      const [now, before] = results;
      console.log(`now / before: longest pause ${fmt(median(now!.pause) / median(before!.pause), 2)}×, max keystroke ${fmt(Math.max(...now!.lat) / Math.max(...before!.lat), 2)}×, refusal ${fmt(median(now!.refusal) / median(before!.refusal), 2)}×, next key ${fmt(median(now!.next) / median(before!.next), 2)}×`);
      for (const s of setups) s.holder.destroy();
    }
  } finally {
    await typist.terminate();
    for (const { server } of servers) await server.close();
    await postgres?.destroy();
  }
  console.log(`load average at end ${load()}`);
}
