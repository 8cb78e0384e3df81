/**
 * Minimal-diff text edits on Y.Text. Replacing a whole text (delete all + insert all) destroys
 * concurrent typing and every remote cursor; these helpers touch only the characters that changed.
 * Pure module.
 */
import diff from 'fast-diff';
import type * as Y from 'yjs';

/** One edit in Y.Text coordinates. */
export type TextOp = { index: number; delete: number; insert: string };

/** Computes the minimal edits turning `from` into `to` (applied in order, indices already shifted). */
export function textDiffOps(from: string, to: string): TextOp[] {
  if (from === to) return [];
  const ops: TextOp[] = [];
  let index = 0;
  for (const [kind, chunk] of diff(from, to)) {
    if (kind === diff.EQUAL) {
      index += chunk.length;
    } else if (kind === diff.DELETE) {
      const last = ops[ops.length - 1];
      if (last && last.index === index && last.insert === '') last.delete += chunk.length;
      else ops.push({ index, delete: chunk.length, insert: '' });
    } else {
      const last = ops[ops.length - 1];
      if (last && last.index === index && last.insert === '') last.insert = chunk;
      else ops.push({ index, delete: 0, insert: chunk });
      index += chunk.length;
    }
  }
  // A merged op deletes first, then inserts at the same index.
  return ops;
}

/**
 * Applies the minimal diff from the Y.Text's current content to `to`. Must run inside a
 * transaction (the caller chooses the origin). Returns the number of ops applied.
 */
export function applyTextDiff(ytext: Y.Text, to: string): number {
  const ops = textDiffOps(ytext.toString(), to);
  for (const op of ops) {
    if (op.delete > 0) ytext.delete(op.index, op.delete);
    if (op.insert) ytext.insert(op.index, op.insert);
  }
  return ops.length;
}
