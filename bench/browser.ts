/// <reference lib="dom" />
/**
 * Browser plumbing for the benchmarks that drive the real client (the production bundle served
 * by a real server) in Debian's Chromium: launching it, the WebGL implementation it got (software
 * here: SwiftShader), opening a workspace as a named person, and waiting in the page for a cell's
 * rendered output. Effects: browser processes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from '@playwright/test';
import { repoRoot } from './lib.ts';

/** The built client the server serves (`npm run build -w client`; PLEXUS_CLIENT_DIR to use another build). */
export function clientDir(): string {
  const dir = process.env.PLEXUS_CLIENT_DIR ?? path.join(repoRoot, 'client/dist');
  if (!fs.existsSync(path.join(dir, 'index.html'))) throw new Error(`no built client in ${dir}: run npm run build -w client first`);
  return dir;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.PLEXUS_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** The page's WebGL renderer and vendor (unmasked), e.g. "ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device …))". */
export function webglRenderer(page: Page): Promise<string> {
  return page.evaluate(() => {
    const gl = document.createElement('canvas').getContext('webgl');
    if (!gl) return 'no WebGL';
    const info = gl.getExtension('WEBGL_debug_renderer_info');
    const out = `${gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER)}`;
    gl.getExtension('WEBGL_lose_context')?.loseContext();
    return out;
  });
}

/**
 * Opens workspace `ws` in a new browser context as a person (`id`, `name`) and waits until its
 * document is ready. Functions passed to `page.evaluate` may declare inner functions: tsx wraps
 * them in a `__name` helper, which the page gets here.
 */
export async function openWorkspacePage(
  browser: Browser,
  url: string,
  ws: string,
  token: string,
  user: { id: string; name: string; color?: string },
  viewport = { width: 1400, height: 900 },
): Promise<Page> {
  const ctx = await browser.newContext({ viewport });
  // Room for every resource's timing (the app loads more than the default 250).
  await ctx.addInitScript('globalThis.__name = (f) => f; performance.setResourceTimingBufferSize(100000);');
  await ctx.addInitScript((u) => localStorage.setItem('plexus.user', JSON.stringify(u)), { color: '#4363d8', ...user });
  const page = await ctx.newPage();
  await page.goto(`${url}/w/${ws}?token=${encodeURIComponent(token)}`);
  await page.getByTestId('doc-ready').waitFor({ timeout: 60_000 });
  return page;
}

/**
 * Resolves once the cell's rendered output (its text output, or the first cell of its table)
 * shows `is`, or anything but `not` — with the time (epoch ms with a fraction:
 * `performance.timeOrigin + performance.now()` in the page; this machine's clock) and the text.
 */
export function outputShown(page: Page, cellId: string, want: { is: string } | { not: string }): Promise<{ at: number; text: string }> {
  return page.evaluate(
    ([id, w]) =>
      new Promise<{ at: number; text: string }>((resolve) => {
        const sel = `[data-testid="cell"][data-cell-id=${JSON.stringify(id)}] :is([data-testid="output-text"], [data-testid="output-table"] tbody td)`;
        const check = () => {
          const text = document.querySelector(sel)?.textContent;
          if (text === undefined || text === null || ('is' in w ? text !== w.is : text === w.not)) return;
          mo.disconnect();
          resolve({ at: performance.timeOrigin + performance.now(), text });
        };
        const mo = new MutationObserver(check);
        mo.observe(document.body, { subtree: true, childList: true, characterData: true });
        check();
      }),
    [cellId, want] as const,
  );
}
