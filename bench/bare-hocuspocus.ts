/**
 * A bare Hocuspocus server (no extensions, no auth) on 127.0.0.1 and a free port: the baseline the
 * Plexus server is compared against. With `BENCH_HOCUSPOCUS_SQLITE=<file>` it persists like a
 * stock deployment would, with Hocuspocus' own `@hocuspocus/extension-sqlite` (better-sqlite3,
 * the whole document upserted per store); `BENCH_HOCUSPOCUS_DEBOUNCE=<ms>` sets Hocuspocus'
 * store debounce (its default 2000 ms, at most 10 s later; 0 stores on every change, the closest
 * it comes to Plexus' write-ahead log, which appends each update before acknowledging it).
 * Prints one JSON line `{"ready":true,"port":…,"url":…}` when it listens; stops on
 * SIGTERM/SIGINT (Hocuspocus' own signal handling). Run: `npx tsx bench/bare-hocuspocus.ts`.
 */
import { Server } from '@hocuspocus/server';
import { SQLite } from '@hocuspocus/extension-sqlite';

const file = process.env.BENCH_HOCUSPOCUS_SQLITE;
const debounce = process.env.BENCH_HOCUSPOCUS_DEBOUNCE;
const server = new Server({
  port: 0,
  address: '127.0.0.1',
  quiet: true,
  ...(debounce !== undefined ? { debounce: Number(debounce) } : {}),
  extensions: file ? [new SQLite({ database: file })] : [],
});
await server.listen();
const port = server.address.port;
process.stdout.write(JSON.stringify({ ready: true, port, url: `http://127.0.0.1:${port}` }) + '\n');
