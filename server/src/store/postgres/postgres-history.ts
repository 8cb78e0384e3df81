/**
 * The history (checkpoint states and the attribution journal, history/) in Postgres, in the same
 * database as the workspaces: every server of a deployment sees every checkpoint.
 * Effects: network (Postgres).
 */
import type { HistoryStorage, JournalEntry } from '../storage.ts';
import { deflateState, inflateState, journalEntry, type JournalRow } from '../../history/history-store.ts';
import type { PgDatabase } from './database.ts';

export class PgHistoryStore implements HistoryStorage {
  constructor(private readonly db: PgDatabase) {
    db.retain();
  }

  async putState(ws: string, id: string, at: number, state: Uint8Array): Promise<number> {
    const data = await deflateState(state);
    await this.db.query(
      'INSERT INTO checkpoint_states (ws, id, at, data) VALUES ($1, $2, $3, $4) ON CONFLICT (ws, id) DO UPDATE SET at = excluded.at, data = excluded.data',
      [ws, id, at, data],
    );
    return data.length;
  }

  async getState(ws: string, id: string): Promise<Uint8Array | null> {
    const { rows } = await this.db.query<{ data: Buffer }>('SELECT data FROM checkpoint_states WHERE ws = $1 AND id = $2', [ws, id]);
    return rows[0] ? inflateState(rows[0].data) : null;
  }

  async dropStates(ws: string, ids: string[]): Promise<void> {
    if (ids.length) await this.db.query('DELETE FROM checkpoint_states WHERE ws = $1 AND id = ANY($2::text[])', [ws, ids]);
  }

  async states(ws: string): Promise<Array<{ id: string; at: number; bytes: number }>> {
    return (await this.db.query<{ id: string; at: number; bytes: number }>('SELECT id, at, octet_length(data) AS bytes FROM checkpoint_states WHERE ws = $1 ORDER BY at', [ws])).rows;
  }

  async usage(ws: string): Promise<{ bytes: number; checkpoints: number }> {
    const { rows } = await this.db.query<{ bytes: number; n: number }>(
      'SELECT coalesce(sum(octet_length(data)), 0)::bigint AS bytes, count(*)::int AS n FROM checkpoint_states WHERE ws = $1',
      [ws],
    );
    return { bytes: rows[0]!.bytes, checkpoints: rows[0]!.n };
  }

  async appendJournal(entries: Array<Omit<JournalEntry, 'id'>>): Promise<void> {
    if (!entries.length) return;
    const col = <T>(f: (e: Omit<JournalEntry, 'id'>) => T) => entries.map(f);
    await this.db.query(
      `INSERT INTO journal (ws, start_at, end_at, actor_id, actor_name, actor_kind, summary)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[])`,
      [col((e) => e.ws), col((e) => e.start), col((e) => e.end), col((e) => e.actor.id), col((e) => e.actor.name ?? null), col((e) => e.actor.kind), col((e) => JSON.stringify(e.summary))],
    );
  }

  async journal(ws: string, from = 0, to = Number.MAX_SAFE_INTEGER, limit = 500): Promise<JournalEntry[]> {
    const { rows } = await this.db.query<JournalRow>(
      `SELECT id, ws, start_at AS start, end_at AS "end", actor_id, actor_name, actor_kind, summary FROM journal
       WHERE ws = $1 AND end_at >= $2 AND start_at <= $3 ORDER BY end_at DESC, id DESC LIMIT $4`,
      [ws, from, to, limit],
    );
    return rows.map(journalEntry);
  }

  async deleteWorkspace(ws: string): Promise<void> {
    await this.db.transaction(async (c) => {
      await c.query('DELETE FROM checkpoint_states WHERE ws = $1', [ws]);
      await c.query('DELETE FROM journal WHERE ws = $1', [ws]);
    });
  }

  close(): Promise<void> {
    return this.db.release();
  }
}
