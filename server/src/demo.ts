/**
 * The demo workspace seeded on first start: a few markdown, code and SQL cells and a welcome
 * message, so a newcomer sees a working workspace at once. Pure apart from document writes.
 */
import type * as Y from 'yjs';
import { createCell, postMessage, serverOrigin } from '@plexus/shared';
import { fillDemoViewer } from './demo-viewer.ts';

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
  createCell(doc, {
    kind: 'markdown', author,
    source: [
      '## The viewer: a two-photon recording',
      '',
      'The viewer shows a **synthetic calcium-imaging recording**: 256×256 pixels (1 µm each), 900 frames at 30 Hz, about 60 neurons with GCaMP6f-like transients, neuropil, a blood vessel, drift, shot noise and a little motion. Time is the third axis, `t`.',
      '',
      '- Scroll or press `,` / `.` over the image to step through frames; drag to pan, Ctrl+wheel to zoom',
      '- Layers **mean**, **max** (projections) and **labels** (ground-truth footprints) are hidden: click their names to show them',
      '- **ROIs** marks each neuron\'s centroid; step through them with ‹ › in the viewer toolbar',
      '- *Shared view* moves everyone together; choose *On my own* to look around alone, or *Follow…* someone',
      '',
      'The ground truth (ROI table, noise-free traces, spike times) is served beside the volumes in `/volumes/calcium-demo/tables/`.',
    ].join('\n'),
  }, o);
  createCell(doc, {
    kind: 'code', author,
    source: [
      '// The mean fluorescence of ROI 2 over time, read on the server from the movie the viewer shows',
      "const roiTrace = await volumes.trace('calcium-demo', 'movie', { labels: 'labels', roi: 2 });",
      'vegalite({',
      '  data: { values: roiTrace.values.map((f, i) => ({ t: i / frameRate, f })) },',
      "  mark: 'line',",
      '  encoding: {',
      "    x: { field: 't', type: 'quantitative', title: 'time (s)' },",
      "    y: { field: 'f', type: 'quantitative', title: 'fluorescence (ADU)', scale: { zero: false } },",
      '  },',
      "  width: 'container', height: 160,",
      '})',
    ].join('\n'),
  }, o);
  fillDemoViewer(doc);
  postMessage(doc, {
    author: { id: 'plexus', name: 'Plexus', kind: 'system' },
    text: 'Welcome! This chat is stored in the workspace: everyone here sees it.',
  }, o);
}
