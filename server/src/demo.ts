/**
 * The demo workspace seeded on first start: a few markdown, code and SQL cells and a welcome
 * message, so a newcomer sees a working workspace at once. Pure apart from document writes.
 */
import type * as Y from 'yjs';
import { createCell, postMessage, serverOrigin } from '@plexus/shared';
import { fillDemoViewer } from './demo-viewer.ts';

export const DEMO_WORKSPACE_ID = 'demo';
/** The demo's table of ground-truth neurons (registered with its map by demo-atlas.ts once the dataset exists). */
export const DEMO_NEURONS_TABLE = 'demo_neurons';

/**
 * The calcium analysis of the demo recording, cell by cell: start the job, follow it, then read
 * its ROIs on the mean image, read its tables, draw traces and a raster, and score the result
 * against the ground truth.
 */
function fillDemoAnalysis(doc: Y.Doc, o: ReturnType<typeof serverOrigin>, author: string): void {
  const md = (source: string) => createCell(doc, { kind: 'markdown', author, source }, o);
  const js = (source: string[]) => createCell(doc, { kind: 'code', author, source: source.join('\n') }, o);
  const sql = (name: string, source: string) => createCell(doc, { kind: 'sql', author, name, source }, o);
  md([
    '## Analysis: from the movie to cells, traces and events',
    '',
    'The next cell starts the **calcium pipeline** on the server as a job everyone sees in *Analyses* (above the notebook): motion correction, cell detection, traces with neuropil correction, ΔF/F, deconvolution and events. It takes about a minute; anyone can stop it. When it is done the ROIs appear in the viewer and the results are tables: `calcium_demo_rois`, `calcium_demo_traces`, `calcium_demo_events`, `calcium_demo_shifts`. Then run the cells below it (or *Run stale*).',
  ].join('\n'));
  js(["// Returns the job's id at once; the job runs on the server.", "const job = await calcium.start('calcium-demo', 'movie', { tauDecay: 'GCaMP6f' });", 'job']);
  js(['const jobStatus = await calcium.status(job);', '({ status: jobStatus.status, stage: jobStatus.progress?.stage ?? null, ...(jobStatus.result?.summary ?? {}) })']);
  js(['// The ROIs on the mean image: cells in green, ROIs judged not to be somata dashed orange.', "// Delete, merge or reclassify ROIs in Analyses and run this again: everyone's edits show here.", 'calcium.figure(job)']);
  sql('cells', 'SELECT id, centroid_x, centroid_y, area_px, round(snr, 1) AS snr, events\nFROM calcium_demo_rois\nWHERE is_cell = 1\nORDER BY snr DESC');
  sql('top_traces', 'SELECT id, time_s, dff, spikes\nFROM calcium_demo_traces\nWHERE id IN (SELECT id FROM cells LIMIT 4)\nORDER BY id, time_s');
  js([
    '// ΔF/F of the four strongest cells, with their inferred activity as ticks',
    'vegalite({',
    '  data: { values: top_traces },',
    "  facet: { row: { field: 'id', type: 'ordinal', title: 'ROI' } },",
    '  spec: {',
    "    width: 'container', height: 70,",
    '    layer: [',
    "      { mark: { type: 'line', strokeWidth: 1 }, encoding: { x: { field: 'time_s', type: 'quantitative', title: 'time (s)' }, y: { field: 'dff', type: 'quantitative', title: 'ΔF/F' } } },",
    "      { transform: [{ filter: 'datum.spikes > 0' }], mark: { type: 'tick', color: '#d62728', thickness: 1 }, encoding: { x: { field: 'time_s', type: 'quantitative' }, y: { value: 68 } } },",
    '    ],',
    '  },',
    '})',
  ]);
  sql('raster', 'SELECT e.id, e.time_s, e.amplitude\nFROM calcium_demo_events e JOIN cells USING (id)');
  js([
    '// Every event of every cell: a raster',
    'vegalite({',
    '  data: { values: raster },',
    "  mark: { type: 'tick', thickness: 1 },",
    "  encoding: { x: { field: 'time_s', type: 'quantitative', title: 'time (s)' }, y: { field: 'id', type: 'ordinal', title: 'ROI', axis: null }, opacity: { field: 'amplitude', type: 'quantitative', legend: null } },",
    "  width: 'container', height: 240,",
    '})',
  ]);
  md('### How good is it?\n\nThe demo recording is simulated, so the truth is known: the next cell matches the ROIs with the true cells (IoU ≥ 0.5) and compares traces and spikes. ROIs people deleted in the *Analyses* panel are left out.');
  js(["const evaluation = await calcium.evaluate(job, { truth: 'calcium-demo' });", 'evaluation']);
}

/**
 * The atlas, explained on the demo's own map of its ground-truth neurons (demo-atlas.ts makes the
 * table and the map): how to open and brush it, the selection as a table that an SQL cell reads
 * (the next cell, which re-runs for everyone at each brush), the neurons lighting up in the
 * viewer, categories and the agent.
 */
function fillDemoAtlas(doc: Y.Doc, o: ReturnType<typeof serverOrigin>, author: string): void {
  const table = DEMO_NEURONS_TABLE;
  createCell(doc, {
    kind: 'markdown', author,
    source: [
      '## Atlas: brush a map of the neurons together',
      '',
      `The table \`${table}\` is the simulator's ground truth: one row per neuron of the recording, with its centroid, area, SNR, spike count, firing rate and peak SNR. The **Atlas** is a shared 2-D map of a table's rows, computed on the server: the map *Demo neurons* places the neurons by a UMAP of five activity features (similar neurons sit together), coloured by firing rate, with its clusters labelled.`,
      '',
      '- **Open it**: *Atlas* in the header. *+ New map* maps any table: two columns as x and y, PCA or UMAP of numeric columns, or TF-IDF of a text column.',
      "- **Brush**: pick *Lasso* or *Rectangle* (or Shift+drag) and draw around some points. The selection is everyone's: all see it, and *Clear* (or Delete) clears it for everyone.",
      `- **Read it in SQL**: the selected rows are the table \`${table}_map_selection\` (\`row\`, \`x\`, \`y\` and every column of \`${table}\`). The next cell reads it and runs again for everyone whenever someone brushes.`,
      "- **See them in the viewer**: the neurons you select light up in the viewer (orange; a highlighted category magenta) on the layer *Atlas: Demo neurons*, over their footprints. A map of an analysis's ROI table (`calcium_demo_rois`, once the analysis above ran) does the same with its ROIs; ROIs deleted in *Analyses* stay hidden.",
      '- **Categories**: *Save as category* names the selection with a note; *Show on map* highlights a saved category for everyone (in the viewer too).',
      '- **Ask the agent**: "@agent what tells the clusters of the Demo neurons map apart?" It explores the map, highlights rows and answers with category cards.',
    ].join('\n'),
  }, o);
  createCell(doc, {
    kind: 'sql', author, name: 'selected_neurons',
    source: `SELECT count(*) AS neurons, sum(silent) AS silent, round(avg(rate_hz), 2) AS mean_rate_hz, round(avg(snr), 1) AS mean_snr\nFROM ${table}_map_selection`,
  }, o);
}

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
  fillDemoAnalysis(doc, o, author);
  fillDemoAtlas(doc, o, author);
  fillDemoViewer(doc);
  postMessage(doc, {
    author: { id: 'plexus', name: 'Plexus', kind: 'system' },
    text: 'Welcome! This chat is stored in the workspace: everyone here sees it.',
  }, o);
}
