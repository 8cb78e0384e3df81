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
  /** Cell id → its place in `order`. */
  position: Map<string, number>;
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
  return { order, position: new Map(order.map((id, i) => [id, i])), definers, upstream, downstream, errors, unresolved };
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
 * `ids` (Kahn's algorithm; among ready cells the one first in the notebook goes first). Cells in a
 * cycle, and cells downstream of one, are left out: they can't run.
 *
 * Only `ids` and the cells they read, transitively, take part: no other cell makes one of them
 * ready, so Kahn's algorithm over that part pops them in the order it would over the whole graph.
 * With the ready cells in a heap by notebook position, ordering a short chain in a long notebook
 * costs the chain, not the notebook (it sorted every ready cell of the notebook at each step).
 */
export function topoOrder(g: NotebookGraph, ids: Iterable<string>): string[] {
  const want = new Set<string>();
  for (const id of ids) if (g.upstream.has(id)) want.add(id);
  const part = ancestors(g, want);
  for (const id of want) part.add(id);
  const indeg = new Map<string, number>();
  const ready = new PositionHeap();
  for (const id of part) {
    const n = g.errors.get(id)?.kind === 'cycle' ? Infinity : g.upstream.get(id)!.size;
    indeg.set(id, n);
    if (n === 0) ready.push(g.position.get(id)!);
  }
  const out: string[] = [];
  while (ready.size) {
    const id = g.order[ready.pop()]!;
    if (want.has(id)) out.push(id);
    for (const d of g.downstream.get(id)!) {
      const n = indeg.get(d);
      if (n === undefined) continue; // not in the part: neither wanted nor read by a wanted cell
      indeg.set(d, n - 1);
      if (n - 1 === 0) ready.push(g.position.get(d)!);
    }
  }
  return out;
}

/** A min-heap of notebook positions. */
class PositionHeap {
  private readonly items: number[] = [];
  get size(): number {
    return this.items.length;
  }
  push(p: number): void {
    const a = this.items;
    a.push(p);
    for (let i = a.length - 1; i > 0; ) {
      const up = (i - 1) >> 1;
      if (a[up]! <= a[i]!) break;
      [a[up], a[i]] = [a[i]!, a[up]!];
      i = up;
    }
  }
  pop(): number {
    const a = this.items;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length) {
      a[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && a[l]! < a[m]!) m = l;
        if (r < a.length && a[r]! < a[m]!) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i]!, a[m]!];
        i = m;
      }
    }
    return top;
  }
}

/** A one-line, human explanation of a structural error, for the cell's error output. */
export function describeGraphError(e: GraphError, label: (id: string) => string = (id) => id): string {
  if (e.kind === 'duplicate')
    return `${e.names.map((n) => `"${n}"`).join(', ')} ${e.names.length > 1 ? 'are' : 'is'} also defined by ${e.others.map(label).join(', ')}: a name may be defined by one cell only`;
  return `cycle: ${e.cycle.map(label).join(' → ')} → ${label(e.cycle[0]!)} read each other's definitions`;
}
