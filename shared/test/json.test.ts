/**
 * isJson decides exactly as zod's z.json() (the document schema used that before, for every
 * output and viewer property): a differential test over odd values and thousands of random nested
 * ones, plus the schema rule that uses it.
 */
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { z } from 'zod';
import { isJson } from '../src/json.ts';
import { mulberry32 } from '../src/random.ts';
import { finishedRun } from '../src/doc-schema/index.ts';
import { contentProblem } from '../src/doc-schema/rules.ts';
import { json } from '../src/doc-schema/spec.ts';

const zodJson = z.json();

class Point {
  constructor(public x = 1) {}
}

/** Values at the edges of what JSON is (each also nested inside an array and an object below). */
const odd: unknown[] = [
  null, undefined, true, false, 0, -0, 1.5, -1e308, Number.MAX_VALUE, Number.MIN_VALUE, NaN, Infinity, -Infinity,
  '', 'x', '\u0000', 1n, Symbol('s'), () => 1, [], {}, [[[]]], { a: { b: { c: [] } } },
  [1, , 2], // a hole
  new Array(3),
  { a: undefined }, { a: 1, b: undefined }, Object.create(null), Object.assign(Object.create(null), { a: 1 }),
  Object.assign(Object.create(null), { a: NaN }), new Date(0), new Uint8Array(2), new Map(), new Set(), /re/, new Point(),
  new Error('e'), Object.create({ inherited: 1 }), Object.create(Object.create(null)),
  { [Symbol('k')]: 1 }, Object.defineProperty({}, 'hidden', { value: NaN, enumerable: false }),
  Object.defineProperty({}, 'shown', { value: NaN, enumerable: true }),
  JSON.parse('{"__proto__": 1}'), JSON.parse('{"__proto__": {"a": 1}}'),
  // An own __proto__ key (as JSON.parse makes one) is not looked at by z.json(), whatever it holds.
  Object.defineProperty({}, '__proto__', { value: NaN, enumerable: true }),
  { constructor: 1 }, { constructor: Point }, { constructor: Object }, { constructor: { prototype: {} } },
  { get g() { return 1; } }, { get g() { return undefined; } },
  Object.assign([1, 2], { extra: NaN }), new String('s'), new Number(1), new Boolean(true),
];

/** A random value: JSON most of the time, with an odd value somewhere at random depth now and then. */
function randomValue(next: () => number, depth = 0): unknown {
  const r = next();
  if (depth > 4 || r < 0.3) {
    const p = next();
    if (p < 0.03) return odd[Math.floor(next() * odd.length)];
    return [null, true, false, Math.floor(next() * 1000) - 500, next() * 1e6, 'text', ''][Math.floor(next() * 7)];
  }
  if (r < 0.6) return Array.from({ length: Math.floor(next() * 5) }, () => randomValue(next, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(next() * 5); i > 0; i--) o[`k${Math.floor(next() * 10)}`] = randomValue(next, depth + 1);
  return o;
}

describe('isJson', () => {
  it('decides every odd value as z.json() does, alone and nested', () => {
    for (const v of odd) {
      for (const x of [v, [v], [1, [v]], { a: v }, { a: 1, b: { c: v } }]) {
        expect(isJson(x), `${String(Object.prototype.toString.call(v))} ${typeof v}`).toBe(zodJson.safeParse(x).success);
      }
    }
  });

  it('decides 20,000 random nested values as z.json() does (both answers well represented)', () => {
    const next = mulberry32(7);
    let yes = 0;
    for (let i = 0; i < 20_000; i++) {
      const v = randomValue(next);
      const expected = zodJson.safeParse(v).success;
      expect(isJson(v)).toBe(expected);
      if (expected) yes++;
    }
    expect(yes).toBeGreaterThan(2_000);
    expect(yes).toBeLessThan(19_000);
  });

  it('is what the schema checks outputs with: a run whose output holds a non-JSON value is refused', () => {
    const run = { runId: 'r1', state: 'done', outputs: [{ type: 'table', rows: [{ v: 1 }] }] };
    expect(finishedRun.safeParse(run).success).toBe(true);
    expect(finishedRun.safeParse({ ...run, outputs: [{ type: 'table', rows: [{ v: NaN }] }] }).success).toBe(false);
    expect(finishedRun.safeParse({ ...run, outputs: [{ type: 'table', rows: [new Uint8Array(1)] }] }).success).toBe(false);
    const node = json('a finished cell run', finishedRun);
    expect(contentProblem(node, new Y.ContentAny([run]))).toBeNull();
    expect(contentProblem(node, new Y.ContentAny([{ ...run, outputs: [{ type: 'x', v: Infinity }] }]))).toMatch(/not a JSON value/);
  });
});
