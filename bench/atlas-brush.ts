/// <reference lib="dom" />
/**
 * Atlas brush → dependent SQL cell in another browser: Alice brushes a rectangle with the mouse
 * on a shared map in her Chromium (the Rectangle tool, a real drag); the time is taken from the
 * release of the mouse button until Bob's Chromium shows the new output of the SQL cell
 * `SELECT count(*) AS n FROM <map>_selection` (in his DOM). Real server (kernel on: it writes the
 * selection table and re-runs the cell), the production client bundle, two browser contexts.
 * The map has `--points` uniform points (x, y in the unit square; 200,000 by default) and each
 * brush selects about `--fraction` of them (0.5: ~100,000 rows), a little more or less each time
 * so that every brush changes the count.
 *
 * Phases, all on this machine's clock (epoch ms with a fraction in the pages, `Date.now()` in the
 * server and kernel): release (Alice's mouseup event) → the selection written in Alice's document
 * (after her panel and the library have handled the release) → the selection in Bob's document → the
 * selection table registered (the server's timestamp in the registry) → the cell's run started /
 * ended (the kernel's exec record) → the table registry change seen by Bob → the output in Bob's
 * DOM. Bob's panel also counts the selection itself (`data-count`): it must equal the output.
 *
 * Run: npm run build -w client && node --import tsx bench/atlas-brush.ts [--brushes=24] [--warmup=2] [--points=200000] [--fraction=0.5]
 * Prints figures; asserts nothing (a count that differs is reported).
 */
import fs from 'node:fs';
import { createCell, getAtlasMap, readCellRun, requestRun, type ExecInfo } from '@plexus/shared';
import { benchOrigin, benchPerson, makeMap, openAtlas, pointsCsv, uploadCsv, type AtlasWindow } from './atlas-setup.ts';
import { clientDir, launchChromium, openWorkspacePage, outputShown, webglRenderer } from './browser.ts';
import { connectClient, createWorkspace, fmt, machine, printTable, sleep, spawnServer, summarize, until } from './lib.ts';

const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const BRUSHES = Number(arg('brushes', '24'));
const WARMUP = Number(arg('warmup', '2'));
const POINTS = Number(arg('points', '200000'));
const FRACTION = Number(arg('fraction', '0.5'));
const QUIET_MS = 300;
const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').trim();

/** What Bob's page saw after a brush (epoch ms). */
interface Seen {
  selection: number;
  registry: number;
  /** The registry entry's `created` (the server's clock). */
  registered: number;
}

async function main(): Promise<void> {
  console.log(`Atlas brush → SQL cell output in another browser — ${machine()}\nload average at start: ${loadavg()}`);
  const server = await spawnServer('plexus', { env: { PLEXUS_CLIENT_DIR: clientDir(), PLEXUS_JOB_NICE: '0' } });
  const browser = await launchChromium();
  const rows: Record<string, number[]> = { written: [], selection: [], registered: [], runStarted: [], runEnded: [], registry: [], output: [] };
  const counts: number[] = [];
  const mismatches: string[] = [];
  try {
    const ws = await createWorkspace(server, 'atlas brush');
    const a = connectClient(server.url, ws, server.token);
    await a.synced;
    await uploadCsv(server, ws, a.doc, 'brush', pointsCsv(POINTS, 0));
    const map = await makeMap(a.doc, { table: 'brush', method: 'columns', columns: ['x', 'y'] });
    const selTable = `${map.coords.table}_selection`;
    const cellId = createCell(a.doc, { kind: 'sql', author: benchPerson.id, name: 'picked', source: `SELECT count(*) AS n FROM ${selTable}` }, benchOrigin);
    const exec = (): ExecInfo | null => readCellRun(a.doc, cellId)?.exec ?? null;
    requestRun(a.doc, cellId, benchPerson, benchOrigin);
    await until(() => exec()?.state === 'done', 120_000, 20, 'the first run of the SQL cell');

    const alice = await openWorkspacePage(browser, server.url, ws, server.token, { id: 'u_alice', name: 'Alice' });
    const bob = await openWorkspacePage(browser, server.url, ws, server.token, { id: 'u_bob', name: 'Bob' });
    const gl = await webglRenderer(alice);
    await openAtlas(alice, POINTS);
    await openAtlas(bob, POINTS);
    let shown = (await outputShown(bob, cellId, { not: '' })).text;
    await alice.getByTestId('atlas-tool-rect').click();
    // Alice's page keeps the time of the latest mouse release (the event's own timestamp) and of her latest write of the selection.
    await alice.evaluate(() => {
      const g = globalThis as { __released?: number; __written?: number; __plexus?: any };
      window.addEventListener('mouseup', (e) => (g.__released = performance.timeOrigin + e.timeStamp), true);
      g.__plexus.doc.getMap('atlas').observeDeep((events: Array<{ keysChanged?: Set<string> }>) => {
        if (events.some((e) => e.keysChanged?.has('selection'))) g.__written = performance.timeOrigin + performance.now();
      });
    });
    console.log(`map of ${POINTS.toLocaleString('en-US')} points ready (${fmt(map.seconds, 1)} s); WebGL: ${gl}; load ${loadavg()}`);

    for (let i = 0; i < WARMUP + BRUSHES; i++) {
      const f = FRACTION + 0.02 * ((i % 5) - 2);
      // The rectangle on Alice's screen: x from just left of the points to f, y over all of them.
      const [p0, p1] = await alice.evaluate(([f]) => {
        const h = (globalThis as AtlasWindow).__plexusAtlas!;
        const r = h.canvas.getBoundingClientRect();
        return [h.mapToScreen(-0.01, -0.01), h.mapToScreen(f, 1.01)].map(([x, y]) => [r.left + x, r.top + y]);
      }, [f] as const);
      const before = exec()?.runId;
      const prevSelection = await bob.evaluate(() => JSON.stringify([...((globalThis as any).__plexus.doc.getMap('atlas').values() as Iterable<any>)].map((m) => m.get('selection')?.at ?? null)));
      // Bob's page: when the selection and the selection table reach his document.
      const seen = bob.evaluate(
        ([table, prev]) =>
          new Promise<Seen>((resolve) => {
            const doc = (globalThis as any).__plexus.doc;
            const out = { selection: 0, registry: 0, registered: 0 };
            const now = () => performance.timeOrigin + performance.now();
            const onAtlas = () => {
              const sel = JSON.stringify([...(doc.getMap('atlas').values() as Iterable<any>)].map((m) => m.get('selection')?.at ?? null));
              if (!out.selection && sel !== prev) out.selection = now();
            };
            const onData = (e: { keysChanged: Set<string> }) => {
              if (!out.selection || !e.keysChanged.has(table)) return;
              out.registry = now();
              out.registered = Number(doc.getMap('data').get(table)?.created ?? 0);
              doc.getMap('atlas').unobserveDeep(onAtlas);
              doc.getMap('data').unobserve(onData);
              resolve(out);
            };
            doc.getMap('atlas').observeDeep(onAtlas);
            doc.getMap('data').observe(onData);
          }),
        [selTable, prevSelection] as const,
      );
      const output = outputShown(bob, cellId, { not: shown });
      // Both watchers are installed once an evaluation sent after them has run (one page runs them in order).
      await bob.evaluate(() => 0);
      // The library's rectangle starts at the first move after the press: a 1 px first step, as a hand's.
      await alice.mouse.move(p0![0]!, p0![1]!);
      await alice.mouse.down();
      await alice.mouse.move(p0![0]! + 1, p0![1]! - 1);
      await alice.mouse.move(p1![0]!, p1![1]!, { steps: 6 });
      await alice.mouse.up();
      const arrived: string[] = [];
      let timer!: NodeJS.Timeout;
      const [s, o] = await Promise.race([
        Promise.all([seen.finally(() => arrived.push("Bob's document")), output.finally(() => arrived.push("Bob's output"))]),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            const sel = getAtlasMap(a.doc, map.id)?.selection;
            reject(new Error(`brush ${i}: after 120 s only ${arrived.join(' and ') || 'nothing'} arrived; the selection in the document: ${JSON.stringify(sel)}; run ${JSON.stringify(exec())}`));
          }, 120_000);
        }),
      ]).finally(() => clearTimeout(timer));
      const [released, written] = await alice.evaluate(() => {
        const g = globalThis as { __released?: number; __written?: number };
        return [g.__released ?? 0, g.__written ?? 0];
      });
      await until(() => exec()?.runId !== before && exec()?.state === 'done', 60_000, 5, `the run after brush ${i}`);
      const run = exec()!;
      const bobCount = await bob.getByTestId('atlas-selection').getAttribute('data-count');
      if (bobCount !== o.text) mismatches.push(`brush ${i}: Bob's panel counts ${bobCount}, the cell says ${o.text}`);
      shown = o.text;
      console.log(`  brush ${i}${i < WARMUP ? ' (warm-up)' : ''}: ${o.text} rows, output in Bob's DOM ${fmt(o.at - released, 0)} ms after the release`);
      if (i >= WARMUP) {
        counts.push(Number(o.text));
        rows.written!.push(written - released);
        rows.selection!.push(s.selection - released);
        rows.registered!.push(s.registered - released);
        rows.runStarted!.push(run.startedAt - released);
        rows.runEnded!.push((run.endedAt ?? NaN) - released);
        rows.registry!.push(s.registry - released);
        rows.output!.push(o.at - released);
      }
      await sleep(QUIET_MS);
    }
    a.destroy();
  } finally {
    await browser.close();
    await server.stop();
  }

  const c = summarize(counts);
  console.log(`\n${BRUSHES} brushes (after ${WARMUP} not counted) on ${POINTS.toLocaleString('en-US')} points, ${Math.round(c.mean).toLocaleString('en-US')} rows selected on average (${Math.min(...counts).toLocaleString('en-US')}–${c.max.toLocaleString('en-US')}); ms after Alice releases the mouse:`);
  const what: Record<string, string> = {
    written: "selection written in Alice's document",
    selection: "selection in Bob's document",
    registered: 'selection table registered (server clock)',
    runStarted: "cell's run started (kernel clock)",
    runEnded: "cell's run ended (kernel clock)",
    registry: "registry change in Bob's document",
    output: "cell output in Bob's DOM",
  };
  printTable(['after release', 'p50', 'p95', 'p99', 'max'], Object.entries(rows).map(([k, v]) => {
    const s = summarize(v);
    return [what[k]!, fmt(s.p50, 0), fmt(s.p95, 0), fmt(s.p99, 0), fmt(s.max, 0)];
  }));
  console.log(mismatches.length ? `\ncounts that differ:\n  ${mismatches.join('\n  ')}` : "\nBob's panel count equalled the cell's output after every brush.");
  console.log(`load average at end: ${loadavg()}`);
}

await main();
