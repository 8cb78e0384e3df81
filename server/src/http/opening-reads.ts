/**
 * What a browser reads over HTTP while it opens a workspace, before its socket has synced (speed
 * issue, gap 3); index.html asks for both before the bundle has even loaded:
 * - `GET /api/workspaces/:id/first-screen?cells=N`: the notebook's first cells as plain JSON
 *   (`readFirstScreen`), which the page shows at once;
 * - `GET /api/workspaces/:id/state`: the whole document as one Yjs update, which the session applies
 *   as soon as it exists, so the notebook is there without waiting for the socket's sync.
 * Both read the live document (loading it when nobody has it open) and keep it loaded a few
 * seconds afterwards, so the socket that follows joins it instead of loading it again.
 * Effects: loads documents (reads only).
 */
import type { Hocuspocus } from '@hocuspocus/server';
import * as Y from 'yjs';
import { FIRST_SCREEN_DEFAULTS, FIRST_SCREEN_MAX_CELLS, readFirstScreen, type FirstScreen } from '@plexus/shared';
import type { Logger } from '../log.ts';

type Direct = Awaited<ReturnType<Hocuspocus['openDirectConnection']>>;

/** How long a document read while opening stays loaded for the socket that follows. */
export const OPENING_LINGER_MS = 5000;

export class OpeningReads {
  private readonly held = new Map<Direct, ReturnType<typeof setTimeout>>();
  private closed = false;

  constructor(
    private readonly hocuspocus: () => Hocuspocus,
    private readonly log: Logger,
    private readonly lingerMs = OPENING_LINGER_MS,
  ) {}

  /** The first screen of workspace `id`, or null when its document cannot be loaded (the socket says why) or the server is closing. */
  firstScreen(id: string, cells: number): Promise<FirstScreen | null> {
    const n = Math.max(1, Math.min(FIRST_SCREEN_MAX_CELLS, cells || FIRST_SCREEN_DEFAULTS.cells));
    return this.read(id, (doc) => readFirstScreen(doc, { cells: n }));
  }

  /** The whole document of workspace `id` as one update, or null as for `firstScreen`. */
  state(id: string): Promise<Uint8Array | null> {
    return this.read(id, (doc) => Y.encodeStateAsUpdate(doc));
  }

  private async read<T>(id: string, f: (doc: Y.Doc) => T): Promise<T | null> {
    if (this.closed) return null;
    let conn: Direct;
    try {
      conn = await this.hocuspocus().openDirectConnection(id, { openingRead: true });
    } catch (e) {
      this.log.debug('opening read: the document did not load', { ws: id, error: (e as Error).message });
      return null;
    }
    try {
      return conn.document ? f(conn.document) : null;
    } finally {
      this.linger(conn);
    }
  }

  private linger(conn: Direct): void {
    if (this.closed) {
      void conn.disconnect();
      return;
    }
    const t = setTimeout(() => {
      this.held.delete(conn);
      void conn.disconnect();
    }, this.lingerMs);
    t.unref();
    this.held.set(conn, t);
  }

  /** Lets every held document go (drain, shutdown: before documents are flushed). */
  async close(): Promise<void> {
    this.closed = true;
    const conns = [...this.held.keys()];
    for (const t of this.held.values()) clearTimeout(t);
    this.held.clear();
    await Promise.all(conns.map((c) => c.disconnect()));
  }
}
