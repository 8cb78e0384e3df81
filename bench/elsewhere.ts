/**
 * For benchmarks that measure what people in another workspace feel while a node does something
 * large (bench/load-stall.ts, bench/replica-stall.ts): a node in the benchmark's process, and a
 * typist with someone watching, run on a worker thread so their clocks keep running while the
 * node's event loop is held.
 */
import path from 'node:path';
import { loadConfig, type ServerConfig } from '@plexus/server/config';
import { startServer, type PlexusServer } from '@plexus/server/app';
import { cellSource, getCell, insertCellText, listCells, userOrigin } from '@plexus/shared';
import { hocuspocusClient, tmpDir, waitFor } from '@plexus/testkit';
import { startPostgres } from '@plexus/testkit/postgres';

/** A node on a data dir of its own, kernel off (a running kernel keeps documents loaded), no demo; `config` on top. */
export function startNode(name: string, config: Partial<ServerConfig> = {}): Promise<PlexusServer> {
  const dir = tmpDir(`plexus-bench-${name}-`);
  return startServer(
    loadConfig({ PLEXUS_LOG_LEVEL: 'error' } as NodeJS.ProcessEnv, {
      port: 0,
      host: '127.0.0.1',
      dataDir: dir,
      seedDemo: false,
      kernel: false,
      secret: `bench-${name}-secret-0123456789abcdef`,
      clientDir: path.join(dir, 'no-client'),
      ...config,
    }),
  );
}

/**
 * Connects both to workspace `id` and types a key every 20 ms at the end of its first cell; the
 * returned function stops, waits until the watcher has seen every key, and gives each key's
 * latency (typed → seen) in ms.
 */
export async function startTyping(url: string, id: string, token: string): Promise<() => Promise<number[]>> {
  const a = hocuspocusClient(url, id, token);
  const b = hocuspocusClient(url, id, token);
  await Promise.all([a.synced, b.synced]);
  const cell = listCells(a.doc)[0]!.id;
  await waitFor(() => getCell(b.doc, cell) !== null, { message: 'the cell reached the watcher' });
  const sent: number[] = [];
  const seen: number[] = [];
  const base = cellSource(getCell(b.doc, cell)!).length;
  b.doc.on('afterTransaction', () => {
    const n = cellSource(getCell(b.doc, cell)!).length - base;
    while (seen.length < n) seen.push(performance.now());
  });
  const timer = setInterval(() => {
    sent.push(performance.now());
    insertCellText(a.doc, cell, cellSource(getCell(a.doc, cell)!).length, 'x', userOrigin('typist'));
  }, 20);
  return async () => {
    clearInterval(timer);
    await waitFor(() => seen.length >= sent.length, { timeout: 30_000, message: 'every key seen' });
    a.destroy();
    b.destroy();
    return sent.map((t, i) => seen[i]! - t);
  };
}

/** Messages to the typist's worker. */
export type TypistMsg = { type: 'start'; url: string; id: string; token: string } | { type: 'stop' };
let typing: (() => Promise<number[]>) | null = null;

/** On the typist's worker: answers `start` once typing (`{ started }`) and `stop` with the latencies (`{ latencies }`). */
export async function answerTypist(m: TypistMsg, post: (answer: unknown) => void): Promise<void> {
  if (m.type === 'start') {
    typing = await startTyping(m.url, m.id, m.token);
    post({ started: true });
  } else if (typing) {
    post({ latencies: await typing() });
    typing = null;
  }
}

/** `--name=value` from the command line, or `dflt`. */
export const arg = (name: string, dflt: string): string => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;

/** `--storage=sqlite|postgres`: for postgres, a cluster started here (each node a database of its own: `databaseUrl`). */
export async function storageFromArgs(): Promise<{ storage: string; postgres: Awaited<ReturnType<typeof startPostgres>> | null }> {
  const storage = arg('storage', 'sqlite');
  if (storage !== 'sqlite' && storage !== 'postgres') throw new Error(`--storage must be sqlite or postgres, got ${storage}`);
  return { storage, postgres: storage === 'postgres' ? await startPostgres() : null };
}
