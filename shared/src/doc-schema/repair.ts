/**
 * Repair of a document that breaks the schema (older data, a bug): removes what `checkDocument`
 * reports — an unknown key, a wrong value, a record missing a required key (the record goes), the
 * content of an unknown root — until the document is valid. Used by the owner's recovery of a
 * workspace that no longer loads; the original bytes are kept aside by the caller.
 * Pure module.
 */
import * as Y from 'yjs';
import type { Origin } from '../origin.ts';
import { checkDocument } from './check.ts';
import type { DocSchema } from './spec.ts';
import { WORKSPACE_SCHEMA } from './workspace-schema.ts';

type AnyType = Y.AbstractType<unknown> & { _map: Map<string, Y.Item>; _start: Y.Item | null };

function aliveItemAt(t: AnyType, index: number): Y.Item | null {
  let i = 0;
  for (let it = t._start; it; it = it.right) if (!it.deleted && it.countable) if (i++ === index) return it;
  return null;
}

/** Removes the value at a `checkDocument` path. Returns whether something was removed. */
function removeAt(doc: Y.Doc, path: string): boolean {
  const [root, ...rest] = path.split('/');
  let t = doc.share.get(root!) as AnyType | undefined;
  if (!t) return false;
  if (rest.length === 0) {
    let removed = false;
    for (const [k, it] of [...t._map]) if (!it.deleted) removed = (Y.Map.prototype.delete.call(t, k), true);
    let n = 0;
    for (let it = t._start; it; it = it.right) if (!it.deleted && it.countable) n += it.length;
    if (n) (Y.Array.prototype.delete as (this: unknown, i: number, l: number) => void).call(t, 0, n);
    return removed || n > 0;
  }
  for (const seg of rest.slice(0, -1)) {
    const it = /^\d+$/.test(seg) && t._start ? aliveItemAt(t, Number(seg)) : t._map.get(seg);
    if (!it || it.deleted || !(it.content instanceof Y.ContentType)) return false;
    t = it.content.type as AnyType;
  }
  const last = rest[rest.length - 1]!;
  const entry = t._map.get(last);
  if (entry && !entry.deleted) {
    Y.Map.prototype.delete.call(t, last);
    return true;
  }
  if (/^\d+$/.test(last) && aliveItemAt(t, Number(last))) {
    (Y.Array.prototype.delete as (this: unknown, i: number, l: number) => void).call(t, Number(last), 1);
    return true;
  }
  return false;
}

/** Removes everything that breaks the schema, one problem at a time; returns how many values were removed. */
export function repairDocument(doc: Y.Doc, origin: Origin, schema: DocSchema = WORKSPACE_SCHEMA): number {
  let removed = 0;
  doc.transact(() => {
    for (;;) {
      const [problem] = checkDocument(doc, schema, 1);
      if (!problem) return;
      if (removed >= 100_000 || !removeAt(doc, problem.path)) throw new Error(`the document could not be repaired at ${problem.path}: ${problem.problem}`);
      removed++;
    }
  }, origin);
  return removed;
}
