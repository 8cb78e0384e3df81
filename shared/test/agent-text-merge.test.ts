import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { applyTextHunks, planTextEdit, relativePositionsAt, replacesMost, textEditSteps } from '../src/agent/text-merge.ts';
import { mulberry32 } from '../src/random.ts';

function apply(current: string, base: string, proposed: string): { out: string; conflicts: number } {
  const doc = new Y.Doc();
  const t = doc.getText('t');
  t.insert(0, current);
  const plan = planTextEdit(base, current, proposed);
  doc.transact(() => applyTextHunks(t, plan.hunks));
  return { out: t.toString(), conflicts: plan.conflicts.length };
}

describe('three-way text edits', () => {
  it('applies the model edit when nothing changed since', () => {
    expect(apply('const a = 1;\nconst b = 2;\n', 'const a = 1;\nconst b = 2;\n', 'const a = 10;\nconst b = 2;\n')).toEqual({ out: 'const a = 10;\nconst b = 2;\n', conflicts: 0 });
  });
  it('keeps a person’s edit made elsewhere since the model read the text', () => {
    const base = 'line one\nline two\nline three\n';
    const current = 'line one!!\nline two\nline three\n';
    const proposed = 'line one\nline two\nline 3\n';
    expect(apply(current, base, proposed)).toEqual({ out: 'line one!!\nline two\nline 3\n', conflicts: 0 });
  });
  it('skips a change overlapping what a person edited since (a conflict), applies the rest', () => {
    const base = 'alpha beta gamma delta';
    const current = 'alpha BETA gamma delta';
    const proposed = 'alpha bet gamma DELTA';
    const r = apply(current, base, proposed);
    expect(r.out).toBe('alpha BETA gamma DELTA');
    expect(r.conflicts).toBe(1);
  });
  it('keeps text typed at the edge of a replaced region', () => {
    const base = 'x = foo(1)';
    const current = 'x = foo(1) // typed';
    const proposed = 'x = bar(1)';
    expect(apply(current, base, proposed).out).toBe('x = bar(1) // typed');
  });
  it('measures destructive rewrites', () => {
    const cur = 'const result = compute(data, { window: 5 });\n';
    expect(replacesMost(cur, planTextEdit(cur, cur, 'x'))).toBe(true);
    expect(replacesMost(cur, planTextEdit(cur, cur, cur.replace('5', '7')))).toBe(false);
  });
  it('small steps survive typing between them (relative positions)', () => {
    const a = new Y.Doc();
    const b = new Y.Doc();
    const ta = a.getText('t');
    ta.insert(0, 'function f() {\n  return 1;\n}\n');
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a));
    const base = ta.toString();
    const proposed = base.replace('return 1;', 'const twice = 2 * 1;\n  return twice;');
    const steps = textEditSteps(ta, planTextEdit(base, base, proposed).hunks, 4);
    expect(steps.length).toBeGreaterThan(3);
    const tb = b.getText('t');
    for (const [i, step] of steps.entries()) {
      a.transact(() => step());
      // someone types at the top of the cell between two agent steps
      if (i % 2 === 0) {
        b.transact(() => tb.insert(0, 'x'));
        Y.applyUpdate(a, Y.encodeStateAsUpdate(b, Y.encodeStateVector(a)));
      }
      Y.applyUpdate(b, Y.encodeStateAsUpdate(a, Y.encodeStateVector(b)));
    }
    const typed = 'x'.repeat(Math.ceil(steps.length / 2));
    expect(ta.toString()).toBe(typed + proposed);
    expect(tb.toString()).toBe(ta.toString());
  });

  it('positions found in one walk are the ones Yjs finds one by one, on texts full of deleted items', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rand = mulberry32(seed);
      const a = new Y.Doc();
      const b = new Y.Doc();
      const root = a.getMap('cells');
      const nested = new Y.Text();
      root.set('c', nested); // a text inside a map, as cells are; and a root text
      const texts = [a.getText('t'), nested];
      Y.applyUpdate(b, Y.encodeStateAsUpdate(a));
      for (let k = 0; k < 60; k++) {
        // Two writers, so deleted runs of different clients sit side by side.
        const d = rand() < 0.5 ? a : b;
        const t = rand() < 0.5 ? d.getText('t') : (d.getMap('cells').get('c') as Y.Text);
        if (rand() < 0.6 || t.length < 4) t.insert(Math.floor(rand() * (t.length + 1)), 'abcdef'.slice(0, 1 + Math.floor(rand() * 6)));
        else t.delete(Math.floor(rand() * (t.length - 2)), 1 + Math.floor(rand() * 2));
        Y.applyUpdate(a, Y.encodeStateAsUpdate(b, Y.encodeStateVector(a)));
        Y.applyUpdate(b, Y.encodeStateAsUpdate(a, Y.encodeStateVector(b)));
      }
      for (const t of texts) {
        const wanted = Array.from({ length: 12 }, () => ({ index: Math.floor(rand() * (t.length + 1)), assoc: rand() < 0.5 ? 0 : -1 }));
        wanted.push({ index: 0, assoc: -1 }, { index: t.length, assoc: 0 }, { index: t.length, assoc: -1 }, { index: 0, assoc: 0 });
        const ours = relativePositionsAt(t, wanted); // unsorted on purpose
        wanted.forEach((w, i) => {
          const theirs = Y.createRelativePositionFromTypeIndex(t, w.index, w.assoc);
          expect(Y.encodeRelativePosition(ours[i]!), `seed ${seed}, index ${w.index}, assoc ${w.assoc}`).toEqual(Y.encodeRelativePosition(theirs));
        });
      }
    }
  });
  it('each step returns the caret Yjs would place there, as an index and a relative position', () => {
    const doc = new Y.Doc();
    const t = doc.getText('t');
    const base = Array.from({ length: 6 }, (_, i) => `const a${i} = data.map((x) => x * ${i + 1});`).join('\n');
    const other = Array.from({ length: 6 }, (_, i) => `let b${i} = values.filter((v) => v > ${i * 3});`).join('\n');
    t.insert(0, base);
    for (let round = 0; round < 6; round++) {
      const current = t.toString();
      const steps = textEditSteps(t, planTextEdit(current, current, round % 2 ? base : other).hunks, 4);
      for (const step of steps) {
        let r: ReturnType<typeof step> | null = null;
        doc.transact(() => (r = step()));
        expect(Y.createAbsolutePositionFromRelativePosition(r!.caret, doc)!.index).toBe(r!.index);
      }
      expect(t.toString()).toBe(round % 2 ? base : other);
    }
  });
});
