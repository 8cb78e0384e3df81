import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../src/random.ts';
import { ancestors, buildGraph, descendants, describeGraphError, topoOrder, type GraphCell, type NotebookGraph } from '../src/notebook/graph.ts';

const cell = (id: string, defs: string[], refs: string[]): GraphCell => ({ id, defs, refs });

describe('buildGraph', () => {
  it('links readers to definers, ignores names no cell defines', () => {
    const g = buildGraph([cell('a', ['x'], []), cell('b', ['y'], ['x', 'Math']), cell('c', [], ['y', 'x'])]);
    expect([...g.upstream.get('c')!]).toEqual(['b', 'a']);
    expect([...g.downstream.get('a')!].sort()).toEqual(['b', 'c']);
    expect(g.unresolved.get('b')).toEqual(['Math']);
    expect(g.errors.size).toBe(0);
  });
  it('a name defined by two cells is an error on both', () => {
    const g = buildGraph([cell('a', ['x', 'z'], []), cell('b', ['x', 'z'], []), cell('c', [], ['x'])]);
    expect(g.errors.get('a')).toEqual({ kind: 'duplicate', names: ['x', 'z'], others: ['b'] });
    expect(g.errors.get('b')).toEqual({ kind: 'duplicate', names: ['x', 'z'], others: ['a'] });
    expect(g.errors.has('c')).toBe(false);
    expect(describeGraphError(g.errors.get('a')!)).toMatch(/"x", "z" are also defined by b/);
  });
  it('a cycle is an error on every cell in it, not on cells outside it', () => {
    const g = buildGraph([cell('a', ['x'], ['z']), cell('b', ['y'], ['x']), cell('c', ['z'], ['y']), cell('d', [], ['z']), cell('e', ['w'], [])]);
    for (const id of ['a', 'b', 'c']) expect(g.errors.get(id)).toEqual({ kind: 'cycle', cycle: ['a', 'b', 'c'] });
    expect(g.errors.has('d')).toBe(false);
    expect(g.errors.has('e')).toBe(false);
    expect(topoOrder(g, ['a', 'b', 'c', 'd', 'e'])).toEqual(['e']);
    expect(describeGraphError(g.errors.get('b')!)).toBe('cycle: a → b → c → a read each other\'s definitions');
  });
  it('a cell reading its own definition is not a cycle', () => {
    const g = buildGraph([cell('a', ['x'], ['x'])]);
    expect(g.errors.size).toBe(0);
  });
});

describe('ordering', () => {
  it('topological order regardless of notebook order; ties by notebook order', () => {
    // Notebook order: c, b, a, d — but c reads b reads a; d is independent.
    const g = buildGraph([cell('c', [], ['y']), cell('b', ['y'], ['x']), cell('a', ['x'], []), cell('d', ['w'], [])]);
    expect(topoOrder(g, ['a', 'b', 'c', 'd'])).toEqual(['a', 'b', 'c', 'd']);
    // Order holds through cells left out of the set (c reads a through b).
    expect(topoOrder(g, ['d', 'c', 'a'])).toEqual(['a', 'c', 'd']);
  });
  it('diamonds run each cell once, after all its inputs', () => {
    const g = buildGraph([cell('a', ['x'], []), cell('b', ['y'], ['x']), cell('c', ['z'], ['x']), cell('d', [], ['y', 'z'])]);
    const order = topoOrder(g, ['a', ...descendants(g, ['a'])]);
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    expect([...ancestors(g, ['d'])].sort()).toEqual(['a', 'b', 'c']);
  });
  it('a 5,000-cell chain orders without overflowing the stack', () => {
    const cells = Array.from({ length: 5000 }, (_, i) => cell(`c${i}`, [`v${i}`], i ? [`v${i - 1}`] : []));
    const g = buildGraph([...cells].reverse());
    const order = topoOrder(g, ['c0', ...descendants(g, ['c0'])]);
    expect(order.length).toBe(5000);
    expect(order[0]).toBe('c0');
    expect(order[4999]).toBe('c4999');
    const cyc = buildGraph([...cells.slice(1), cell('c0', ['v0'], ['v4999'])]);
    expect(cyc.errors.size).toBe(5000);
  });

  /** Kahn's algorithm over the whole graph, sorting the ready cells at each step (the ordering as it was first written). */
  function wholeGraphOrder(g: NotebookGraph, ids: Iterable<string>): string[] {
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

  it('orders exactly as Kahn\'s algorithm over the whole graph, on random notebooks with cycles, duplicates and unknown ids', () => {
    const rand = mulberry32(11);
    const pick = (n: number) => Math.floor(rand() * n);
    let compared = 0;
    for (let round = 0; round < 300; round++) {
      const n = 1 + pick(60);
      const names = Math.max(2, pick(n + 10));
      const cells = Array.from({ length: n }, (_, i) => {
        const defs = Array.from({ length: pick(3) }, () => `n${pick(names)}`);
        // Mostly reads of names defined earlier in the notebook, some of any name (cycles, reads downward).
        const refs = Array.from({ length: pick(4) }, () => `n${rand() < 0.8 ? pick(Math.max(1, Math.round((names * (i + 1)) / n))) : pick(names + 3)}`);
        return cell(`c${i}`, defs, refs);
      });
      // Notebook order is not definition order.
      for (let i = cells.length - 1; i > 0; i--) {
        const j = pick(i + 1);
        [cells[i], cells[j]] = [cells[j]!, cells[i]!];
      }
      const g = buildGraph(cells);
      for (let k = 0; k < 5; k++) {
        const roots = Array.from({ length: 1 + pick(3) }, () => `c${pick(n)}`);
        const sets = [
          [...roots, ...descendants(g, roots)],
          Array.from({ length: pick(n + 1) }, () => `c${pick(n)}`),
          [...roots, 'not-a-cell'],
        ];
        for (const ids of sets) {
          expect(topoOrder(g, ids)).toEqual(wholeGraphOrder(g, ids));
          compared++;
        }
      }
    }
    expect(compared).toBe(4500);
  });

  it('a short chain in a long notebook is ordered without walking the notebook', () => {
    const others = Array.from({ length: 20_000 }, (_, i) => cell(`o${i}`, [`o${i}`], []));
    const chain = Array.from({ length: 5 }, (_, i) => cell(`c${i}`, [`v${i}`], i ? [`v${i - 1}`] : []));
    const g = buildGraph([...others, ...chain]);
    // What is read of the graph: only the chain's cells (a walk over the notebook would read all).
    const read = new Set<string>();
    const watched = { ...g, downstream: watch(g.downstream, read), upstream: watch(g.upstream, read) };
    expect(topoOrder(watched, ['c1', ...descendants(g, ['c1'])])).toEqual(['c1', 'c2', 'c3', 'c4']);
    expect([...read].every((id) => id.startsWith('c'))).toBe(true);
  });
});

/** `m`, with every key read through `get` recorded in `read`. */
function watch<V>(m: Map<string, V>, read: Set<string>): Map<string, V> {
  return new Proxy(m, {
    get(target, prop) {
      if (prop === 'get') return (k: string) => (read.add(k), target.get(k));
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}
