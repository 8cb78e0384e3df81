// Background work on the SQLite store, off the server's event loop: WAL checkpoints of the log
// database (the main connection has automatic checkpoints off, so no keystroke append ever waits
// for an fsync) and log compaction on request. It writes only the snapshot database: the server's
// thread is the log database's only writer and never waits for a lock held here. Plain JavaScript
// so it loads without a TypeScript loader.
// Messages in: { type: 'compact', ws } · { type: 'cut', ws } (a snapshot stored whole, stored again
// in parts when large: log-compaction.mjs cutStoredSnapshot) · { type: 'checkpoint' } · { type: 'stop' }.
// Messages out: { type: 'compacted', ws, folded, upto, ms } · { type: 'cut', ws, cut } · { type: 'error', ws?, message }.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { compactFromLog, cutStoredSnapshot } from './log-compaction.mjs';

const db = new Database(workerData.file);
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${workerData.sync}`);
db.pragma('busy_timeout = 5000');
db.prepare('ATTACH DATABASE ? AS snap').run(workerData.snapshotFile);
db.pragma('snap.journal_mode = WAL');

const checkpoint = () => {
  try {
    db.pragma('main.wal_checkpoint(PASSIVE)');
    db.pragma('snap.wal_checkpoint(PASSIVE)');
  } catch (e) {
    parentPort.postMessage({ type: 'error', message: `checkpoint: ${e.message}` });
  }
};
const timer = setInterval(checkpoint, workerData.checkpointMs);

parentPort.on('message', (msg) => {
  if (msg.type === 'compact') {
    const started = performance.now();
    try {
      const { folded, upto } = compactFromLog(db, msg.ws, workerData.partStructs);
      parentPort.postMessage({ type: 'compacted', ws: msg.ws, folded, upto, ms: performance.now() - started });
    } catch (e) {
      parentPort.postMessage({ type: 'error', ws: msg.ws, message: e.message });
    }
  } else if (msg.type === 'cut') {
    try {
      const snap = db.prepare('SELECT upto, data FROM snap.snapshots WHERE ws = ?').get(msg.ws);
      parentPort.postMessage({ type: 'cut', ws: msg.ws, cut: !!snap && cutStoredSnapshot(db, msg.ws, snap, workerData.partStructs) });
    } catch (e) {
      parentPort.postMessage({ type: 'cut', ws: msg.ws, cut: false, message: e.message });
    }
  } else if (msg.type === 'checkpoint') {
    checkpoint();
  } else if (msg.type === 'stop') {
    clearInterval(timer);
    checkpoint();
    db.close();
    parentPort.close();
  }
});
