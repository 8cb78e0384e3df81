/**
 * The fork registry's rows in the SQLite store's database (`forks`, beside the workspace
 * registry); the registry's logic is forks/registry.ts.
 * Effects: SQLite I/O.
 */
import type Database from 'better-sqlite3';
import type { ForkRecord, ForkRows } from './storage.ts';

interface Row {
  id: string;
  source: string;
  by: string;
  by_name: string | null;
  student: string | null;
  handout: number;
  created: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS forks (
  id TEXT PRIMARY KEY,
  source TEXT NOT NULL,
  by TEXT NOT NULL,
  by_name TEXT,
  student TEXT,
  handout INTEGER NOT NULL,
  created INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS forks_by_source ON forks (source);
CREATE UNIQUE INDEX IF NOT EXISTS forks_by_student ON forks (source, student) WHERE student IS NOT NULL;
`;

const fromRow = (r: Row): ForkRecord => ({ id: r.id, source: r.source, by: r.by, byName: r.by_name, student: r.student, handout: r.handout === 1, created: r.created });

export class SqliteForkRows implements ForkRows {
  private readonly stmts;

  constructor(db: Database.Database) {
    db.exec(SCHEMA);
    this.stmts = {
      insert: db.prepare<[string, string, string, string | null, string | null, number, number]>(
        'INSERT INTO forks (id, source, by, by_name, student, handout, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      get: db.prepare<[string], Row>('SELECT * FROM forks WHERE id = ?'),
      ofStudent: db.prepare<[string, string], Row>('SELECT * FROM forks WHERE source = ? AND student = ?'),
      handouts: db.prepare<[string], Row>('SELECT * FROM forks WHERE source = ? AND handout = 1 ORDER BY created, id'),
      remove: db.prepare<[string]>('DELETE FROM forks WHERE id = ?'),
      removeSource: db.prepare<[string]>('DELETE FROM forks WHERE source = ?'),
    };
  }

  /** Records a new fork (in the caller's transaction when there is one). */
  add(rec: ForkRecord): void {
    this.stmts.insert.run(rec.id, rec.source, rec.by, rec.byName, rec.student, rec.handout ? 1 : 0, rec.created);
  }

  get(id: string): ForkRecord | null {
    const r = this.stmts.get.get(id);
    return r ? fromRow(r) : null;
  }

  ofStudent(source: string, student: string): ForkRecord | null {
    const r = this.stmts.ofStudent.get(source, student);
    return r ? fromRow(r) : null;
  }

  handouts(source: string): ForkRecord[] {
    return this.stmts.handouts.all(source).map(fromRow);
  }

  remove(id: string): void {
    this.stmts.remove.run(id);
  }

  removeSource(source: string): void {
    this.stmts.removeSource.run(source);
  }
}
