/// <reference lib="dom" />
/**
 * Browser load of a 1,000-cell workspace, and of a 10,000-cell one (20 lines per cell plus a small
 * output entry; every fifth cell markdown): time from
 * navigation start until the first cell is visible, until the first editable editor is mounted
 * (interactive; a keystroke into it is then checked, untimed), and until the document is synced
 * from the server. Cold (fresh browser
 * context, empty IndexedDB) and warm (reload, IndexedDB filled). Prints p50 / max over runs.
 *
 *   npx tsx bench/browser-load.ts [runs=5] [--cells=1000,10000]
 */
import path from 'node:path';
import { chromium } from '@playwright/test';
import type * as Y from 'yjs';
import { loadConfig } from '@plexus/server/config';
import { startServer } from '@plexus/server/app';
import { startChildServer, tmpDir } from '@plexus/testkit';
import { fillNotebook } from './fixtures.ts';

const RUNS = Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 5);
const SIZES = (process.argv.find((a) => a.startsWith('--cells='))?.split('=')[1] ?? '1000,10000').split(',').map(Number);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

/**
 * The workspaces, built through the server's own code in this process (a person's client may not
 * write the kernel's run records the cells carry), on the data dir the measured server then opens.
 */
async function buildFixture(dir: string): Promise<Map<number, string>> {
  const server = await startServer(
    loadConfig({ PLEXUS_LOG_LEVEL: 'warn' } as NodeJS.ProcessEnv, { port: 0, host: '127.0.0.1', dataDir: dir, seedDemo: false, kernel: false, secret: 'bench-fixture-secret-0123456789', clientDir: path.join(dir, 'no-client') }),
  );
  const ids = new Map<number, string>();
  try {
    // Every fifth cell markdown; code cells of 20 lines with a small output (bench/fixtures.ts).
    for (const n of SIZES) ids.set(n, (await server.workspaces.create({ name: `Browser load ${n}`, fill: (doc) => fillNotebook(doc, n, 20, 5) })).id);
  } finally {
    await server.close();
  }
  return ids;
}

async function main() {
  const dir = tmpDir('plexus-bench-browser-');
  const ids = await buildFixture(dir);
  const server = await startChildServer(dir, { PLEXUS_CLIENT_DIR: new URL('../client/dist', import.meta.url).pathname });
  try {
    for (const CELLS of SIZES) await measureSize(server, CELLS, ids.get(CELLS)!);
  } finally {
    await server.kill('SIGTERM');
  }
}

async function measureSize(server: Awaited<ReturnType<typeof startChildServer>>, CELLS: number, ws: string): Promise<void> {
  {
    const browser = await chromium.launch({
      executablePath: process.env.PLEXUS_CHROMIUM ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    const url = `${server.url}/w/${ws}?token=${server.ownerToken}`;
    const measure = async (page: import('@playwright/test').Page) => {
      await page.waitForSelector('[data-testid=cell]', { timeout: 60_000 });
      const visible = await page.evaluate(() => (window as unknown as { __firstCell?: number }).__firstCell ?? performance.now());
      await page.waitForSelector('.cm-content[contenteditable=true]', { timeout: 60_000 });
      // Interactive: the first editable editor is in the page (time taken by the observer); check
      // that it really takes a keystroke into the document, outside the timing.
      const interactive = await page.evaluate(() => (window as unknown as { __firstEditor: number }).__firstEditor);
      const editor = page.locator('.cm-content').first();
      await editor.click();
      await page.keyboard.type('x');
      await page.waitForFunction(() => {
        const doc = (window as unknown as { __plexus?: { doc: Y.Doc } }).__plexus?.doc;
        return !!doc && [...doc.getMap<Y.Map<unknown>>('cells').values()].some((c) => String(c.get('source')).includes('x'));
      });
      const synced = await page.evaluate(() => performance.getEntriesByName('plexus:server-synced')[0]?.startTime ?? NaN);
      return { visible, interactive, synced };
    };
    const initScript = () => {
      const w = window as unknown as { __firstCell?: number; __firstEditor?: number };
      new MutationObserver((_m, obs) => {
        if (w.__firstCell === undefined && document.querySelector('[data-testid=cell]')) w.__firstCell = performance.now();
        if (w.__firstEditor === undefined && document.querySelector('.cm-content[contenteditable=true]')) w.__firstEditor = performance.now();
        if (w.__firstCell !== undefined && w.__firstEditor !== undefined) obs.disconnect();
      }).observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ['contenteditable'] });
    };
    const cold: Array<Awaited<ReturnType<typeof measure>>> = [];
    const warm: Array<Awaited<ReturnType<typeof measure>>> = [];
    for (let r = 0; r < RUNS; r++) {
      const ctx = await browser.newContext();
      await ctx.addInitScript(initScript);
      const page = await ctx.newPage();
      await page.goto(url);
      cold.push(await measure(page));
      await page.reload();
      warm.push(await measure(page));
      await ctx.close();
    }
    await browser.close();
    const row = (name: string, xs: Array<{ visible: number; interactive: number; synced: number }>) =>
      console.log(
        `${name.padEnd(5)}  first cell visible p50 ${pct(xs.map((x) => x.visible), 50).toFixed(0)} ms (max ${Math.max(...xs.map((x) => x.visible)).toFixed(0)})` +
          `  interactive p50 ${pct(xs.map((x) => x.interactive), 50).toFixed(0)} ms (max ${Math.max(...xs.map((x) => x.interactive)).toFixed(0)})` +
          `  server-synced p50 ${pct(xs.map((x) => x.synced), 50).toFixed(0)} ms`,
      );
    console.log(`browser load of ${CELLS} cells (times from navigation start, ${RUNS} runs, headless Chromium)`);
    row('cold', cold);
    row('warm', warm);
  }
}

await main();
