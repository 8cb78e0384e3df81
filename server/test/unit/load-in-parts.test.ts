/**
 * A snapshot stored in parts is loaded a part per turn of the event loop (persistence.ts
 * `applyStored`, store/split-state.mjs): the loop turns between parts, the document is whole at the
 * end, and a workspace deleted while it loads is refused, not served.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import type { onLoadDocumentPayload } from '@hocuspocus/server';
import { DurablePersistence } from '../../src/collab/persistence.ts';
import { createLogger } from '../../src/log.ts';
import { WorkspaceStore } from '../../src/store/workspace-store.ts';
import { storableState } from '../../src/store/split-state.mjs';
import { keystrokes } from '../fixtures/keystrokes.ts';

function stored(): { store: WorkspaceStore; persistence: DurablePersistence; doc: Y.Doc; parts: number } {
  const store = new WorkspaceStore(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'plexus-load-parts-')), 'p.db'));
  const { doc } = keystrokes(600);
  store.create({ id: 'w', name: 'W', state: storableState(Y.encodeStateAsUpdate(doc), 40) });
  const persistence = new DurablePersistence(store, createLogger('silent'), { compactEvery: 1_000_000, compactIdleMs: 3_600_000 });
  persistence.markChecked('w');
  return { store, persistence, doc, parts: store.loadParts('w').snapshot!.length };
}
const load = (p: DurablePersistence, document: Y.Doc) => p.onLoadDocument({ documentName: 'w', document, requestHeaders: {} } as unknown as onLoadDocumentPayload);

describe('loading a snapshot stored in parts', () => {
  it('gives the event loop a turn between parts and ends with the whole document', async () => {
    const { store, persistence, doc, parts } = stored();
    expect(parts).toBeGreaterThan(5);
    const into = new Y.Doc();
    let turns = 0;
    let loaded = false;
    const loading = load(persistence, into).then(() => (loaded = true));
    // Something else waiting for the loop runs while the load goes on.
    while (!loaded) {
      await new Promise((resolve) => setImmediate(resolve));
      if (!loaded) turns++;
    }
    await loading;
    expect(turns).toBeGreaterThanOrEqual(parts - 1);
    expect(persistence.loadTurns).toBe(parts - 1);
    expect(into.getText('t').toString()).toBe(doc.getText('t').toString());
    store.close();
  });

  it('refuses a workspace deleted while it loads', async () => {
    const { store, persistence } = stored();
    const loading = load(persistence, new Y.Doc());
    await new Promise((resolve) => setImmediate(resolve)); // the first part is in
    persistence.forget('w');
    await expect(loading).rejects.toMatchObject({ code: 4404 });
    expect(persistence.loadTurns).toBeGreaterThan(0); // it was deleted between parts
    store.close();
  });
});
