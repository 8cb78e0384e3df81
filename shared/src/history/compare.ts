/**
 * Compare two states of a workspace (a checkpoint and now, or two checkpoints): cell by cell
 * (added, removed, changed source, moved, changed outputs) and the viewer key by key. Pure module.
 */
import type * as Y from 'yjs';
import { cellSource, listCells, type CellKind, type CellView } from '../cells.ts';
import { jsonEqual, type Json } from '../json.ts';
import { readExec, readOutputs } from '../notebook/runs.ts';
import type { CellOutput } from '../notebook/outputs.ts';
import { readViewerState } from '../viewer/state-doc.ts';

export interface CellDiff {
  id: string;
  status: 'added' | 'removed' | 'changed' | 'same';
  kind: CellKind;
  name?: string;
  /** Source in the older state (absent when added). */
  before?: string;
  /** Source in the newer state (absent when removed). */
  after?: string;
  sourceChanged: boolean;
  /** Its place among the cells both states have changed. */
  moved: boolean;
  outputsChanged: boolean;
  outputsBefore: CellOutput[];
  outputsAfter: CellOutput[];
  /** Run state in each (`done`, `error`…), when it ran. */
  stateBefore?: string;
  stateAfter?: string;
}

export interface ViewerKeyDiff {
  /** A top-level viewer key, or `layer <name>`. */
  key: string;
  before?: Json;
  after?: Json;
}

export interface DocDiff {
  cells: CellDiff[];
  viewer: ViewerKeyDiff[];
  counts: { added: number; removed: number; changed: number; same: number };
}

function cellInfo(c: CellView) {
  return { source: cellSource(c), outputs: readOutputs(c), state: readExec(c)?.state };
}

/** What changed from `older` to `newer`, in the newer state's cell order (removed cells where they were). */
export function compareDocs(older: Y.Doc, newer: Y.Doc): DocDiff {
  const a = listCells(older);
  const b = listCells(newer);
  const byIdA = new Map(a.map((c) => [c.id, c]));
  const byIdB = new Map(b.map((c) => [c.id, c]));
  const commonA = a.filter((c) => byIdB.has(c.id)).map((c) => c.id);
  const commonB = b.filter((c) => byIdA.has(c.id)).map((c) => c.id);
  const rankA = new Map(commonA.map((id, i) => [id, i]));
  const rankB = new Map(commonB.map((id, i) => [id, i]));
  const out: CellDiff[] = [];
  const emit = (c: CellView, before: CellView | undefined, after: CellView | undefined) => {
    const x = before ? cellInfo(before) : null;
    const y = after ? cellInfo(after) : null;
    const sourceChanged = !!x && !!y && x.source !== y.source;
    const outputsChanged = !!x && !!y && !jsonEqual(x.outputs, y.outputs);
    const moved = !!x && !!y && rankA.get(c.id) !== rankB.get(c.id);
    const kindChanged = !!before && !!after && before.kind !== after.kind;
    out.push({
      id: c.id,
      status: !before ? 'added' : !after ? 'removed' : sourceChanged || outputsChanged || moved || kindChanged || before.name !== after.name ? 'changed' : 'same',
      kind: c.kind,
      ...(c.name ? { name: c.name } : {}),
      ...(x ? { before: x.source, outputsBefore: x.outputs, ...(x.state ? { stateBefore: x.state } : {}) } : { outputsBefore: [] }),
      ...(y ? { after: y.source, outputsAfter: y.outputs, ...(y.state ? { stateAfter: y.state } : {}) } : { outputsAfter: [] }),
      sourceChanged,
      moved,
      outputsChanged,
    } as CellDiff);
  };
  // Walk the newer order, slotting each removed cell after the cell that preceded it in the older one.
  const removedAfter = new Map<string | null, CellView[]>();
  let prev: string | null = null;
  for (const c of a) {
    if (!byIdB.has(c.id)) {
      const list = removedAfter.get(prev) ?? [];
      list.push(c);
      removedAfter.set(prev, list);
    } else prev = c.id;
  }
  for (const r of removedAfter.get(null) ?? []) emit(r, r, undefined);
  for (const c of b) {
    emit(c, byIdA.get(c.id), c);
    for (const r of removedAfter.get(c.id) ?? []) emit(r, r, undefined);
  }
  const va = readViewerState(older);
  const vb = readViewerState(newer);
  const viewer: ViewerKeyDiff[] = [];
  for (const key of [...new Set([...Object.keys(va), ...Object.keys(vb)])].sort()) {
    if (key === 'layers') continue;
    if (!jsonEqual(va[key], vb[key])) viewer.push({ key, ...(key in va ? { before: va[key] } : {}), ...(key in vb ? { after: vb[key] } : {}) });
  }
  const layers = (s: typeof va) => new Map(((s.layers as Array<Record<string, Json>> | undefined) ?? []).map((l) => [String(l.name), l as Json]));
  const la = layers(va);
  const lb = layers(vb);
  for (const name of [...new Set([...la.keys(), ...lb.keys()])].sort()) {
    if (!jsonEqual(la.get(name), lb.get(name))) viewer.push({ key: `layer ${name}`, ...(la.has(name) ? { before: la.get(name)! } : {}), ...(lb.has(name) ? { after: lb.get(name)! } : {}) });
  }
  const counts = { added: 0, removed: 0, changed: 0, same: 0 };
  for (const d of out) counts[d.status]++;
  return { cells: out, viewer, counts };
}
