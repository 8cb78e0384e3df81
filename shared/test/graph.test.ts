import { describe, expect, it } from 'vitest';
import { ancestors, buildGraph, descendants, describeGraphError, topoOrder, type GraphCell } from '../src/notebook/graph.ts';

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
});
