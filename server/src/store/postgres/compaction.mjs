// Folding a workspace's update log into its snapshot in Postgres, shared by the store (the
// server's thread: snapshots from memory, fallback) and the compaction worker. Plain JavaScript so
// a worker thread loads it without a TypeScript loader; types in compaction.d.mts.
// Effects: one Postgres transaction.
import { foldToStorable, foldUpdates } from '../log-compaction.mjs';
import { PART_STRUCTS, splitUpdate } from '../split-state.mjs';
import { isStateParts, packStateParts, unpackStateParts } from '@plexus/shared/state-parts';

/** Advisory lock key (two-int form, first half) of compactions; the second half is the workspace's hashtext. */
export const COMPACTION_LOCK = 0x506c7843; // 'PlxC'

/**
 * Folds every log entry of `ws` stored now into its snapshot, in one transaction that writes the
 * snapshot and deletes the folded entries, under a transaction-level advisory lock keyed by the
 * workspace: one compaction of a workspace at a time across every server using the database.
 * With `wait` false a compaction already running elsewhere makes this one give up (`busy`); with
 * `state` (a loaded document's state, from memory) it is merged in as well, which is how a dirty
 * document is stored. Appends go on meanwhile: they only insert above the entries read here, and
 * the workspace row is read FOR KEY SHARE, which blocks its deletion but not the appends' updates
 * of its log head.
 * `client` is a dedicated connection (pg.Client or a checked-out pool client).
 * With `fence` (the token of the node storing `state`), a fence that moved on stores nothing (`fenced`).
 * Folded off the server's thread, a state larger than `partStructs` structs is stored in parts
 * (split-state.mjs); with nothing to fold, a snapshot stored whole is stored again in parts.
 * Returns { folded, upto, busy, fenced? }.
 */
export async function compactWorkspace(client, ws, { wait = false, state = null, fence = undefined, partStructs = PART_STRUCTS } = {}) {
  await client.query('BEGIN');
  try {
    const lock = wait
      ? await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2)) AS ok', [COMPACTION_LOCK, ws])
      : await client.query('SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS ok', [COMPACTION_LOCK, ws]);
    if (!wait && !lock.rows[0].ok) return await done(client, { folded: 0, upto: 0, busy: true });
    // A fenced snapshot locks the row against a claim (which updates the fence) until it commits,
    // so no node can claim and load between this check and the commit; appends wait meanwhile too
    // (snapshots from memory are rare: dirty documents and shutdown).
    const exists = await client.query(`SELECT fence FROM workspaces WHERE id = $1 ${state && fence !== undefined ? 'FOR SHARE' : 'FOR KEY SHARE'}`, [ws]);
    if (exists.rowCount === 0) return await done(client, { folded: 0, upto: 0, busy: false });
    // A state from memory is only stored by the node that holds the workspace's fence.
    if (state && fence !== undefined && Number(exists.rows[0].fence) !== fence) return await done(client, { folded: 0, upto: 0, busy: false, fenced: true });
    const snap = (await client.query('SELECT upto, data FROM snapshots WHERE ws = $1', [ws])).rows[0];
    const from = snap ? Number(snap.upto) : 0;
    const rows = (await client.query('SELECT seq, data FROM log WHERE ws = $1 AND seq > $2 ORDER BY seq', [ws, from])).rows;
    if (rows.length === 0 && !state) {
      // Nothing to fold: a snapshot stored whole (at creation, from memory) is stored again in parts
      // when it is larger than one (split-state.mjs), so that a load can apply it a part at a time.
      const whole = snap && partStructs && !isStateParts(view(snap.data)) ? splitUpdate(view(snap.data), partStructs) : [];
      if (whole.length < 2) return await done(client, { folded: 0, upto: 0, busy: false });
      await client.query('UPDATE snapshots SET data = $2 WHERE ws = $1', [ws, packStateParts(whole)]);
      await client.query('COMMIT');
      return { folded: 0, upto: 0, busy: false };
    }
    const upto = rows.length ? Number(rows[rows.length - 1].seq) : from;
    const parts = [];
    if (snap) parts.push(...unpackStateParts(view(snap.data)));
    if (state) parts.push(state);
    for (const r of rows) parts.push(view(r.data));
    // Deleted content collected (log-compaction.mjs). With a state from memory (rare: a dirty
    // document, shutdown; on the server's thread) the stored snapshot is folded in too: it may
    // hold an entry the document in memory has not applied yet.
    // Folded off the server's thread (no state from memory): stored in parts when large.
    const merged = state ? foldUpdates(parts) : foldToStorable(parts, partStructs);
    await client.query(
      'INSERT INTO snapshots (ws, upto, data, collected) VALUES ($1, $2, $3, true) ON CONFLICT (ws) DO UPDATE SET upto = excluded.upto, data = excluded.data, collected = true',
      [ws, upto, merged],
    );
    if (rows.length) await client.query('DELETE FROM log WHERE ws = $1 AND seq <= $2', [ws, upto]);
    await client.query('COMMIT');
    return { folded: rows.length, upto, busy: false };
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  }
}

async function done(client, result) {
  await client.query('ROLLBACK');
  return result;
}

const view = (b) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
