/**
 * Enforcement of the document schema (workspace-schema.ts).
 *
 * - `checkTransaction` checks what one transaction did — every item it added and every item it
 *   deleted — against the schema and the writer's rights. It looks at the transaction's own
 *   structs only, so a keystroke costs a few checks whatever the document's size. The server runs
 *   it on a scratch replica before an update is stored or relayed (server/src/collab/shadow.ts);
 *   the browser runs it on its own writes.
 * - `checkDocument` checks a whole document's visible state (loads, recovery, fuzzers).
 *
 * Both read Yjs internals (`_item`, `_map`, `_start`, struct contents) because the public API
 * cannot see what is wrong: a list item in a map, a map where a text belongs, a key nobody reads.
 * Pure module.
 */
import * as Y from 'yjs';
import type { DocSchema, Node, Writer } from './spec.ts';
import { WORKSPACE_SCHEMA } from './workspace-schema.ts';
import { PlaceResolver, asType, checkAddition, checkRemoval, checkRequired, contentProblem, nodeForType, richContentProblem, MAX_RICH_DEPTH, type AnyType, type NewRecord } from './rules.ts';

export interface Violation {
  /** Where, e.g. `cells/c_1/exec`. */
  path: string;
  problem: string;
}

/** Thrown (or reported) when an update or a document breaks the schema. */
export class SchemaViolationError extends Error {
  constructor(readonly violations: Violation[]) {
    super(violations.slice(0, 3).map((v) => `${v.path}: ${v.problem}`).join('; ') + (violations.length > 3 ? ` (+${violations.length - 3} more)` : ''));
  }
}

/** Checks what one transaction added and deleted, as `writer` would have done it. */
export function checkTransaction(tr: Y.Transaction, writer: Writer, schema: DocSchema = WORKSPACE_SCHEMA): Violation[] {
  const out: Violation[] = [];
  const isFresh = (item: Y.Item) => item.id.clock >= (tr.beforeState.get(item.id.client) ?? 0);
  const report = (path: string, problem: string) => {
    if (out.length < 50) out.push({ path, problem });
  };
  const to = { report };
  const places = new PlaceResolver(schema, isFresh);
  const resolve = (t: AnyType) => places.resolve(t);
  const newRecords: Array<{ t: AnyType; record: NewRecord }> = [];

  const checkNew = (item: Y.Item) => {
    if (item.deleted) return; // invisible: lost a concurrent write, or added and removed at once
    const parentType = asType(item.parent);
    const at = resolve(parentType);
    if (at === 'dead') return;
    if ('unknownRoot' in at) return report(at.unknownRoot, `"${at.unknownRoot}" is not a root of the workspace document`);
    const parentFresh = at.fresh || (parentType._item !== null && isFresh(parentType._item));
    const addition = { at, parentClass: parentType.constructor, richDepth: parentType, parentFresh, key: item.parentSub, content: item.content };
    const record = checkAddition(addition, writer, to);
    if (record && item.content instanceof Y.ContentType) newRecords.push({ t: asType(item.content.type), record });
  };

  // Added items: every struct this transaction appended to each client's list.
  tr.afterState.forEach((after, client) => {
    const before = tr.beforeState.get(client) ?? 0;
    if (after <= before) return;
    const structs = tr.doc.store.clients.get(client);
    if (!structs) return;
    for (let i = Y.findIndexSS(structs, before); i < structs.length; i++) {
      const s = structs[i]!;
      if (s.id.clock >= after) break;
      if (s instanceof Y.Item) checkNew(s);
    }
  });

  // Deleted items that existed before: removals need the right to remove.
  Y.iterateDeletedStructs(tr, tr.deleteSet, (s) => {
    if (!(s instanceof Y.Item) || isFresh(s)) return;
    const parentType = asType(s.parent);
    if (parentType._item?.deleted) return; // deleted with its container: the container's removal is what counts
    const at = resolve(parentType);
    if (at === 'dead') return;
    if ('unknownRoot' in at) return report(at.unknownRoot, `"${at.unknownRoot}" is not a root of the workspace document`);
    const key = s.parentSub;
    const current = key === null ? undefined : parentType._map.get(key);
    checkRemoval(at, key, !!current && !current.deleted, writer, to);
  });

  for (const { t, record } of newRecords) {
    if (t._item?.deleted) continue;
    checkRequired(record, (k) => !!t._map.get(k) && !t._map.get(k)!.deleted, to);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// whole documents

function aliveListItems(t: AnyType): Y.Item[] {
  const out: Y.Item[] = [];
  for (let it = t._start; it; it = it.right) if (!it.deleted && it.countable) out.push(it);
  return out;
}
function aliveEntries(t: AnyType): Array<[string, Y.Item]> {
  return [...t._map].filter(([, it]) => !it.deleted);
}

/** Checks a whole document's visible state against the schema (no writer rules). */
export function checkDocument(doc: Y.Doc, schema: DocSchema = WORKSPACE_SCHEMA, limit = 50): Violation[] {
  const { out, report } = reporter(limit);
  walkRoots(doc, schema, report);
  return out;
}

/**
 * `checkDocument` a bounded share at a time (a server loading a large stored document checks it
 * with turns of its event loop in between: 10,000 cells took ~0.1 s in one): each `next()` checks
 * the roots themselves (first) or up to `perStep` of their entries with everything inside them;
 * the iterator returns the violations when done. The same violations as `checkDocument` (within
 * `limit`, reported roots first). The document must not change meanwhile.
 */
export function* checkDocumentSteps(doc: Y.Doc, schema: DocSchema = WORKSPACE_SCHEMA, limit = 50, perStep = 200): Generator<void, Violation[], void> {
  const { out, report } = reporter(limit);
  const entries: Array<() => void> = [];
  walkRoots(doc, schema, report, (visit) => entries.push(visit));
  for (let i = 0; i < entries.length; i++) {
    if (i > 0 && i % perStep === 0) yield;
    entries[i]!();
  }
  return out;
}

function reporter(limit: number): { out: Violation[]; report: (path: string, problem: string) => void } {
  const out: Violation[] = [];
  return {
    out,
    report: (path, problem) => {
      if (out.length < limit) out.push({ path, problem });
    },
  };
}

/** Checks every root of `doc`; `defer`: the entries of the roots are checked when it calls them, not now. */
function walkRoots(doc: Y.Doc, schema: DocSchema, report: (p: string, m: string) => void, defer?: (visit: () => void) => void): void {
  for (const [name, t] of doc.share) {
    const type = asType(t);
    const node = schema.roots[name];
    if (!node) {
      if (aliveListItems(type).length || aliveEntries(type).length) report(name, `"${name}" is not a root of the workspace document`);
      continue;
    }
    walk(node, type, name, report, 0, defer);
  }
}

/** `defer` (at depth 0 only): receives the check of each entry (its key, its value, everything inside it) instead of it being done now. */
function walk(node: Node, t: AnyType, path: string, report: (p: string, m: string) => void, depth: number, defer?: (visit: () => void) => void): void {
  const into = (visit: () => void) => (defer ? defer(visit) : visit());
  switch (node.kind) {
    case 'record':
    case 'dict': {
      if (aliveListItems(t).length) report(path, `${node.what} holds keys, not a list`);
      for (const [key, it] of aliveEntries(t)) {
        into(() => {
          const f = node.kind === 'dict' ? (node.key.safeParse(key).success ? node.entry : undefined) : (node.fields[key] ?? node.extra);
          const p = `${path}/${key}`;
          if (!f) return report(p, node.kind === 'dict' ? `"${key}" is not a valid key of ${node.what}` : `${node.what} has no key "${key}"`);
          const problem = contentProblem(f.node, it.content);
          if (problem) report(p, problem);
          else if (it.content instanceof Y.ContentType) walk(nodeForType(f.node, it.content.type)!, asType(it.content.type), p, report, depth + 1);
        });
      }
      if (node.kind === 'record')
        for (const [k, f] of Object.entries(node.fields)) if (f.required && !(t._map.get(k) && !t._map.get(k)!.deleted)) report(path, `${node.what} needs "${k}"`);
      return;
    }
    case 'list':
      if (aliveEntries(t).length) report(path, `${node.what} is a list, not a map`);
      aliveListItems(t).forEach((it, i) =>
        into(() => {
          const p = `${path}/${i}`;
          const problem = contentProblem(node.item, it.content);
          if (problem) report(p, problem);
          else if (it.content instanceof Y.ContentType) walk(nodeForType(node.item, it.content.type)!, asType(it.content.type), p, report, depth + 1);
        }),
      );
      return;
    case 'text':
      if (aliveEntries(t).length) report(path, `${node.what} has keys`);
      for (let it = t._start; it; it = it.right) if (!it.deleted && !(it.content instanceof Y.ContentString)) report(path, `${node.what} holds characters only`);
      return;
    case 'richtext':
      walkRich(t, path, report, 0);
      return;
    default:
      return;
  }
}

function walkRich(t: AnyType, path: string, report: (p: string, m: string) => void, depth: number): void {
  if (depth > MAX_RICH_DEPTH) return report(path, 'rich text nested too deeply');
  for (const [key, it] of aliveEntries(t)) {
    const p = richContentProblem(t.constructor, key, it.content);
    if (p) report(path, p);
  }
  for (let it = t._start; it; it = it.right) {
    if (it.deleted) continue;
    const p = richContentProblem(t.constructor, null, it.content);
    if (p) report(path, p);
    else if (it.content instanceof Y.ContentType) walkRich(asType(it.content.type), path, report, depth + 1);
  }
}
