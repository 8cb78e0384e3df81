/**
 * The Postgres schema, as versioned migrations applied in order at start (database.ts records each
 * in `schema_migrations`). Never edit a released migration: add the next one.
 * Effects: none (SQL text).
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'workspace registry, update log, snapshots, fork registry, settings',
    sql: `
-- last_seq is the head of the workspace's log: every append updates it in the statement that
-- inserts the entries, so concurrent appends to one workspace (from any server) queue on this
-- row and get gap-free sequence numbers in commit order. fillfactor leaves room for HOT updates.
CREATE TABLE workspaces (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created BIGINT NOT NULL,
  updated BIGINT NOT NULL,
  epoch TEXT NOT NULL,
  last_seq BIGINT NOT NULL DEFAULT 0
) WITH (fillfactor = 50);
CREATE TABLE log (
  ws TEXT NOT NULL,
  seq BIGINT NOT NULL,
  data BYTEA NOT NULL,
  PRIMARY KEY (ws, seq)
);
-- upto: the last log entry the snapshot contains (loads read the log above it).
CREATE TABLE snapshots (
  ws TEXT PRIMARY KEY,
  upto BIGINT NOT NULL,
  data BYTEA NOT NULL
);
CREATE TABLE forks (
  id TEXT PRIMARY KEY,
  source TEXT NOT NULL,
  by_id TEXT NOT NULL,
  by_name TEXT,
  student TEXT,
  handout BOOLEAN NOT NULL,
  created BIGINT NOT NULL
);
CREATE INDEX forks_by_source ON forks (source);
CREATE UNIQUE INDEX forks_by_student ON forks (source, student) WHERE student IS NOT NULL;
-- Server-wide values every server shares (the token secret).
CREATE TABLE settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
`,
  },
  {
    version: 2,
    name: 'history: checkpoint states and the attribution journal',
    sql: `
CREATE TABLE checkpoint_states (
  ws TEXT NOT NULL,
  id TEXT NOT NULL,
  at BIGINT NOT NULL,
  data BYTEA NOT NULL,
  PRIMARY KEY (ws, id)
);
CREATE TABLE journal (
  id BIGSERIAL PRIMARY KEY,
  ws TEXT NOT NULL,
  start_at BIGINT NOT NULL,
  end_at BIGINT NOT NULL,
  actor_id TEXT NOT NULL,
  actor_name TEXT,
  actor_kind TEXT NOT NULL,
  summary TEXT NOT NULL
);
CREATE INDEX journal_by_ws ON journal (ws, end_at);
`,
  },
  {
    version: 3,
    name: 'fencing: the token of the node serving each workspace',
    sql: `
-- Several nodes (cluster/): the node that takes a workspace's lease bumps its fence and writes
-- with it; appends and snapshots carrying an older fence are refused, so a node that lost the
-- lease (paused, cut off) can never store anything for the workspace again.
ALTER TABLE workspaces ADD COLUMN fence BIGINT NOT NULL DEFAULT 0;
`,
  },
  {
    version: 4,
    name: 'share link generations (revoking links)',
    sql: `
-- Share links of a workspace signed before its last reset no longer work (api: share/reset).
CREATE TABLE link_generations (
  ws TEXT PRIMARY KEY,
  gen BIGINT NOT NULL
);
`,
  },
  {
    version: 5,
    name: 'snapshots: whether deleted content was collected',
    sql: `
-- true when data is a document's own encoding (StoredParts.collected); the snapshots written
-- before (an older Plexus merged its log into them, keeping every deleted item) are unknown.
ALTER TABLE snapshots ADD COLUMN collected BOOLEAN NOT NULL DEFAULT false;
`,
  },
];
