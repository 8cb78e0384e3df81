/**
 * Workspace lifecycle: create, duplicate, rename, delete. Changes to a workspace's content go
 * through a Hocuspocus direct connection, so a loaded document and its connected clients see them
 * at once and they are logged like any other update.
 * Effects: store and document mutation.
 */
import type { Hocuspocus } from '@hocuspocus/server';
import * as Y from 'yjs';
import { initWorkspace, newWorkspaceId, serverOrigin, setTitle, isWorkspaceId, CloseCodes } from '@plexus/shared';
import type { Awaitable, WorkspaceRecord, WorkspaceStorage } from './store/storage.ts';
import type { DurablePersistence } from './collab/persistence.ts';

export class WorkspaceError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A workspace name as given (trimmed), or `fallback` when none was; throws a 400 for a bad one. */
export const cleanName = (name: unknown, fallback: string): string => {
  if (name === undefined || name === null) return fallback;
  if (typeof name !== 'string') throw new WorkspaceError(400, 'bad-name', 'name must be a string');
  const n = name.trim();
  if (!n) throw new WorkspaceError(400, 'bad-name', 'name must not be empty');
  if (n.length > 200) throw new WorkspaceError(400, 'bad-name', 'name is longer than 200 characters');
  return n;
};

export class Workspaces {
  /** Called when a workspace is deleted, before its storage goes (the y-websocket bridge closes its peers). */
  onDelete?: (id: string) => Awaitable<void>;
  /** Adds what every new workspace starts with (the shipped method notes), with a server origin. */
  seed?: (doc: Y.Doc) => void;
  /** Called once a workspace was duplicated (its library files are copied). */
  onDuplicate?: (from: string, to: string) => void;

  constructor(
    private readonly store: WorkspaceStorage,
    private readonly hocuspocus: Hocuspocus,
    private readonly persistence: DurablePersistence,
  ) {}

  async list(): Promise<WorkspaceRecord[]> {
    return this.store.list();
  }

  async get(id: string): Promise<WorkspaceRecord> {
    const rec = isWorkspaceId(id) ? await this.store.get(id) : undefined;
    if (!rec) throw new WorkspaceError(404, 'not-found', `workspace ${id} does not exist`);
    return rec;
  }

  /** Creates a workspace; `fill` may add initial content (with a server origin). */
  async create(input: { name?: unknown; id?: string; fill?: (doc: Y.Doc) => void }): Promise<WorkspaceRecord> {
    const name = cleanName(input.name, 'Untitled workspace');
    const id = input.id ?? newWorkspaceId();
    if (!isWorkspaceId(id)) throw new WorkspaceError(400, 'bad-id', 'workspace id may use letters, digits, _ and - only');
    if (await this.store.get(id)) throw new WorkspaceError(409, 'exists', `workspace ${id} already exists`);
    const doc = new Y.Doc();
    initWorkspace(doc, { title: name }, serverOrigin('create'));
    this.seed?.(doc);
    input.fill?.(doc);
    const state = Y.encodeStateAsUpdate(doc);
    doc.destroy();
    const rec = await this.store.create({ id, name, state });
    this.persistence.markChecked(id);
    return rec;
  }

  /** Copies a workspace's current content (live state if loaded) into a new workspace. */
  async duplicate(id: string, name?: unknown): Promise<WorkspaceRecord> {
    const src = await this.get(id);
    const conn = await this.hocuspocus.openDirectConnection(id);
    let state: Uint8Array;
    try {
      state = Y.encodeStateAsUpdate(conn.document!);
    } finally {
      await conn.disconnect();
    }
    const copyName = cleanName(name, `${src.name} (copy)`);
    const doc = new Y.Doc();
    Y.applyUpdate(doc, state, serverOrigin('duplicate'));
    setTitle(doc, copyName, serverOrigin('duplicate'));
    const copy = Y.encodeStateAsUpdate(doc);
    doc.destroy();
    const rec = await this.store.create({ id: newWorkspaceId(), name: copyName, state: copy });
    this.persistence.markChecked(rec.id);
    this.onDuplicate?.(id, rec.id);
    return rec;
  }

  /** Renames: writes `meta.title` in the document (the registry follows the document). */
  async rename(id: string, name: unknown): Promise<WorkspaceRecord> {
    await this.get(id);
    const clean = cleanName(name, '');
    await this.change(id, (doc) => setTitle(doc, clean, serverOrigin('rename')));
    await this.store.rename(id, clean);
    return this.get(id);
  }

  /** Runs `fn` on the live document of a workspace (loading it if needed); `fn` passes its own origin. */
  async change(id: string, fn: (doc: Y.Doc) => void): Promise<void> {
    await this.get(id);
    const conn = await this.hocuspocus.openDirectConnection(id);
    try {
      await conn.transact(fn);
    } finally {
      await conn.disconnect();
    }
  }

  /** Deletes a workspace: closes its connections and removes it from storage. */
  async delete(id: string): Promise<void> {
    await this.get(id);
    this.persistence.forget(id);
    const doc = this.hocuspocus.documents.get(id);
    doc?.connections.forEach((_c, connection) => connection.close(CloseCodes.NotFound));
    await this.onDelete?.(id);
    await this.store.delete(id);
  }
}
