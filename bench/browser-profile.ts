/**
 * A page's V8 CPU profile through the DevTools protocol, its call frames mapped back through the
 * client bundle's source maps (client/dist/assets/*.js.map) to the original functions, files and
 * lines, so the summary (cpuprofile.ts) reads `applyUpdate ~/yjs/dist/yjs.mjs:…` rather than a
 * minified name. Used by `bench/browser-load.ts --cpu-prof`.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { CDPSession, Page } from '@playwright/test';
import { SourceMapConsumer } from 'source-map-js';
import { printProfile } from './cpuprofile.ts';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface Profile {
  nodes: Array<{ id: number; callFrame: CallFrame; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
}

/** Starts profiling `page` (sampling every `intervalUs`); the returned function stops it and returns the profile. */
export async function startPageProfile(page: Page, intervalUs = 250): Promise<() => Promise<Profile>> {
  const cdp: CDPSession = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: intervalUs });
  await cdp.send('Profiler.start');
  return async () => {
    const { profile } = (await cdp.send('Profiler.stop')) as unknown as { profile: Profile };
    await cdp.detach();
    return profile;
  };
}

/** Rewrites the bundle's call frames to the original source (function name, file, line). */
export function mapProfile(profile: Profile, distDir: string): Profile {
  const consumers = new Map<string, SourceMapConsumer | null>();
  const consumer = (url: string): SourceMapConsumer | null => {
    const m = /\/assets\/([^/?#]+\.js)/.exec(url);
    if (!m) return null;
    if (!consumers.has(m[1]!)) {
      const file = path.join(distDir, 'assets', `${m[1]}.map`);
      consumers.set(m[1]!, fs.existsSync(file) ? new SourceMapConsumer(JSON.parse(fs.readFileSync(file, 'utf8'))) : null);
    }
    return consumers.get(m[1]!)!;
  };
  for (const n of profile.nodes) {
    const f = n.callFrame;
    const c = f.url ? consumer(f.url) : null;
    if (!c || f.lineNumber < 0) continue;
    const pos = c.originalPositionFor({ line: f.lineNumber + 1, column: Math.max(0, f.columnNumber) });
    if (!pos.source) continue;
    // `../node_modules/yjs/…` → `/node_modules/yjs/…` (cpuprofile.ts shortens it to `~/yjs/…`); `../src/…` → `client/src/…`.
    const source = pos.source.replace(/^(\.\.\/)+/, '/').replace(/^\/src\//, '/client/src/');
    n.callFrame = { ...f, functionName: pos.name ?? f.functionName, url: source, lineNumber: (pos.line ?? 1) - 1 };
  }
  return profile;
}

/** Writes the mapped profile to `file` and prints its summary. */
export function reportPageProfile(profile: Profile, distDir: string, file: string, top = 25): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(mapProfile(profile, distDir)));
  printProfile(file, top, /yjs|lib0|y-indexeddb|y-protocols|client\/src|shared\/src|react-dom|hocuspocus/);
}
