/// <reference lib="dom" />
/**
 * Browser load of a 1,000-cell workspace (20 lines per cell plus a small output entry): time from
 * navigation start until the first cell is visible, until the first editable editor is mounted
 * (interactive; a keystroke into it is then checked, untimed), and until the document is synced
 * from the server. Cold (fresh browser
 * context, empty IndexedDB) and warm (reload, IndexedDB filled). Prints p50 / max over runs.
 *
 *   npx tsx bench/browser-load.ts [runs=5]
 */
import { chromium } from '@playwright/test';
import * as Y from 'yjs';
import { createCell, userOrigin } from '@plexus/shared';
import { api, hocuspocusClient, startChildServer, tmpDir, waitFor } from '@plexus/testkit';

const RUNS = Number(process.argv[2] ?? 5);
const CELLS = 1000;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

async function main() {
  const server = await startChildServer(tmpDir('plexus-bench-browser-'), { PLEXUS_CLIENT_DIR: new URL('../client/dist', import.meta.url).pathname });
  try {
    const ws = (await api(server.url, server.ownerToken, 'POST', '/api/workspaces', { name: 'Browser load' })).json.workspace.id as string;
    const c = hocuspocusClient(server.url, ws, server.ownerToken);
    await c.synced;
    const o = userOrigin('bench');
    c.doc.transact(() => {
      for (let i = 0; i < CELLS; i++) {
        const lines = Array.from({ length: 20 }, (_, l) => `const v${i}_${l} = ${i} * ${l}; // line ${l} of cell ${i}`).join('\n');
        const id = createCell(c.doc, { kind: i % 5 === 0 ? 'markdown' : 'code', source: i % 5 === 0 ? `## Section ${i}\n\nNotes for cell ${i}.` : lines, author: 'bench' }, o);
        const out = new Y.Map<unknown>();
        out.set('text', `result ${i}`);
        c.doc.getMap<Y.Map<unknown>>('cells').get(id)!.set('outputs', out);
      }
    }, o);
    await waitFor(() => c.provider.unsyncedChanges === 0, { timeout: 60_000, message: 'cells stored' });
    c.destroy();

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
  } finally {
    await server.kill('SIGTERM');
  }
}

await main();
