/**
 * The notebook's dependency graph: which cell defines each name, which cells read it, duplicate
 * definitions, cycles, and the topological order in which a set of cells runs (ties broken by
 * notebook order, so every replica computes the same order). Built from `CellAnalysis` results.
 * Pure module.
 */

/** One cell as the graph sees it. */
export interface GraphCell {
  id: string;
  defs: readonly string[];
  refs: readonly string[];
}

/** Why a cell cannot run whatever its inputs. */
export type GraphError =
  | { kind: 'duplicate'; names: string[]; others: string[] }
  | { kind: 'cycle'; cycle: string[] };

export interface NotebookGraph {
  /** Cell ids in notebook order. */
  order: string[];
  /** Name → ids of the cells defining it (more than one is a duplicate definition). */
  definers: Map<string, string[]>;
  /** Cell → cells whose definitions it reads. */
  upstream: Map<string, Set<string>>;
  /** Cell → cells that read its definitions. */
  downstream: Map<string, Set<string>>;
  /** Cells that are errors by structure (duplicate definitions, cycles). */
  errors: Map<string, GraphError>;
  /** Cell → the names it reads that no cell defines (globals, or "not defined"). */
  unresolved: Map<string, string[]>;
}

/** Builds the graph of `cells` (given in notebook order). */
export function buildGraph(cells: readonly GraphCell[]): NotebookGraph {
  const order = cells.map((c) => c.id);
  const definers = new Map<string, string[]>();
  for (const c of cells) for (const d of new Set(c.defs)) definers.set(d, [...(definers.get(d) ?? []), c.id]);
  const upstream = new Map<string, Set<string>>();
  const downstream = new Map<string, Set<string>>();
  const unresolved = new Map<string, string[]>();
  for (const c of cells) {
    upstream.set(c.id, new Set());
    downstream.set(c.id, new Set());
  }
  for (const c of cells) {
    const missing: string[] = [];
    for (const r of c.refs) {
      if (c.defs.includes(r)) continue;
      const ds = definers.get(r);
      if (!ds) {
        missing.push(r);
        continue;
      }
      for (const d of ds) {
        if (d === c.id) continue;
        upstream.get(c.id)!.add(d);
        downstream.get(d)!.add(c.id);
      }
    }
    if (missing.length) unresolved.set(c.id, missing);
  }
  const errors = new Map<string, GraphError>();
  for (const [name, ids] of definers) {
    if (ids.length < 2) continue;
    for (const id of ids) {
      const prev = errors.get(id);
      const others = ids.filter((x) => x !== id);
      if (prev?.kind === 'duplicate') {
        prev.names.push(name);
        for (const o of others) if (!prev.others.includes(o)) prev.others.push(o);
      } else errors.set(id, { kind: 'duplicate', names: [name], others });
    }
  }
  for (const scc of stronglyConnected(order, upstream)) {
    if (scc.length < 2) continue;
    const cycle = order.filter((id) => scc.includes(id));
    for (const id of cycle) if (!errors.has(id)) errors.set(id, { kind: 'cycle', cycle });
  }
  return { order, definers, upstream, downstream, errors, unresolved };
}

/** Tarjan's strongly connected components over `edges` (iterative: deep chains must not overflow). */
function stronglyConnected(nodes: readonly string[], edges: Map<string, Set<string>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  for (const root of nodes) {
    if (idx.has(root)) continue;
    const work: Array<{ v: string; it: Iterator<string> }> = [];
    const enter = (v: string) => {
      idx.set(v, index);
      low.set(v, index++);
      stack.push(v);
      onStack.add(v);
      work.push({ v, it: (edges.get(v) ?? new Set<string>()).values() });
    };
    enter(root);
    while (work.length) {
      const top = work[work.length - 1]!;
      const next = top.it.next();
      if (!next.done) {
        const w = next.value;
        if (!idx.has(w)) enter(w);
        else if (onStack.has(w)) low.set(top.v, Math.min(low.get(top.v)!, idx.get(w)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.v, Math.min(low.get(parent.v)!, low.get(top.v)!));
      if (low.get(top.v) === idx.get(top.v)) {
        const comp: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          comp.push(w);
        } while (w !== top.v);
        out.push(comp);
      }
    }
  }
  return out;
}

function closure(start: Iterable<string>, edges: Map<string, Set<string>>): Set<string> {
  const seen = new Set<string>();
  const todo = [...start];
  while (todo.length) {
    const id = todo.pop()!;
    for (const n of edges.get(id) ?? []) if (!seen.has(n)) seen.add(n), todo.push(n);
  }
  return seen;
}

/** Every cell that (transitively) reads what `ids` define, not including `ids` themselves. */
export const descendants = (g: NotebookGraph, ids: Iterable<string>): Set<string> => closure(ids, g.downstream);
/** Every cell whose definitions `ids` (transitively) read, not including `ids` themselves. */
export const ancestors = (g: NotebookGraph, ids: Iterable<string>): Set<string> => closure(ids, g.upstream);

/**
 * Orders `ids` so that every cell comes after the cells it reads, directly or through cells not in
 * `ids` (Kahn's algorithm over the whole graph; among ready cells the one first in the notebook
 * goes first). Cells in a cycle, and cells downstream of one, are left out: they can't run.
 */
export function topoOrder(g: NotebookGraph, ids: Iterable<string>): string[] {
  const want = new Set(ids);
  const pos = new Map(g.order.map((id, i) => [id, i]));
  const indeg = new Map<string, number>();
  for (const id of g.order) indeg.set(id, g.errors.get(id)?.kind === 'cycle' ? Infinity : g.upstream.get(id)!.size);
  const ready = g.order.filter((id) => indeg.get(id) === 0);
  const out: string[] = [];
  while (ready.length) {
    ready.sort((a, b) => pos.get(b)! - pos.get(a)!);
    const id = ready.pop()!;
    if (want.has(id)) out.push(id);
    for (const d of g.downstream.get(id)!) {
      const n = indeg.get(d)! - 1;
      indeg.set(d, n);
      if (n === 0) ready.push(d);
    }
  }
  return out;
}

/** A one-line, human explanation of a structural error, for the cell's error output. */
export function describeGraphError(e: GraphError, label: (id: string) => string = (id) => id): string {
  if (e.kind === 'duplicate')
    return `${e.names.map((n) => `"${n}"`).join(', ')} ${e.names.length > 1 ? 'are' : 'is'} also defined by ${e.others.map(label).join(', ')}: a name may be defined by one cell only`;
  return `cycle: ${e.cycle.map(label).join(' → ')} → ${label(e.cycle[0]!)} read each other's definitions`;
}
