/**
 * Three-way text edits for the agent. The model rewrote a cell from the text it *read* (base); the
 * cell may have changed since (current) because people kept typing. Only the regions the model
 * changed are applied, mapped onto the current text; a region somebody else edited in between is a
 * conflict and is left alone (the model is told to re-read). Edits are applied through Yjs relative
 * positions in small steps, so typing anywhere else in the cell — even between two steps — is kept.
 * Pure module.
 */
import diff from 'fast-diff';
import * as Y from 'yjs';

/** One change in current-text coordinates: replace [from, to) (which reads `deleted`) by `insert`. */
export interface TextHunk {
  from: number;
  to: number;
  deleted: string;
  insert: string;
}

/** A change of the model that overlaps an edit somebody made since the model read the text. */
export interface TextConflict {
  /** Range in the base text the model wanted to replace, and with what. */
  baseFrom: number;
  baseTo: number;
  insert: string;
}

export interface TextEditPlan {
  hunks: TextHunk[];
  conflicts: TextConflict[];
  /** Characters of the current text the hunks delete. */
  deletedChars: number;
  insertedChars: number;
}

type Op = [number, string];
interface Region {
  bFrom: number;
  bTo: number;
  insert: string;
}

/** Consecutive non-equal diff ops as regions of `from` replaced by text. */
function regions(ops: Op[]): Region[] {
  const out: Region[] = [];
  let b = 0;
  let cur: Region | null = null;
  for (const [k, t] of ops) {
    if (k === diff.EQUAL) {
      if (cur) out.push(cur);
      cur = null;
      b += t.length;
    } else {
      cur ??= { bFrom: b, bTo: b, insert: '' };
      if (k === diff.DELETE) {
        b += t.length;
        cur.bTo = b;
      } else cur.insert += t;
    }
  }
  if (cur) out.push(cur);
  return out;
}

/**
 * Maps an index of the base text onto the current text. At a place where text was inserted since,
 * `before` lands before that insertion and `after` after it.
 */
function mapIndex(ops: Op[], p: number, bias: 'before' | 'after'): number {
  let b = 0;
  let c = 0;
  for (const [k, t] of ops) {
    if (p === b && bias === 'before') return c;
    if (k === diff.EQUAL) {
      if (p < b + t.length) return c + (p - b);
      b += t.length;
      c += t.length;
    } else if (k === diff.DELETE) {
      if (p < b + t.length) return c;
      b += t.length;
    } else c += t.length;
  }
  return c;
}

function overlaps(a: Region, h: Region): boolean {
  const aLen = a.bTo - a.bFrom;
  const hLen = h.bTo - h.bFrom;
  if (aLen > 0 && hLen > 0) return a.bFrom < h.bTo && h.bFrom < a.bTo;
  if (aLen === 0 && hLen === 0) return false; // two insertions at one place: both kept
  if (aLen === 0) return h.bFrom < a.bFrom && a.bFrom < h.bTo;
  return a.bFrom < h.bFrom && h.bFrom < a.bTo;
}

/** Plans turning `base` into `proposed` on top of `current` (see the module header). */
export function planTextEdit(base: string, current: string, proposed: string): TextEditPlan {
  const mine = regions(diff(base, proposed) as Op[]);
  const sinceOps = diff(base, current) as Op[];
  const theirs = regions(sinceOps);
  const hunks: TextHunk[] = [];
  const conflicts: TextConflict[] = [];
  for (const h of mine) {
    if (theirs.some((t) => overlaps(t, h))) {
      conflicts.push({ baseFrom: h.bFrom, baseTo: h.bTo, insert: h.insert });
      continue;
    }
    const from = mapIndex(sinceOps, h.bFrom, 'after');
    const to = h.bTo === h.bFrom ? from : Math.max(from, mapIndex(sinceOps, h.bTo, 'before'));
    hunks.push({ from, to, deleted: current.slice(from, to), insert: h.insert });
  }
  return {
    hunks,
    conflicts,
    deletedChars: hunks.reduce((n, h) => n + (h.to - h.from), 0),
    insertedChars: hunks.reduce((n, h) => n + h.insert.length, 0),
  };
}

/** True when a plan replaces most of a text (a destructive edit that needs a person's Accept). */
export function replacesMost(current: string, plan: TextEditPlan): boolean {
  const len = current.trim().length;
  return len >= 20 && plan.deletedChars > len / 2;
}

/** One small change, run in its own transaction by the caller; returns the caret after it (its index, and where it sits as a relative position). */
export type TextEditStep = () => { index: number; caret: Y.RelativePosition };

/**
 * Relative positions at the `wanted` indexes of `ytext` (in any order), each as
 * `Y.createRelativePositionFromTypeIndex` makes it (with its `assoc`), in one walk over the text's
 * items instead of one walk per position:
 * a text rewritten many times holds many deleted items, and a plan has a hunk every few characters.
 */
export function relativePositionsAt(ytext: Y.Text, wanted: Array<{ index: number; assoc: number }>): Y.RelativePosition[] {
  const at = (item: { client: number; clock: number } | null, assoc: number) => Y.createRelativePositionFromJSON({ type: typeId(ytext), tname: typeName(ytext), item, assoc });
  const out: Y.RelativePosition[] = new Array(wanted.length);
  // As Yjs does, a left-associated position points at the character before the index.
  const target = (w: { index: number; assoc: number }) => (w.assoc < 0 ? w.index - 1 : w.index);
  const order = wanted.map((_, i) => i).sort((a, b) => target(wanted[a]!) - target(wanted[b]!));
  let t = ytext._start;
  let last: Y.Item | null = null; // the item before t
  let before = 0; // countable characters before t
  for (const i of order) {
    const w = wanted[i]!;
    if (w.assoc < 0 && w.index === 0) {
      out[i] = at(null, w.assoc);
      continue;
    }
    const want = target(w);
    while (t !== null && (t.deleted || !t.countable || before + t.length <= want)) {
      if (!t.deleted && t.countable) before += t.length;
      last = t;
      t = t.right;
    }
    if (t !== null) out[i] = at({ client: t.id.client, clock: t.id.clock + want - before }, w.assoc);
    // Past the end: left-associated, the text's last item (deleted or not); otherwise the end of the type.
    else out[i] = at(w.assoc < 0 && last ? { client: last.id.client, clock: last.id.clock + last.length - 1 } : null, w.assoc);
  }
  return out;
}
const typeId = (ytext: Y.Text) => (ytext._item ? { client: ytext._item.id.client, clock: ytext._item.id.clock } : null);
const typeName = (ytext: Y.Text) => (ytext._item ? null : Y.findRootTypeKey(ytext));

/**
 * Steps applying `hunks` to `ytext` (which must still read the `current` text the plan was made
 * from): per hunk, one deletion, then the insertion in pieces of at most `pieceChars`. Positions
 * are relative, so edits made by others between two steps move them correctly.
 */
export function textEditSteps(ytext: Y.Text, hunks: TextHunk[], pieceChars = 24): TextEditStep[] {
  const doc = ytext.doc;
  if (!doc) throw new Error('the text is not in a document');
  const rel = relativePositionsAt(ytext, hunks.flatMap((h) => [{ index: h.from, assoc: 0 }, { index: h.to, assoc: -1 }]));
  const anchors = hunks.map((h, i) => ({ h, from: rel[2 * i]!, to: rel[2 * i + 1]! }));
  const abs = (r: Y.RelativePosition): number => Y.createAbsolutePositionFromRelativePosition(r, doc)?.index ?? ytext.length;
  const steps: TextEditStep[] = [];
  for (const a of anchors) {
    let at: Y.RelativePosition = a.from;
    if (a.h.to > a.h.from) {
      steps.push(() => {
        const from = abs(a.from);
        const to = Math.max(from, abs(a.to));
        if (to > from) ytext.delete(from, to - from);
        return { index: from, caret: a.from };
      });
    }
    for (let i = 0; i < a.h.insert.length; i += pieceChars) {
      const piece = a.h.insert.slice(i, i + pieceChars);
      steps.push(() => {
        const idx = Math.min(abs(at), ytext.length);
        ytext.insert(idx, piece);
        const end = idx + piece.length;
        // The piece's last character, left-associated: what createRelativePositionFromTypeIndex(ytext,
        // end, -1) finds, without walking the text to it (the piece is this client's newest item;
        // should Yjs have added anything after it, such as formatting, the walk decides).
        const last = Y.createID(doc.clientID, Y.getState(doc.store, doc.clientID) - 1);
        const item = Y.getItem(doc.store, last);
        at =
          item instanceof Y.Item && item.parent === ytext && item.content instanceof Y.ContentString
            ? Y.createRelativePositionFromJSON({ type: typeId(ytext), tname: typeName(ytext), item: { client: last.client, clock: last.clock }, assoc: -1 })
            : Y.createRelativePositionFromTypeIndex(ytext, end, -1);
        return { index: end, caret: at };
      });
    }
  }
  return steps;
}

/** Applies a plan at once (one transaction of the caller's choosing wraps this). */
export function applyTextHunks(ytext: Y.Text, hunks: TextHunk[]): void {
  for (const step of textEditSteps(ytext, hunks, Number.MAX_SAFE_INTEGER)) step();
}
