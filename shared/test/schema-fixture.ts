/**
 * A workspace that holds at least one instance of every record and key the document schema
 * declares, written only through the shared helpers, each with the origin of the writer that
 * really writes it (person, agent, kernel, server). The schema tests check that this document is
 * valid, that every write in it passes the writer's rules, and use it as the base of one
 * violating update per rule. A feature that adds state adds its writes here.
 */
import * as Y from 'yjs';
import * as S from '../src/index.ts';

export interface FixtureWrite {
  writer: S.Writer;
  violations: S.Violation[];
}

/**
 * Builds the fixture; `onWrite` sees each transaction's check against its own writer. `on` is a
 * workspace to build it in (a server's, already initialised), else a new one.
 */
export function buildFixture(onWrite?: (w: FixtureWrite) => void, on?: Y.Doc): Y.Doc {
  const doc = on ?? new Y.Doc();
  doc.on('afterTransaction', (tr: Y.Transaction) => {
    const writer = S.writerOfOrigin(tr.origin);
    if (writer && onWrite) onWrite({ writer, violations: S.checkTransaction(tr, writer) });
  });
  const server = S.serverOrigin('fixture');
  const person = S.userOrigin('u_ada', 'Ada');
  const agent = S.agentOrigin('r_1');
  const kernel = S.KERNEL_ORIGIN;
  const ada = { id: 'u_ada', name: 'Ada' };

  if (!on) S.initWorkspace(doc, { title: 'Fixture', created: 1 }, server);
  S.setTitle(doc, 'Fixture workspace', person);
  S.setSetting(doc, 'agentMode', 'direct', person);
  S.setSetting(doc, 'neuroglancerHost', 'https://example.org/', person);
  S.setSetting(doc, 'planApproval', 'wait', person);
  S.setAgentInstructions(doc, 'Use 30 Hz unless told otherwise.', person);
  // Presenter mode: Ada presents, stops, and presents again.
  S.startPresenting(doc, ada, person, 2);
  S.stopPresenting(doc, person, 'u_ada');
  S.startPresenting(doc, ada, person, 3);

  // Notebook: markdown, code and a named SQL cell; the code cell has run.
  S.createCell(doc, { kind: 'markdown', source: '# Title\n\nSome *text*, `code` and a [link](https://example.org).\n\n- one\n- two', author: 'u_ada', id: 'c_md' as S.CellId }, person);
  S.createCell(doc, { kind: 'code', source: 'x = 1', author: 'u_ada', id: 'c_code' as S.CellId }, person);
  S.createCell(doc, { kind: 'sql', source: 'select 1 as one', author: 'agent', id: 'c_sql' as S.CellId, name: 'q' }, agent);
  S.insertCellText(doc, 'c_code', 5, '\ny = x + 1', person);
  S.setCellName(doc, 'c_sql', 'q2', person);
  S.moveCell(doc, 'c_sql', { index: 0 }, person);
  const req = S.requestRun(doc, 'c_code', ada, person)!;
  S.requestRun(doc, 'c_sql', { id: 'agent' }, agent);
  const code = () => S.getCell(doc, 'c_code')!;
  S.ackRequest(doc, code(), req, kernel);
  S.setPending(doc, code(), { runId: 'k_1', requestId: req, trigger: 'request', requestedBy: ada, queuedAt: 2 }, kernel);
  const run = S.startExec(doc, code(), { runId: 'k_1', requestId: req, trigger: 'request', requestedBy: ada, count: 1, generation: 1, startedAt: 3, sourceHash: 'h', source: 'x = 1', defines: [] }, kernel);
  S.appendStream(run, 'stdout', 'hello\n', kernel);
  S.appendStream(run, 'stdout', 'again\n', kernel);
  S.pushOutputs(run, [{ type: 'table', columns: [{ name: 'a', type: 'INTEGER' }], rows: [{ a: 1 }], totalRows: 1 }, { type: 'image', mime: 'image/png', data: 'iVBORw0KGgo=' }], kernel);
  S.finishExec(run, { state: 'done', defines: ['x', 'y'], outputs: [{ type: 'text', text: '2' }] }, kernel);
  // A run still going: its map, with a stream it writes into.
  S.createCell(doc, { kind: 'code', source: 'slow()', author: 'u_ada', id: 'c_live' as S.CellId }, person);
  const live = S.startExec(doc, S.getCell(doc, 'c_live')!, { runId: 'k_4', requestId: null, trigger: 'run-all', requestedBy: ada, count: 3, generation: 1, startedAt: 10, sourceHash: 'h4', source: 'slow()', defines: [] }, kernel);
  S.appendStream(live, 'stderr', 'working\n', kernel);
  S.pushOutputs(live, [{ type: 'text', text: 'half way' }], kernel);
  S.setStale(doc, code(), { reason: 'inputs changed', names: ['z'], at: 4 }, kernel);
  const sql = () => S.getCell(doc, 'c_sql')!;
  S.cancelExec(doc, sql(), { runId: 'k_0', requestId: null, trigger: 'upstream', requestedBy: null, count: 0, generation: 1, sourceHash: 'h', source: 'select 1', defines: [], reason: 'upstream failed' }, [{ type: 'error', name: 'Error', message: 'upstream failed' }], kernel);
  S.setPending(doc, sql(), { runId: 'k_2', requestId: null, trigger: 'upstream', requestedBy: null, queuedAt: 8 }, kernel);
  // A fast cell's run, written whole when it ended: one plain value.
  S.createCell(doc, { kind: 'code', source: 'z = 3', author: 'u_ada', id: 'c_fast' as S.CellId }, person);
  S.recordExec(doc, S.getCell(doc, 'c_fast')!, { runId: 'k_3', requestId: null, trigger: 'upstream', requestedBy: ada, count: 2, generation: 1, startedAt: 9, sourceHash: 'h3', source: 'z = 3', defines: [] },
    { state: 'done', defines: ['z'], outputs: [{ type: 'text', text: '3' }, { type: 'table', columns: [{ name: 'a', type: 'INTEGER' }], rows: [{ a: 1 }], totalRows: 1 }] }, kernel);
  S.requestRunAll(doc, ada, person);
  S.requestRunStale(doc, ada, person);
  S.requestInterrupt(doc, { id: 'agent' }, agent);
  S.requestRestart(doc, ada, person);
  S.writeKernelStatus(doc, { state: 'idle', generation: 1, count: 1, current: null, queue: [], handled: { runAll: 'k' }, limits: { timeoutMs: 1, memoryMb: 1 }, sandbox: [], updatedAt: 5 }, kernel);

  // A notebook imported from Jupyter (server): a Python cell with its outputs, and the notebook metadata.
  S.importNotebook(doc, S.ipynbToNotebook({
    nbformat: 4, nbformat_minor: 5,
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
    cells: [{ cell_type: 'code', id: 'py1', metadata: { tags: ['x'] }, source: 'print(1)', execution_count: 1, outputs: [{ output_type: 'stream', name: 'stdout', text: '1\n' }] }],
  }), 'u_ada', server);

  // Data registry (server: uploads), one table removed by a person.
  const table = (name: string): S.DataTable => ({ name, fileName: `${name}.csv`, format: 'csv', columns: [{ name: 'a', type: 'BIGINT' }], rows: 1, bytes: 2, storedBytes: 3, uploadedBy: ada, created: 6 });
  S.registerTable(doc, table('rois'), server);

  // The method library (server: indexed uploads and shipped notes); a person removes one; a note cell.
  const libDoc = (id: string, builtin: boolean): S.LibraryDoc => ({ id, name: `${id}.md`, format: 'md', chars: 10, passages: 1, bytes: 10, uploadedBy: builtin ? null : ada, builtin, created: 8 });
  S.registerLibraryDoc(doc, libDoc('lib_dff', true), server);
  S.registerLibraryDoc(doc, libDoc('lib_mine', false), server);
  S.removeLibraryDoc(doc, 'lib_mine', person);
  S.setCellTags(doc, 'c_md', ['note', 'methods'], person);

  // The atlas: a map people made, its coordinates (server), a brush, highlights (the agent) and categories.
  const mapId = S.createAtlasMap(doc, { table: 'rois', method: 'umap', columns: ['a'], title: 'ROIs', colorBy: 'a', id: 'm_1' }, ada, person);
  S.setAtlasCoords(doc, mapId, { status: 'running', progress: { stage: 'umap', done: 10, total: 200 }, at: 9 }, server);
  S.setAtlasCoords(doc, mapId, { status: 'done', table: 'rois_map', points: 1, labels: [{ cluster: 0, x: 1, y: 2, text: 'one', size: 1 }], how: 'UMAP of 1 numeric column', at: 10 }, server);
  S.setAtlasColorBy(doc, mapId, 'a', person);
  S.setAtlasSelection(doc, mapId, { kind: 'lasso', points: [[0, 0], [1, 0], [1, 1]], by: 'u_ada', name: 'Ada', at: 11 }, person);
  S.setAtlasSelection(doc, mapId, { kind: 'rect', x0: 0, y0: 0, x1: 1, y1: 1, by: 'u_ada', at: 12 }, person);
  S.setAtlasHighlight(doc, mapId, { rows: [0], label: 'the brightest', by: 'agent', name: 'Plexus agent', at: 13 }, agent);
  S.saveAtlasCategory(doc, mapId, 'bright', { rows: [0], note: 'bright ones', summary: 'one row', by: 'agent', at: 14 }, agent);
  S.saveAtlasCategory(doc, mapId, 'gone', { rows: [0], note: 'x', by: 'u_ada', at: 15 }, person);
  S.removeAtlasCategory(doc, mapId, 'gone', person);
  S.createAtlasMap(doc, { table: 'rois', method: 'pca', columns: ['a'], id: 'm_2' }, ada, person);
  S.removeAtlasMap(doc, 'm_2', person);
  // Checkpoints (the server): one made before an agent run, one forgotten by retention; a person's restore of a cell.
  S.putCheckpoint(doc, { id: 'cp_1', label: 'before the agent', kind: 'agent-run', by: { id: 'u_ada', name: 'Ada', kind: 'person' }, at: 20, bytes: 100, cells: 2, run: 'r_1' }, server);
  S.putCheckpoint(doc, { id: 'cp_2', label: 'every few minutes', kind: 'activity', by: { id: 'plexus', kind: 'server' }, at: 21, bytes: 100, cells: 2 }, server);
  S.removeCheckpoints(doc, ['cp_2'], server);
  // A text map by the server's embedding service.
  S.createAtlasMap(doc, { table: 'rois', method: 'embeddings', columns: ['note'], title: 'Notes', id: 'm_3' }, ada, person);
  S.setAtlasCoords(doc, 'm_3', { status: 'running', table: 'rois_map_2', progress: { stage: 'embedding', done: 128, total: 300 }, at: 16 }, server);
  S.registerTable(doc, table('old'), server);
  S.unregisterTable(doc, 'old', person);

  // Analysis jobs (server): one finished with a result whose ROIs people edited, one stopped by a person, one removed.
  const job = (id: string): Parameters<typeof S.createJob>[1] => ({ id, kind: 'calcium', title: 'Calcium analysis of calcium-demo/movie', input: { dataset: 'calcium-demo', layer: 'movie' }, params: { frameRate: 30 }, requestedBy: { id: 'u_ada', name: 'Ada', via: 'person' }, created: 7 });
  S.createJob(doc, job('j_1'), server);
  S.updateJob(doc, 'j_1', { status: 'running', progress: { stage: 'registration', done: 10, total: 900, eta: 12, at: 8 }, params: { frameRate: 30, tauDecay: 0.7 } }, server);
  S.updateJob(doc, 'j_1', { status: 'done', result: { dataset: 'ws-calcium-j_1', rois: 3 } }, server);
  S.setRoiEdit(doc, 'j_1', 2, { action: 'delete', by: 'u_ada', name: 'Ada', at: 9 }, person);
  S.setRoiEdit(doc, 'j_1', 3, { action: 'merge', into: 1, by: 'agent', at: 9 }, agent);
  S.setRoiEdit(doc, 'j_1', 4, { action: 'delete', by: 'u_ada', at: 9 }, person);
  S.setRoiEdit(doc, 'j_1', 4, null, person);
  S.setRoiEdit(doc, 'j_1', 5, { action: 'classify', cell: true, by: 'u_ada', name: 'Ada', at: 9 }, person);
  S.createJob(doc, { ...job('j_2'), kind: 'tiff-import', input: { fileName: 'stack.tif' } }, server);
  S.requestJobStop(doc, 'j_2', ada, person);
  S.updateJob(doc, 'j_2', { status: 'error', error: 'the file ends inside page 3' }, server);
  S.createJob(doc, job('j_3'), server);
  S.removeJob(doc, 'j_3', person);

  // Chat and an agent run with everything it records.
  const ask = S.postMessage(doc, { author: { id: 'u_ada', name: 'Ada', kind: 'person' }, text: '@agent plot it' }, person);
  const runId = S.requestAgentRun(doc, { by: ada, messageId: ask, text: 'plot it', id: 'r_1' }, person);
  const reply = S.postMessage(doc, { author: { id: 'agent', name: 'Plexus agent', kind: 'agent' }, text: '', status: 'streaming', replyTo: ask, runId }, agent);
  S.startRun(doc, runId, { replyId: reply, model: 'm' }, agent);
  S.appendToMessage(doc, reply, 'Done: ', agent);
  S.setMessageStatus(doc, reply, 'done', agent);
  S.setRunPlan(doc, runId, [{ text: 'look', status: 'done' }], agent);
  // Its analysis plan: the route, the brief people steer, steps the agent runs and people edit.
  S.setRoute(doc, runId, { kind: 'analysis', reason: 'several steps', scopes: ['notebook', 'calcium'] }, agent);
  S.setPlan(doc, runId, { clarified: 'Plot it', assumptions: ['30 Hz'], alternatives: [{ label: 'Histogram', request: 'plot a histogram' }], parameters: { frameRate: 30, smooth: true, table: 'rois' }, waiting: true }, [
    { id: 's1', goal: 'Load it', dependsOn: [], scope: ['data'], expect: { n_rows: { min: 0, integer: true, why: 'a count' } } },
    { id: 's2', goal: 'Plot it', dependsOn: ['s1'], scope: ['notebook'] },
  ], agent);
  S.editAssumptions(doc, runId, '30 Hz\nGCaMP6f', person);
  S.pickAlternative(doc, runId, { label: 'Histogram', request: 'plot a histogram' }, ada, person);
  S.pressGo(doc, runId, ada, person);
  S.setBriefWaiting(doc, runId, false, agent);
  S.editStepGoal(doc, runId, 's2', 'Plot it as a line', person);
  S.setStepDependsOn(doc, runId, 's2', ['s1'], person);
  const added = S.addPlanStep(doc, runId, { goal: 'Save a figure', dependsOn: ['s2'], afterId: 's2', id: 'p_1' }, ada, person);
  if (added !== 'p_1') throw new Error('fixture: a person should add a step');
  S.removePlanStep(doc, runId, 'p_1', ada, person);
  S.updatePlanStep(doc, runId, 's1', { status: 'running', attempts: 1, startedAt: 5 }, agent);
  S.updatePlanStep(doc, runId, 's1', {
    status: 'done', endedAt: 6, summary: 'loaded 3 rows', values: { n_rows: 3, unit: 'rows' },
    verdict: { passed: true, confidence: 0.9, issues: [], suggestions: [], checks: [{ name: 'reported', passed: true, detail: 'ok' }] },
    provenance: [{ kind: 'cell', id: 'c_sql', label: 'cell 1' }, { kind: 'table', id: 'rois', label: 'table rois' }],
  }, agent);
  S.updatePlanStep(doc, runId, 's2', { status: 'skipped', reason: 'stopped by Ada', endedAt: 7 }, agent);
  const act = S.startActivity(doc, runId, 'get_cell', '{"id":"c_code"}', agent, 's1')!;
  S.finishActivity(doc, runId, act, 'done', 'ok', agent);
  S.recordStep(doc, runId, { prompt: 1, completion: 2, total: 3 }, agent);
  S.addAudit(doc, runId, { tool: 'create_cell', change: 'created', target: 'cell:c_sql' }, agent);
  const card = S.postProposal(doc, { author: { id: 'agent', name: 'Plexus agent', kind: 'agent' }, replyTo: ask, proposal: { runId, action: { type: 'delete_cell', cellId: 'c_md', source: '#' }, title: 'delete', destructive: 'deletes a cell' } }, agent);
  S.setSuggestions(doc, reply, { values: [{ label: 'more', value: 'more please' }], actions: [{ label: 'Run', action: 'run_cell', target: 'c_code' }] }, agent);
  S.dismissProposal(doc, card, ada, person);
  S.requestRunStop(doc, runId, ada, person);
  S.finishRun(doc, runId, 'stopped', 'stopped by Ada', agent);
  if (!S.getRun(doc, runId)?.reason) throw new Error('fixture: the run should have a reason');
  S.requestRunUndo(doc, runId, ada, person);
  S.setUndoOutcome(doc, runId, { ok: true, at: 7, by: 'u_ada', message: 'undone' }, agent);

  // Viewer: state keys, a layer with shader controls and annotations, a named view.
  S.replaceViewerState(doc, {
    dimensions: { x: [1e-6, 'm'], y: [1e-6, 'm'], t: [1, 's'] },
    position: [1, 2, 3],
    layout: 'xy',
    layers: [{ type: 'image', source: 'precomputed://x', name: 'movie', shader: 'void main(){}', shaderControls: { gain: 1 } }],
  }, person);
  S.setCamera(doc, { crossSectionScale: 2 }, agent);
  S.setLayerProps(doc, 'movie', { opacity: 0.5 }, person);
  S.setShaderControl(doc, 'movie', 'gain', 2, agent);
  S.addLayer(doc, { type: 'annotation', source: 'local://annotations', name: 'rois' }, agent);
  S.addAnnotations(doc, 'rois', [{ type: 'point', point: [1, 2, 3] }], agent);
  S.saveNamedView(doc, 'start', S.readViewerState(doc), 'u_ada', person);

  // The atlas in the viewer: maps of a table whose ids name a segmentation show their selected
  // rows' segments on a layer of their own (server); a person's ROI deletion prunes one, a person
  // clearing the other's selection clears it.
  const labels = 'precomputed://plexus://volumes/calcium-demo/labels';
  S.addLayer(doc, { type: 'segmentation', source: labels, name: 'labels' }, person);
  S.registerTable(doc, { ...table('neurons'), columns: [{ name: 'id', type: 'BIGINT' }], segmentSource: labels }, server);
  for (const id of ['m_4', 'm_5']) {
    S.createAtlasMap(doc, { table: 'neurons', method: 'umap', columns: [], id }, ada, person);
    S.setAtlasSelection(doc, id, { kind: 'rect', x0: 0, y0: 0, x1: 1, y1: 1, by: 'u_ada', at: 17 }, person);
    S.writeAtlasViewer(doc, id, { selection: [1, 2], highlight: [] }, S.atlasViewerBasis(doc, id)!, server);
  }
  S.pruneAtlasViewers(doc, labels, (roi) => roi !== 2, person);
  S.setAtlasSelection(doc, 'm_5', null, person);
  // Forks: where this one came from (server), a raised hand (a person lowers it and raises it
  // again), and the roster of a hand-out's forks (server; one fork deleted).
  S.setForkedFrom(doc, { workspace: 'w_source', name: 'Source', at: 17, by: { id: 'link:handout/u_ada', name: 'Ada' }, checkpoint: 'cp_1', handout: true }, server);
  S.setHand(doc, { by: 'u_ada', name: 'Ada', at: 18 }, person);
  S.setHand(doc, null, person);
  S.setHand(doc, { by: 'u_ada', name: 'Ada', at: 19 }, person);
  const entry = (fork: string): S.RosterEntry => ({
    fork, student: { id: 'link:handout/u_bo', name: 'Bo' }, created: 20, active: 21, updated: 22,
    cells: { total: 2, ran: 2, ok: 1, errors: 1, running: 0 },
    lastError: { cellId: 'c_code', index: 2, message: 'ReferenceError: z is not defined', at: 21 },
    hand: { by: 'u_bo', name: 'Bo', at: 21 },
  });
  S.setRosterEntry(doc, entry('w_fork'), server);
  S.setRosterEntry(doc, entry('w_gone'), server);
  S.removeRosterEntry(doc, 'w_gone', server);
  return doc;
}
