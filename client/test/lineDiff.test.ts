import { describe, expect, it } from 'vitest';
import { lineDiff } from '../src/agent/lineDiff.ts';

const render = (d: ReturnType<typeof lineDiff>) => d.map((l) => (l.op === 'same' ? ' ' : l.op === 'add' ? '+' : '-') + l.text);

describe('lineDiff', () => {
  it('keeps equal texts as they are', () => {
    expect(render(lineDiff('a\nb', 'a\nb'))).toEqual([' a', ' b']);
  });
  it('shows a changed line as a deletion and an addition, with context kept', () => {
    expect(render(lineDiff('x = 1\ny = 2\nprint(x)', 'x = 1\ny = 3\nprint(x)'))).toEqual([' x = 1', '-y = 2', '+y = 3', ' print(x)']);
  });
  it('handles insertions and deletions in the middle', () => {
    const d = lineDiff('a\nb\nc\nd', 'a\nc\nd\ne');
    expect(render(d)).toEqual([' a', '-b', ' c', ' d', '+e']);
  });
  it('from and to empty text', () => {
    expect(render(lineDiff('', 'a'))).toEqual(['-', '+a']);
    expect(lineDiff('a\nb', 'b').filter((l) => l.op === 'del').map((l) => l.text)).toEqual(['a']);
  });
  it('every line of both sides appears once', () => {
    const before = Array.from({ length: 50 }, (_, i) => `l${i % 7}`).join('\n');
    const after = Array.from({ length: 60 }, (_, i) => `l${i % 5}`).join('\n');
    const d = lineDiff(before, after);
    expect(d.filter((l) => l.op !== 'add').map((l) => l.text).join('\n')).toBe(before);
    expect(d.filter((l) => l.op !== 'del').map((l) => l.text).join('\n')).toBe(after);
  });
});
