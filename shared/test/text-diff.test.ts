import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { applyTextDiff, textDiffOps, type TextOp } from '../src/index.ts';
import { REMOTE, Rng, syncPair } from './helpers.ts';

/** Applies ops to a plain string exactly as applyTextDiff applies them to a Y.Text. */
function applyToString(s: string, ops: TextOp[]): string {
  for (const op of ops) s = s.slice(0, op.index) + op.insert + s.slice(op.index + op.delete);
  return s;
}

/** A Y.Text holding `s`, in a doc of its own. */
function ytext(s: string, doc = new Y.Doc()): Y.Text {
  const t = doc.getText('t');
  t.insert(0, s);
  return t;
}

/** Changed characters: what a remote replica or a cursor actually feels. */
const cost = (ops: TextOp[]) => ops.reduce((n, op) => n + op.delete + op.insert.length, 0);

/** `base` with a few random splices applied; returns the text and an upper bound on its edit size. */
function mutate(rng: Rng, base: string, alphabet: string): { text: string; budget: number } {
  let text = base;
  let budget = 0;
  for (let k = rng.int(4); k >= 0; k--) {
    const at = rng.int(text.length + 1);
    const del = Math.min(rng.int(5), text.length - at);
    const ins = rng.string(rng.int(5), alphabet);
    text = text.slice(0, at) + ins + text.slice(at + del);
    budget += del + ins.length;
  }
  return { text, budget };
}

describe('textDiffOps', () => {
  it('returns nothing for equal texts and single ops for simple edits', () => {
    expect(textDiffOps('same', 'same')).toEqual([]);
    expect(textDiffOps('', 'new')).toEqual([{ index: 0, delete: 0, insert: 'new' }]);
    expect(textDiffOps('old', '')).toEqual([{ index: 0, delete: 3, insert: '' }]);
    expect(textDiffOps('hello world', 'hello brave world')).toEqual([{ index: 6, delete: 0, insert: 'brave ' }]);
    expect(textDiffOps('x = 1', 'x = 2')).toEqual([{ index: 4, delete: 1, insert: '2' }]); // a replacement is one op
  });

  it('never splits a surrogate pair (😀 and 😁 share their high surrogate)', () => {
    for (const [from, to] of [['a😀b', 'a😁b'], ['😀', '😁😀'], ['x😁😀', 'x😀']]) {
      const t = ytext(from!);
      t.doc!.transact(() => applyTextDiff(t, to!));
      expect(t.toString()).toBe(to); // a split pair would come back as U+FFFD
      for (const op of textDiffOps(from!, to!)) expect(op.insert).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
    }
  });

  it('gives indices already shifted by the earlier ops', () => {
    const ops = textDiffOps('aXbYc', 'a12bc3');
    expect(applyToString('aXbYc', ops)).toBe('a12bc3');
    expect(ops.map((o) => o.index)).toEqual([...ops.map((o) => o.index)].sort((a, b) => a - b));
  });
});

describe('applyTextDiff', () => {
  it('produces the target text for random strings (seeded property test)', () => {
    // Emoji are surrogate pairs in UTF-16 (Y.Text's unit): a split pair would corrupt the text.
    const alphabets = ['ab', 'abc \n', 'aé😀😁b\n', 'x'];
    for (let seed = 1; seed <= 400; seed++) {
      const rng = new Rng(seed);
      const alphabet = alphabets[seed % alphabets.length]!;
      const from = rng.string(rng.int(60), alphabet);
      const to = rng.bool(0.3) ? rng.string(rng.int(60), alphabet) : mutate(rng, from, alphabet).text;
      const ops = textDiffOps(from, to);
      expect(applyToString(from, ops), `seed ${seed}`).toBe(to);
      const t = ytext(from);
      t.doc!.transact(() => expect(applyTextDiff(t, to)).toBe(ops.length));
      expect(t.toString(), `seed ${seed}`).toBe(to);
    }
  });

  it('changes about as few characters as the edit that was made', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const rng = new Rng(seed);
      const from = rng.string(200 + rng.int(300), 'abcdefghij \n');
      const { text, budget } = mutate(rng, from, 'abcdefghij \n');
      expect(cost(textDiffOps(from, text)), `seed ${seed}`).toBeLessThanOrEqual(budget);
    }
  });

  it('edits one character of a 10k text with one tiny op, never delete-all + insert-all', () => {
    const rng = new Rng(5);
    const big = rng.string(10_000, 'abcdefghijklmnopqrstuvwxyz \n');
    const edited = big.slice(0, 5_000) + (big[5_000] === 'q' ? 'r' : 'q') + big.slice(5_001);
    const t = ytext(big);
    const deltas: unknown[] = [];
    t.observe((e) => deltas.push(e.delta)); // a delta must be read inside the event handler
    t.doc!.transact(() => applyTextDiff(t, edited));
    expect(t.toString()).toBe(edited);
    expect(deltas).toEqual([[{ retain: 5_000 }, { delete: 1 }, { insert: edited[5_000] }]]);
    expect(cost(textDiffOps(big, big + '!'))).toBe(1);
    expect(cost(textDiffOps(big, big.slice(1)))).toBe(1);
  });

  it('leaves cursors in untouched text where they were', () => {
    const t = ytext('first line\nsecond line\n');
    const cursor = Y.createRelativePositionFromTypeIndex(t, 14); // inside "second"
    t.doc!.transact(() => applyTextDiff(t, 'FIRST line, edited\nsecond line\n'));
    const abs = Y.createAbsolutePositionFromRelativePosition(cursor, t.doc!)!;
    expect(t.toString().slice(abs.index - 3, abs.index + 3)).toBe('second');
  });
});

describe('concurrency', () => {
  function twoReplicas(initial: string) {
    const a = new Y.Doc();
    const b = new Y.Doc();
    ytext(initial, a);
    syncPair(a, b);
    return { a, b, ta: a.getText('t'), tb: b.getText('t') };
  }

  it('a keystroke on another replica in an untouched region survives applyTextDiff', () => {
    const { a, b, ta, tb } = twoReplicas('def f():\n    return 1\n\nprint(f())\n');
    tb.insert(tb.toString().indexOf('f())'), 'g'); // B types while A's agent rewrites line 2
    a.transact(() => applyTextDiff(ta, 'def f():\n    return 42\n\nprint(f())\n'), 'agent');
    syncPair(a, b);
    expect(ta.toString()).toBe('def f():\n    return 42\n\nprint(gf())\n');
    expect(tb.toString()).toBe(ta.toString());
  });

  it('two replicas diffing towards different targets merge both edits (random, seeded)', () => {
    for (let seed = 1; seed <= 100; seed++) {
      const rng = new Rng(seed);
      const half = rng.string(40, 'abcdef \n');
      const { a, b, ta, tb } = twoReplicas(half + '|' + half);
      // A edits only left of the bar, B only right of it: both edits must survive the merge.
      const left = mutate(rng, half, 'xyz').text;
      const right = mutate(rng, half, 'XYZ').text;
      a.transact(() => applyTextDiff(ta, left + '|' + half));
      b.transact(() => applyTextDiff(tb, half + '|' + right));
      Y.applyUpdate(a, Y.encodeStateAsUpdate(b), REMOTE);
      Y.applyUpdate(b, Y.encodeStateAsUpdate(a), REMOTE);
      expect(ta.toString(), `seed ${seed}`).toBe(left + '|' + right);
      expect(tb.toString()).toBe(ta.toString());
    }
  });
});
