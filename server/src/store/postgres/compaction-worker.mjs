// Log compaction of the Postgres store off the server's event loop: folding thousands of updates
// into the snapshot is CPU work. One connection of its own. Plain JavaScript so it loads without a
// TypeScript loader.
// Messages in: { type: 'compact', ws } · { type: 'stop' }.
// Messages out: { type: 'compacted', ws, folded, busy, ms } · { type: 'error', ws, message }.
import { parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';
import { compactWorkspace } from './compaction.mjs';

const pool = new pg.Pool({ connectionString: workerData.url, max: 1, connectionTimeoutMillis: 5000, keepAlive: true });
pool.on('error', () => {}); // an idle connection lost (Postgres restarting): the next compaction reconnects

parentPort.on('message', async (msg) => {
  if (msg.type === 'compact') {
    const started = performance.now();
    let client;
    let failed;
    const hold = () => {}; // an error between queries (Postgres going away): the next query fails instead
    try {
      client = await pool.connect();
      client.on('error', hold);
      const { folded, busy } = await compactWorkspace(client, msg.ws, { partStructs: workerData.partStructs });
      parentPort.postMessage({ type: 'compacted', ws: msg.ws, folded, busy, ms: performance.now() - started });
    } catch (e) {
      failed = e; // the connection may be broken: the pool drops it
      parentPort.postMessage({ type: 'error', ws: msg.ws, message: e.message });
    } finally {
      client?.off('error', hold);
      client?.release(failed);
    }
  } else if (msg.type === 'stop') {
    await pool.end().catch(() => {});
    parentPort.close();
  }
});
