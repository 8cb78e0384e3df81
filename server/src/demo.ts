/**
 * The demo workspace seeded on first start: a few markdown, code and SQL cells and a welcome
 * message, so a newcomer sees a working workspace at once. Pure apart from document writes.
 */
import type * as Y from 'yjs';
import { createCell, postMessage, serverOrigin } from '@plexus/shared';

export const DEMO_WORKSPACE_ID = 'demo';

/** Fills a fresh workspace document with the demo content. */
export function fillDemo(doc: Y.Doc): void {
  const o = serverOrigin('seed-demo');
  const author = 'plexus';
  createCell(doc, {
    kind: 'markdown', author,
    source: '# Welcome to Plexus\n\nThis workspace is **shared live**: everyone who opens it sees the same notebook, viewer and chat, with each other\'s cursors.\n\n- Add cells with the buttons between cells\n- Share an edit or view link from the header\n- Press `?` for keyboard shortcuts',
  }, o);
  createCell(doc, {
    kind: 'code', author,
    source: '// JavaScript cells define names other cells can use\nconst frameRate = 30; // Hz\nconst frames = 900;\nconst durationSeconds = frames / frameRate;',
  }, o);
  createCell(doc, {
    kind: 'markdown', author,
    source: '## Data\n\nSQL cells query uploaded tables with DuckDB; their result is bound to the cell\'s name.',
  }, o);
  createCell(doc, {
    kind: 'sql', author, name: 'summary',
    source: 'SELECT 42 AS answer, \'neurons\' AS unit;',
  }, o);
  postMessage(doc, {
    author: { id: 'plexus', name: 'Plexus', kind: 'system' },
    text: 'Welcome! This chat is stored in the workspace: everyone here sees it.',
  }, o);
}
