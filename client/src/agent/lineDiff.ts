/** A line diff (longest common subsequence) for proposal previews. Pure. */

export interface DiffLine {
  op: 'same' | 'add' | 'del';
  text: string;
}

/** Lines past which the LCS table would be too large: the middle is shown as a replacement. */
const MAX_CELLS = 250_000;

/** `before` → `after` as kept, removed and added lines, in order. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  // Common head and tail cost nothing and keep the table small.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const am = a.slice(head, a.length - tail);
  const bm = b.slice(head, b.length - tail);
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ op: 'same', text }));
  if (am.length * bm.length > MAX_CELLS) {
    out.push(...am.map((text): DiffLine => ({ op: 'del', text })), ...bm.map((text): DiffLine => ({ op: 'add', text })));
  } else {
    // lcs[i][j] = LCS length of am[i..] and bm[j..]
    const w = bm.length + 1;
    const lcs = new Uint32Array((am.length + 1) * w);
    for (let i = am.length - 1; i >= 0; i--)
      for (let j = bm.length - 1; j >= 0; j--)
        lcs[i * w + j] = am[i] === bm[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
    let i = 0;
    let j = 0;
    while (i < am.length || j < bm.length) {
      if (i < am.length && j < bm.length && am[i] === bm[j]) {
        out.push({ op: 'same', text: am[i]! });
        i++;
        j++;
      } else if (i < am.length && (j >= bm.length || lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!)) {
        out.push({ op: 'del', text: am[i++]! });
      } else {
        out.push({ op: 'add', text: bm[j++]! });
      }
    }
  }
  out.push(...a.slice(a.length - tail).map((text): DiffLine => ({ op: 'same', text })));
  return out;
}
