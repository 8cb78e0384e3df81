import { describe, expect, it } from 'vitest';
import vm from 'node:vm';
import { analyzeJs } from '@plexus/shared';
import { compileJsCell } from '../../src/kernel/compile.ts';

async function run(src: string, inputs: Record<string, unknown> = {}) {
  const c = compileJsCell(src, analyzeJs(src), Object.keys(inputs));
  const helper = { last: undefined as unknown, import: async (n: string) => ({ default: `mod:${n}`, mean: (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length }) };
  const ctx = vm.createContext({ __plexusArgs: [helper, ...Object.values(inputs)] });
  const res = await vm.runInContext(c.code, ctx);
  return { defs: res.defs, last: helper.last, code: c.code };
}

describe('compileJsCell', () => {
  it('returns top-level definitions and the last expression; inputs are parameters', async () => {
    const r = await run('const y = x * 2;\nfunction f() { return y }\nclass K {}\nf() + 1', { x: 21 });
    expect(Object.keys(r.defs)).toEqual(['y', 'f', 'K']);
    expect(r.defs.y).toBe(42);
    expect(r.last).toBe(43);
  });
  it('rewrites imports to curated loads and keeps line numbers', async () => {
    const src = "import {\n  mean as avg\n} from 'd3-array';\nimport lib from 'x';\nconst m = avg([1, 3]);\nm";
    const r = await run(src);
    expect(r.defs.m).toBe(2);
    expect(r.defs.lib).toBe('mod:x');
    expect(r.code.split('\n').length).toBe(src.split('\n').length + 2); // the footer adds two lines
  });
  it('top-level await and strict mode', async () => {
    expect((await run('const v = await Promise.resolve(5);\nv')).last).toBe(5);
    await expect(run('undeclared = 1')).rejects.toThrow(/undeclared is not defined/);
  });
  it('columns shifted by the header and the last-expression wrapper are corrected', () => {
    const src = 'a;\n  b.c';
    const c = compileJsCell(src, analyzeJs(src), []);
    expect(c.shifts).toEqual([{ line: 1, column: 0, by: c.headerLength }, { line: 2, column: 2, by: '__plexus.last = ('.length }]);
  });
});
