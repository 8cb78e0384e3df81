/// <reference lib="dom" />
/**
 * Browser load of a 1,000-cell workspace, and of a 10,000-cell one (20 lines per cell plus a small
 * output entry; every fifth cell markdown): time from navigation start until the first cell is
 * visible (the first screen's text counts: a person can read it), until the first editable editor
 * is mounted (interactive; a keystroke into it is then checked, untimed), until the document
 * is synced from the server, and until both (a key typed then reaches the other people). Cold
 * (fresh browser context, empty IndexedDB) and warm (back again, IndexedDB filled: with the server
 * idle, after it has unloaded the workspace, as for a cold run; with it open, a reload).
 *
 * Side by side in one run, alternating (speed issue, gap 3): `fast` is Plexus as shipped (index.html
 * asks for the workspace and its first screen before the bundle loads, the notebook shows the
 * first screen until the document has synced); `baseline` opens the old way
 * (`localStorage['plexus.fastOpen'] = '0'`: the workspace call after the bundle, nothing before
 * the sync). Two server states: `idle` (nobody has the workspace open: the server loads it from
 * storage first; every cold run waits until the server has unloaded it) and `open` (another client
 * holds it open, as in a meeting). Prints p50 / max over runs.
 *
 *   npx tsx bench/browser-load.ts [runs=5] [--cells=1000,10000] [--server=idle,open] [--modes=fast,baseline,render-all,previous] [--previous-dist=DIR] [--app-cached] [--settle=ms] [--typing=ms] [--edits=N] [--part-structs=N] [--cpu-prof]
 *
 * `--modes=fast,previous --previous-dist=DIR` compares the client as built now with another build of
 * it (say the previous revision's `client/dist`, built in a worktree): a second server, on a copy of
 * the same data, serves that build; cases alternate between the two as between any modes.
 *
 * `--network=20[/40]` emulates a 20 Mbit/s link with a 40 ms round trip (default 20 ms);
 * `--modes=fast,fast-uncompressed` compares Plexus as shipped with the same browser asking for
 * nothing compressed (what Brotli does for the bundle and the document on a real link).
 * Each case also prints the session's own marks (collab/session.ts: bundle running, local copy
 * open, document fetched, applied, synced). `--cpu-prof`: the first run of each mode and cache is
 * profiled (V8 sampling through the DevTools protocol, mapped back through the bundle's source
 * maps) and summarised; profiles in bench/results/profiles/browser-load-*.cpuprofile.
 */
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { chromium } from '@playwright/test';
import type * as Y from 'yjs';
import { loadConfig } from '@plexus/server/config';
import { startServer } from '@plexus/server/app';
import { hocuspocusClient, startChildServer, tmpDir, waitFor } from '@plexus/testkit';
import { fillNotebook } from './fixtures.ts';
import { reportPageProfile, startPageProfile } from './browser-profile.ts';

const RUNS = Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 5);
const arg = (name: string, dflt: string) => (process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt).split(',');
const SIZES = arg('cells', '1000,10000').map(Number);
const SERVER_STATES = arg('server', 'idle,open') as Array<'idle' | 'open'>;
const MODES = arg('modes', 'fast,baseline') as Mode[];
/**
 * `--network=<Mbit/s>[/<rtt ms>]`: the page's network emulated (DevTools protocol: that download
 * speed, a quarter of it up, that round trip; default 20 ms), as a person on a real link has it.
 */
const NETWORK = (() => {
  const v = process.argv.find((a) => a.startsWith('--network='))?.split('=')[1];
  if (!v) return null;
  const [mbit, rtt] = v.split('/').map(Number);
  return { downloadBytesPerS: (mbit! * 1e6) / 8, rttMs: rtt ?? 20 };
})();
const CPU_PROF = process.argv.includes('--cpu-prof');
const APP_CACHED = process.argv.includes('--app-cached');
const CACHES = APP_CACHED ? (['cold', 'warm', 'doc-cold'] as const) : (['cold', 'warm'] as const);
type Cache = 'cold' | 'warm' | 'doc-cold';
/**
 * `--settle=<ms>`: after typing reaches the others, the page is watched that long more: its long
 * tasks (main thread busy over 50 ms at a stretch: a key pressed then waits) and how many cells it
 * holds at the end. With `--modes=fast,render-all`: the notebook rendering its cells as they come
 * near the viewport (as shipped) against rendering all of them in the background (as before).
 */
const SETTLE_MS = Number(process.argv.find((a) => a.startsWith('--settle='))?.split('=')[1] ?? 0);
/**
 * `--typing=<ms>`: then, that long after typing reached the others, 40 keys are typed (Enter every
 * tenth) into the first editor, 40 ms apart, and the page's own Event Timing entries give each
 * keydown's duration (its handling until the next paint; the API reports only those of 16 ms and
 * more, so fewer means faster).
 */
const TYPING_AT_MS = Number(process.argv.find((a) => a.startsWith('--typing='))?.split('=')[1] ?? 0);
/**
 * `--edits=N`: then N small edits arrive, one transaction each (as the agent's or other people's
 * keystrokes do), and the page is watched 4 s more: its long tasks then. Past 500 entries the
 * browser's copy of the document is folded into one (`--modes=fast,previous`: a worker merging the
 * stored entries, against y-indexeddb encoding the whole document on the page).
 */
const EDITS = Number(process.argv.find((a) => a.startsWith('--edits='))?.split('=')[1] ?? 0);
/** `--part-structs=N`: the server's `snapshotPartStructs` (0: snapshots stored whole, as before §41). */
const PART_STRUCTS_ARG = process.argv.find((a) => a.startsWith('--part-structs='))?.split('=')[1];
const DIST = new URL('../client/dist', import.meta.url).pathname;
/** `--previous-dist=DIR`: the build mode `previous` is served from (see the header). */
const PREVIOUS_DIST = process.argv.find((a) => a.startsWith('--previous-dist='))?.split('=')[1] ?? null;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

/** The size of the workspace `--app-cached` opens first (cells). */
const SMALL = 5;

/**
 * The workspaces, built through the server's own code in this process (a person's client may not
 * write the kernel's run records the cells carry), on the data dir the measured server then opens.
 */
async function buildFixture(dir: string): Promise<Map<number, string>> {
  const server = await startServer(
    loadConfig({ PLEXUS_LOG_LEVEL: 'warn' } as NodeJS.ProcessEnv, { port: 0, host: '127.0.0.1', dataDir: dir, seedDemo: false, kernel: false, secret: 'bench-fixture-secret-0123456789', clientDir: path.join(dir, 'no-client'), ...(PART_STRUCTS_ARG === undefined ? {} : { snapshotPartStructs: Number(PART_STRUCTS_ARG) }) }),
  );
  const ids = new Map<number, string>();
  try {
    // Every fifth cell markdown; code cells of 20 lines with a small output (bench/fixtures.ts).
    for (const n of [...SIZES, SMALL]) ids.set(n, (await server.workspaces.create({ name: `Browser load ${n}`, fill: (doc) => fillNotebook(doc, n, 20, 5) })).id);
  } finally {
    await server.close();
  }
  return ids;
}

async function main() {
  const dir = tmpDir('plexus-bench-browser-');
  const ids = await buildFixture(dir);
  const servers = new Map<ServerRole, Server>();
  if (MODES.includes('previous')) {
    if (!PREVIOUS_DIST) throw new Error('mode previous needs --previous-dist=DIR (another build of the client)');
    // A copy of the same data: the two servers never share a database.
    const copy = tmpDir('plexus-bench-browser-previous-');
    // (The fixture's server has closed; its database may still be dropping its -wal file: skip what went.)
    fs.cpSync(dir, copy, { recursive: true, filter: (src) => fs.existsSync(src) });
    servers.set('previous', await startChildServer(copy, { PLEXUS_CLIENT_DIR: path.resolve(PREVIOUS_DIST) }));
  }
  const server = await startChildServer(dir, { PLEXUS_CLIENT_DIR: DIST });
  servers.set('main', server);
  console.log(`browser load, ${RUNS} runs per case, headless Chromium${NETWORK ? `, network emulated: ${((NETWORK.downloadBytesPerS * 8) / 1e6).toFixed(0)} Mbit/s down, ${NETWORK.rttMs} ms round trip` : ''}; load average at start ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  try {
    for (const CELLS of SIZES) for (const state of SERVER_STATES) await measureSize(servers, CELLS, ids.get(CELLS)!, state, ids.get(SMALL)!);
  } finally {
    for (const s of servers.values()) await s.kill('SIGTERM');
  }
  console.log(`load average at end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
}

type Server = Awaited<ReturnType<typeof startChildServer>>;
/** `previous`: the server of the other build (`--previous-dist`); `main`: the one of client/dist. */
type ServerRole = 'main' | 'previous';
/**
 * `fast`: as shipped; `baseline`: the old way (see the header); `fast-uncompressed`: as shipped, but
 * the browser asks for nothing compressed (`Accept-Encoding: identity`), to see what compression does;
 * `render-all`: as shipped, but the notebook renders every cell in the background (`plexus.renderAll`);
 * `previous`: as shipped, in the build `--previous-dist` names.
 */
type Mode = 'fast' | 'baseline' | 'fast-uncompressed' | 'render-all' | 'previous';

/** Until the server has no document open and has folded what it unloaded (a cold run starts from storage, as an idle workspace is stored). */
async function serverIdle(server: Server): Promise<void> {
  const idle = async () => {
    const h = (await (await fetch(`${server.url}/api/health`)).json()) as { openDocuments: number; foldsRunning: number };
    return h.openDocuments === 0 && h.foldsRunning === 0;
  };
  await waitFor(idle, { timeout: 120_000, interval: 100, message: 'documents unloaded, logs folded' });
}

interface Sample {
  visible: number;
  /** The document is there to edit (synced, fetched while opening, or from IndexedDB). */
  ready: number;
  interactive: number;
  synced: number;
  /** A key typed now reaches the other people: an editor is mounted and the socket has synced (the later of the two). */
  reaches: number;
  /** The client's own marks (collab/session.ts), ms from navigation start (NaN: not reached). */
  marks: Record<string, number>;
  /** Bytes received over the network until the keystroke was checked (HTTP bodies as sent). */
  receivedBytes?: number;
  /** `--settle`: long tasks in the window after typing reaches others (total and longest, ms), and the cells in the page then. */
  after?: { longMs: number; longestMs: number; cells: number };
  /** `--typing`: durations (ms) of the 40 keydowns typed then that took 16 ms or more, and the cells in the page. */
  typing?: { slow: number[]; cells: number };
  /** `--edits`: long tasks (total, longest; ms) from the first edit until 4 s after the last. */
  edits?: { longMs: number; longestMs: number };
}

const p50Finite = (xs: number[]) => (xs.some(Number.isFinite) ? pct(xs.filter(Number.isFinite), 50) : NaN);

/** The session's marks, in the order they normally come: where the time to an editable notebook goes. */
const MARKS = ['session-start', 'idb-synced', 'state-fetched', 'state-applied', 'server-synced'] as const;

async function measureSize(servers: Map<ServerRole, Server>, CELLS: number, ws: string, state: 'idle' | 'open', smallWs: string): Promise<void> {
  const serverOf = (mode: Mode) => servers.get(mode === 'previous' ? 'previous' : 'main')!;
  // `open`: another person has the workspace open for the whole case (on each server).
  const holders = state === 'open' ? [...servers.values()].map((s) => hocuspocusClient(s.url, ws, s.ownerToken)) : [];
  for (const h of holders) await h.synced;
  const browser = await chromium.launch({
    executablePath: process.env.PLEXUS_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const urlOf = (mode: Mode, id = ws) => `${serverOf(mode).url}/w/${id}?token=${serverOf(mode).ownerToken}`;
  const measure = async (page: import('@playwright/test').Page): Promise<Sample> => {
    // Waiting for the elements to be there, not visible: Playwright checks visibility by laying
    // the page out every frame (~60 ms of the page's main thread at a time for 1,000 cells on 2
    // cores), which would slow down what is measured. The times come from the observer below.
    await page.waitForSelector('[data-testid=cell], [data-testid=first-screen-cell]', { timeout: 120_000, state: 'attached' });
    await page.waitForSelector('.cm-content[contenteditable=true]', { timeout: 120_000, state: 'attached' });
    // Interactive: the first editable editor is in the page (time taken by the observer); check
    // that it really takes a keystroke into the document, outside the timing.
    const { visible, interactive, ready } = await page.evaluate(() => {
      const w = window as unknown as { __firstCell: number; __firstEditor: number; __docReady: number };
      return { visible: w.__firstCell, interactive: w.__firstEditor, ready: w.__docReady };
    });
    const editor = page.locator('.cm-content').first();
    await editor.click();
    await page.keyboard.type('x');
    await page.waitForFunction(() => {
      const doc = (window as unknown as { __plexus?: { doc: Y.Doc } }).__plexus?.doc;
      return !!doc && [...doc.getMap<Y.Map<unknown>>('cells').values()].some((c) => String(c.get('source')).includes('x'));
    });
    // (A copy in IndexedDB can take the keystroke before the socket has synced.)
    await page.waitForFunction(() => performance.getEntriesByName('plexus:server-synced').length > 0, null, { timeout: 120_000 });
    const marks = await page.evaluate((names) => Object.fromEntries(names.map((n) => [n, performance.getEntriesByName(`plexus:${n}`)[0]?.startTime ?? NaN])), [...MARKS]);
    const synced = marks['server-synced']!;
    const reaches = Math.max(interactive, synced);
    const after = SETTLE_MS > 0 ? await page.evaluate(async ([from, ms]) => {
      const left = from + ms - performance.now();
      if (left > 0) await new Promise((r) => setTimeout(r, left));
      const tasks = (window as unknown as { __longTasks: Array<{ start: number; duration: number }> }).__longTasks.filter((t) => t.start >= from && t.start < from + ms);
      return {
        longMs: tasks.reduce((s, t) => s + t.duration, 0),
        longestMs: Math.max(0, ...tasks.map((t) => t.duration)),
        cells: document.querySelectorAll('[data-testid=notebook] [data-testid=cell]').length,
      };
    }, [reaches, SETTLE_MS] as const) : undefined;
    let typing: Sample['typing'];
    if (TYPING_AT_MS > 0) {
      await page.evaluate(async (at) => {
        const left = at - performance.now();
        if (left > 0) await new Promise((r) => setTimeout(r, left));
      }, reaches + TYPING_AT_MS);
      const from = await page.evaluate(() => performance.now());
      await editor.click();
      for (let i = 0; i < 40; i++) {
        await page.keyboard.press(i % 10 === 9 ? 'Enter' : 'y');
        await page.waitForTimeout(40);
      }
      typing = await page.evaluate(async (since) => {
        await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 100)));
        const slow = (window as unknown as { __keyEvents: Array<{ start: number; duration: number }> }).__keyEvents.filter((e) => e.start >= since).map((e) => e.duration);
        return { slow, cells: document.querySelectorAll('[data-testid=notebook] [data-testid=cell]').length };
      }, from);
    }
    const edits = EDITS > 0 ? await page.evaluate(async (n) => {
      // The copy open first (an open before the edits would store them whole anyway).
      while (!performance.getEntriesByName('plexus:idb-synced').length) await new Promise((r) => setTimeout(r, 50));
      const { session } = (globalThis as unknown as { __plexus: { session: { doc: Y.Doc; origin: unknown } } }).__plexus;
      // A code cell's text (markdown cells hold an XML fragment).
      const text = [...session.doc.getMap<Y.Map<unknown>>('cells').values()].map((c) => c.get('source')).find((s) => typeof (s as Y.Text).toDelta === 'function') as Y.Text;
      const from = performance.now();
      for (let i = 0; i < n; i++) session.doc.transact(() => text.insert(0, 'e'), session.origin);
      await new Promise((r) => setTimeout(r, 4000));
      const tasks = (window as unknown as { __longTasks: Array<{ start: number; duration: number }> }).__longTasks.filter((t) => t.start >= from);
      return { longMs: tasks.reduce((s, t) => s + t.duration, 0), longestMs: Math.max(0, ...tasks.map((t) => t.duration)) };
    }, EDITS) : undefined;
    return { visible, ready, interactive, synced, reaches, marks, ...(after ? { after } : {}), ...(typing ? { typing } : {}), ...(edits ? { edits } : {}) };
  };
  const initScript = (mode: Mode) => {
    if (mode === 'baseline') localStorage.setItem('plexus.fastOpen', '0');
    if (mode === 'render-all') localStorage.setItem('plexus.renderAll', '1');
    const w = window as unknown as { __firstCell?: number; __firstEditor?: number; __docReady?: number; __longTasks: Array<{ start: number; duration: number }> };
    w.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) w.__longTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask', buffered: true });
    const k = window as unknown as { __keyEvents: Array<{ start: number; duration: number }> };
    k.__keyEvents = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (e.name === 'keydown') k.__keyEvents.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'event', buffered: true, durationThreshold: 16 } as PerformanceObserverInit);
    new MutationObserver((_m, obs) => {
      if (w.__firstCell === undefined && document.querySelector('[data-testid=cell], [data-testid=first-screen-cell]')) w.__firstCell = performance.now();
      if (w.__docReady === undefined && document.querySelector('[data-testid=doc-ready]')) w.__docReady = performance.now();
      if (w.__firstEditor === undefined && document.querySelector('.cm-content[contenteditable=true]')) w.__firstEditor = performance.now();
      if (w.__firstCell !== undefined && w.__firstEditor !== undefined && w.__docReady !== undefined) obs.disconnect();
    }).observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ['contenteditable'] });
  };
  const results = new Map(MODES.map((m) => [m, { cold: [] as Sample[], warm: [] as Sample[], 'doc-cold': [] as Sample[] }]));
  for (let r = 0; r < RUNS; r++) {
    // Alternate which mode goes first, so neither always follows the other.
    const order = r % 2 === 0 ? MODES : [...MODES].reverse();
    for (const mode of order) {
      for (const caches of APP_CACHED ? [['cold', 'warm'], ['doc-cold']] as const : [['cold', 'warm']] as const) {
        const ctx = await browser.newContext(mode === 'fast-uncompressed' ? { extraHTTPHeaders: { 'accept-encoding': 'identity' } } : {});
        await ctx.addInitScript(initScript, mode);
        const page = await ctx.newPage();
        if (caches[0] === 'doc-cold') {
          // The app as someone who has used it has it: twice (V8 keeps compiled code from the second run).
          for (let i = 0; i < 2; i++) {
            await page.goto(urlOf(mode, smallWs));
            await page.waitForSelector('.cm-content[contenteditable=true]', { timeout: 120_000, state: 'attached' });
            await page.waitForFunction(() => performance.getEntriesByName('plexus:server-synced').length > 0, null, { timeout: 120_000 });
          }
          await page.goto('about:blank');
        }
        if (state === 'idle') await serverIdle(serverOf(mode));
        // Bytes the page received over the network (as encoded: compressed where it was), and the emulated link.
        const cdp = await ctx.newCDPSession(page);
        await cdp.send('Network.enable');
        let received = 0;
        cdp.on('Network.loadingFinished', (e: { encodedDataLength: number }) => void (received += e.encodedDataLength));
        if (NETWORK) await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: NETWORK.rttMs, downloadThroughput: NETWORK.downloadBytesPerS, uploadThroughput: NETWORK.downloadBytesPerS / 4 });
        const profiled = async (cache: Cache, go: () => Promise<unknown>) => {
          const stop = CPU_PROF && r === 0 ? await startPageProfile(page) : null;
          received = 0;
          await go();
          const sample = await measure(page);
          sample.receivedBytes = received;
          results.get(mode)![cache].push(sample);
          if (stop) {
            console.log(`\n## CPU profile of the page: ${CELLS} cells, server ${state}, ${mode}, ${cache} (from navigation to the keystroke checked)`);
            reportPageProfile(await stop(), DIST, path.join(import.meta.dirname, 'results', 'profiles', `browser-load-${CELLS}-${state}-${mode}-${cache}.cpuprofile`));
          }
        };
        for (const cache of caches) {
          // Warm from idle: the page leaves (its socket closes) and the server unloads and folds
          // before the page comes back with its IndexedDB copy — else whether the server still holds
          // the document is a race with the unload.
          if (cache === 'warm' && state === 'idle') {
            await page.goto('about:blank');
            await serverIdle(serverOf(mode));
          }
          await profiled(cache, () => (cache === 'warm' && state !== 'idle' ? page.reload() : page.goto(urlOf(mode))));
        }
        await ctx.close();
      }
    }
  }
  await browser.close();
  for (const h of holders) h.destroy();
  const p50 = (xs: Sample[], k: Exclude<keyof Sample, 'marks' | 'receivedBytes' | 'after' | 'typing' | 'edits'>) => pct(xs.map((x) => x[k]), 50);
  const max = (xs: Sample[], k: Exclude<keyof Sample, 'marks' | 'receivedBytes' | 'after' | 'typing' | 'edits'>) => Math.max(...xs.map((x) => x[k]));
  console.log(`\n${CELLS} cells, server ${state === 'idle' ? 'idle (loads the workspace from storage)' : 'has the workspace open'} — ms from navigation start, p50 (max)`);
  console.log('mode      cache     first cell visible   document ready     interactive        server synced      typing reaches others');
  for (const cache of CACHES) {
    for (const mode of MODES) {
      const xs = results.get(mode)![cache];
      console.log(
        `${mode.padEnd(9)} ${cache.padEnd(8)}  ${`${p50(xs, 'visible').toFixed(0)} (${max(xs, 'visible').toFixed(0)})`.padEnd(19)}  ${`${p50(xs, 'ready').toFixed(0)} (${max(xs, 'ready').toFixed(0)})`.padEnd(17)}  ${`${p50(xs, 'interactive').toFixed(0)} (${max(xs, 'interactive').toFixed(0)})`.padEnd(17)}  ${`${p50(xs, 'synced').toFixed(0)}`.padEnd(17)}  ${p50(xs, 'reaches').toFixed(0)} (${max(xs, 'reaches').toFixed(0)})`,
      );
    }
    for (const mode of MODES) {
      const xs = results.get(mode)![cache];
      console.log(`  ${mode} ${cache} marks (p50): ${MARKS.map((m) => `${m} ${p50Finite(xs.map((x) => x.marks[m] ?? NaN)).toFixed(0)}`).join(', ')}; received ${(p50Finite(xs.map((x) => x.receivedBytes ?? NaN)) / 1e6).toFixed(2)} MB`);
    }
    if (SETTLE_MS > 0) {
      for (const mode of MODES) {
        const xs = results.get(mode)![cache].map((x) => x.after!);
        const p = (k: 'longMs' | 'longestMs' | 'cells') => pct(xs.map((x) => x[k]), 50).toFixed(0);
        const m = (k: 'longMs' | 'longestMs' | 'cells') => Math.max(...xs.map((x) => x[k])).toFixed(0);
        console.log(`  ${mode} ${cache}, the ${SETTLE_MS} ms after typing reaches others (p50 (max)): long tasks ${p('longMs')} (${m('longMs')}) ms in all, the longest ${p('longestMs')} (${m('longestMs')}) ms; cells in the page then ${p('cells')} (${m('cells')})`);
      }
    }
    if (EDITS > 0) {
      for (const mode of MODES) {
        const xs = results.get(mode)![cache].map((x) => x.edits!);
        const p = (k: 'longMs' | 'longestMs') => pct(xs.map((x) => x[k]), 50).toFixed(0);
        const m = (k: 'longMs' | 'longestMs') => Math.max(...xs.map((x) => x[k])).toFixed(0);
        console.log(`  ${mode} ${cache}, ${EDITS} edits then 4 s (p50 (max)): long tasks ${p('longMs')} (${m('longMs')}) ms in all, the longest ${p('longestMs')} (${m('longestMs')}) ms`);
      }
    }
    if (TYPING_AT_MS > 0) {
      for (const mode of MODES) {
        const xs = results.get(mode)![cache].map((x) => x.typing!);
        const all = xs.flatMap((x) => x.slow).sort((a, b) => a - b);
        const q = (p: number) => (all.length ? all[Math.min(all.length - 1, Math.floor((p / 100) * all.length))]!.toFixed(0) : '—');
        console.log(`  ${mode} ${cache}, 40 keys typed ${TYPING_AT_MS} ms after typing reached others: ${all.length} of ${xs.length * 40} keydowns took 16 ms or more (to the next paint); of those p50 ${q(50)}, p90 ${q(90)}, max ${q(100)} ms; cells in the page ${pct(xs.map((x) => x.cells), 50)}`);
      }
    }
    if (MODES.length === 2) {
      const [a, b] = MODES.map((m) => results.get(m)![cache]) as [Sample[], Sample[]];
      console.log(`ratio ${MODES[0]}/${MODES[1]} ${cache}: first cell ${(p50(a, 'visible') / p50(b, 'visible')).toFixed(2)}, interactive ${(p50(a, 'interactive') / p50(b, 'interactive')).toFixed(2)}, typing reaches others ${(p50(a, 'reaches') / p50(b, 'reaches')).toFixed(2)}`);
    }
  }
}

await main();
