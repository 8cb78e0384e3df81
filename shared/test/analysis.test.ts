import { describe, expect, it } from 'vitest';
import { analyzeCell, analyzeJs, analyzeSql } from '../src/notebook/analysis.ts';

const defs = (s: string) => analyzeJs(s).defs;
const refs = (s: string) => analyzeJs(s).refs;

describe('analyzeJs: definitions', () => {
  it('declarations of every kind at top level', () => {
    expect(defs('const a = 1; let b; var c = 2; function f() {} class K {}')).toEqual(['a', 'b', 'c', 'f', 'K']);
  });
  it('destructuring, defaults, rest', () => {
    expect(defs('const { a, b: [c, ...d], e = 1, ...f } = obj; const [g, , h = 2] = arr;')).toEqual(['a', 'c', 'd', 'e', 'f', 'g', 'h']);
  });
  it('vars inside top-level blocks and loops are hoisted to the cell, lets are not', () => {
    expect(defs('if (x) { var a = 1; let b = 2 } for (var i = 0; i < 3; i++) {} { const c = 1 }')).toEqual(['a', 'i']);
  });
  it('imports define their local names', () => {
    const a = analyzeJs("import { mean as avg, sum } from 'd3-array';\nimport * as ss from 'simple-statistics';\nimport def from 'x';");
    expect(a.defs).toEqual(['avg', 'sum', 'ss', 'def']);
    expect(a.refs).toEqual([]);
    expect(a.imports!.map((i) => [i.source, i.bindings])).toEqual([
      ['d3-array', [{ local: 'avg', imported: 'mean' }, { local: 'sum', imported: 'sum' }]],
      ['simple-statistics', [{ local: 'ss', imported: '*' }]],
      ['x', [{ local: 'def', imported: 'default' }]],
    ]);
  });
  it('names inside functions, blocks and classes are not definitions', () => {
    expect(defs('function f(p) { const inner = p; return inner } const g = () => { let z = 1 }; class A { m() { const q = 1 } }')).toEqual(['f', 'g', 'A']);
  });
});

describe('analyzeJs: references', () => {
  it('free names are references, own definitions are not', () => {
    expect(refs('const y = x * 2 + y0; const z = y + 1;')).toEqual(['x', 'y0']);
  });
  it('parameters, locals and closures shadow outer names', () => {
    expect(refs('function f(x) { const y = x + w; return (z) => z + y + v } const h = (a, { b, c = d }) => a + b + c;')).toEqual(['w', 'v', 'd']);
  });
  it('a local declared later in a block still shadows (hoisting, TDZ)', () => {
    expect(refs('function f() { g(); function g() { return q } var r = s; return r }')).toEqual(['q', 's']);
    expect(refs('{ x; let x = 1 } x;')).toEqual(['x']);
  });
  it('shadowing by catch parameters, for-loop bindings and class names', () => {
    expect(refs('try { a() } catch (e) { e.message + b } for (const k of ks) k; for (let i = 0; i < n; i++) i; class C { static make() { return new C() } }')).toEqual([
      'a', 'b', 'ks', 'n',
    ]);
  });
  it('property names, object keys, labels and member accesses are not references', () => {
    expect(refs('const o = { key: val, [comp]: 1, short }; o.prop; o[idx]; lbl: for (;;) { break lbl }')).toEqual(['val', 'comp', 'short', 'idx']);
  });
  it('class members: computed keys and field initialisers read names, method names do not', () => {
    expect(refs('class A extends Base { field = init; [k] = 1; static s = t; m() { return this.field + u } }')).toEqual(['Base', 'init', 'k', 't', 'u']);
  });
  it('async functions and top-level await', () => {
    const a = analyzeJs('const data = await fetchRows(url);\nasync function load() { return await other() }\ndata.length');
    expect(a.error).toBeUndefined();
    expect(a.defs).toEqual(['data', 'load']);
    expect(a.refs).toEqual(['fetchRows', 'url', 'other']);
    expect(a.lastExpression).toBeDefined();
  });
  it('assignment to an undeclared name reads it; arguments is bound in functions', () => {
    expect(refs('counter = counter + 1; function f() { return arguments.length }')).toEqual(['counter']);
  });
  it('template literals, spreads, optional chains, new, tagged templates', () => {
    expect(refs('`${a} ${b?.c}`; f(...xs); new K(y); tag`t${z}`')).toEqual(['a', 'b', 'f', 'xs', 'K', 'y', 'tag', 'z']);
  });
  it('globals are references too (the graph ignores names no cell defines)', () => {
    expect(refs('Math.max(1, 2); console.log(JSON.stringify(x))')).toEqual(['Math', 'console', 'JSON', 'x']);
  });
  it('the last expression statement is the display value', () => {
    const src = 'const a = 1;\na + 1';
    const a = analyzeJs(src);
    expect(src.slice(a.lastExpression!.start, a.lastExpression!.end)).toBe('a + 1');
    expect(analyzeJs('const a = 1;').lastExpression).toBeUndefined();
  });
  it('tells whether a cell could run long (loops, calls, awaits, imports)', () => {
    expect(analyzeJs('const a = b + 1; const o = { x: [a] };').mayLoop).toBe(false);
    for (const src of ['f()', 'new K()', 'while (x) {}', 'for (const y of ys) ;', 'await p', "import { mean } from 'd3-array'", 'tag`x`'])
      expect(analyzeJs(src).mayLoop, src).toBe(true);
  });
  it('syntax errors report a line and column', () => {
    const a = analyzeJs('const a = 1;\nconst = 2;');
    expect(a.error).toMatchObject({ line: 2 });
    expect(a.defs).toEqual([]);
  });
});

describe('analyzeSql', () => {
  it('defines its name, reads $params and identifiers, skips strings and comments', () => {
    const a = analyzeSql("SELECT * FROM trials t -- from other_cell\nWHERE t.rate > $threshold AND name = 'summary' /* $nope */", 'filtered');
    expect(a.defs).toEqual(['filtered']);
    expect(a.params).toEqual(['threshold']);
    expect(a.refs).toContain('threshold');
    expect(a.refs).toContain('trials');
    expect(a.refs).not.toContain('summary');
    expect(a.refs).not.toContain('other_cell');
    expect(a.refs).not.toContain('nope');
    expect(a.refs).not.toContain('filtered');
  });
  it('quoted identifiers count, invalid names are an error', () => {
    expect(analyzeSql('select * from "my table"').refs).toContain('my table');
    expect(analyzeSql('select 1', '1bad').error?.message).toMatch(/not a valid name/);
    expect(analyzeSql('select 1').defs).toEqual([]);
  });
  it('markdown defines and reads nothing', () => {
    expect(analyzeCell('markdown', '# x = y')).toEqual({ defs: [], refs: [] });
  });
});
