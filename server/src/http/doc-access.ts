/**
 * Short document reads and changes from HTTP handlers: a Hocuspocus direct connection, so changes
 * carry a server origin and reach every connected client. Effects: loads documents, may mutate them.
 */
import type { Hocuspocus } from '@hocuspocus/server';
import type * as Y from 'yjs';

/** Runs `f` on the live document of workspace `id` (loading it if needed) and returns its result. */
export async function withDoc<T>(hocuspocus: Hocuspocus, id: string, f: (doc: Y.Doc) => T): Promise<T> {
  const conn = await hocuspocus.openDirectConnection(id);
  try {
    let out!: T;
    await conn.transact((doc) => {
      out = f(doc);
    });
    return out;
  } finally {
    await conn.disconnect();
  }
}
