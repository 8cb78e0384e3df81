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
import type { DocSchema, Field, Node, RecordNode, Writer, Writers } from './spec.ts';
import { WORKSPACE_SCHEMA } from './workspace-schema.ts';

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

// Yjs internals this module reads (stable across Yjs 13).
type AnyType = Y.AbstractType<unknown> & { _item: Y.Item | null; _map: Map<string, Y.Item>; _start: Y.Item | null };
const asType = (t: unknown) => t as AnyType;

/** What a live type is, in the schema: its node, and the field whose rule governs edits inside it. */
interface Place {
  node: Node;
  /** The rule for edits inside a text (or rich text) and for the type itself. */
  rule: Writers;
  path: string;
  /** Created by the transaction being checked (its contents need no edit rights). */
  fresh: boolean;
}
type Resolved = Place | 'dead' | { unknownRoot: string };

const TAG = /^[A-Za-z][\w-]{0,63}$/;
const MAX_RICH_DEPTH = 64;

/** The option of `node` a live Yjs type can be (oneOf picks by type class), or null. */
function nodeForType(node: Node, t: unknown): Node | null {
  if (node.kind === 'oneOf') {
    for (const o of node.options) {
      const n = nodeForType(o, t);
      if (n) return n;
    }
    return null;
  }
  return typeMatches(node, t) ? node : null;
}

function typeMatches(node: Node, t: unknown): boolean {
  const c = (t as object | null)?.constructor;
  switch (node.kind) {
    case 'record':
    case 'dict':
      return c === Y.Map;
    case 'list':
      return c === Y.Array;
    case 'text':
      return c === Y.Text;
    case 'richtext':
      return c === Y.XmlFragment;
    default:
      return false;
  }
}

function describe(node: Node): string {
  return node.kind === 'oneOf' ? node.options.map(describe).join(' or ') : node.what;
}

/** Checks a value written at a place that expects `node`. Returns a problem or null. */
function contentProblem(node: Node, content: unknown): string | null {
  if (content instanceof Y.ContentAny) {
    for (const v of content.arr) {
      const p = jsonProblem(node, v);
      if (p) return p;
    }
    return null;
  }
  if (content instanceof Y.ContentType) {
    return nodeForType(node, content.type) ? null : `expected ${describe(node)}, got a ${typeName(content.type)}`;
  }
  if (content instanceof Y.ContentDeleted) return null;
  return `expected ${describe(node)}, got unsupported content (${(content as object).constructor.name})`;
}

function jsonProblem(node: Node, v: unknown): string | null {
  if (node.kind === 'json') {
    const r = node.schema.safeParse(v);
    return r.success ? null : `expected ${node.what}: ${r.error.issues[0]?.path.join('.') || 'value'} ${r.error.issues[0]?.message ?? ''}`.trim();
  }
  if (node.kind === 'oneOf') {
    const problems = node.options.map((o) => jsonProblem(o, v));
    return problems.includes(null) ? null : (problems.find((p) => p && !p.startsWith('expected a')) ?? `expected ${describe(node)}, got a plain value`);
  }
  return `expected ${describe(node)}, got a plain value`;
}

function typeName(t: unknown): string {
  const c = (t as object).constructor;
  return c === Y.Map ? 'map' : c === Y.Array ? 'list' : c === Y.Text ? 'text' : c === Y.XmlFragment ? 'rich text' : c === Y.XmlElement ? 'rich-text element' : c === Y.XmlText ? 'rich text run' : 'shared type';
}

const may = (rule: Writers, writer: Writer) => writer === 'server' || rule.includes(writer);

/** Problems of content inside rich text (elements, text runs with marks, element attributes). */
function richContentProblem(parent: AnyType, key: string | null, content: unknown): string | null {
  const pc = parent.constructor;
  if (pc === Y.XmlText) {
    if (key !== null) return 'rich text runs have no keys';
    if (content instanceof Y.ContentString || content instanceof Y.ContentDeleted) return null;
    if (content instanceof Y.ContentFormat) return typeof content.key === 'string' && content.key.length <= 64 ? null : 'bad mark';
    return 'rich text runs hold characters and marks only';
  }
  if (pc !== Y.XmlFragment && pc !== Y.XmlElement) return 'unexpected rich-text container';
  if (key !== null) {
    if (pc !== Y.XmlElement) return 'rich text has no keys';
    if (!(content instanceof Y.ContentAny)) return 'element attributes are plain values';
    return content.arr.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v)) ? null : 'element attributes are plain values';
  }
  if (content instanceof Y.ContentDeleted) return null;
  if (!(content instanceof Y.ContentType)) return 'rich text holds elements and text runs only';
  const c = content.type.constructor;
  if (c === Y.XmlText) return null;
  if (c === Y.XmlElement) return TAG.test((content.type as Y.XmlElement).nodeName) ? null : 'bad element name';
  return `rich text cannot hold a ${typeName(content.type)}`;
}

function richDepth(t: AnyType): number {
  let d = 0;
  for (let p: AnyType | null = t; p && p.constructor !== Y.XmlFragment; p = p._item ? asType(p._item.parent) : null) d++;
  return d;
}

/** Checks what one transaction added and deleted, as `writer` would have done it. */
export function checkTransaction(tr: Y.Transaction, writer: Writer, schema: DocSchema = WORKSPACE_SCHEMA): Violation[] {
  const out: Violation[] = [];
  const seen = new Map<unknown, Resolved>();
  const isFresh = (item: Y.Item) => item.id.clock >= (tr.beforeState.get(item.id.client) ?? 0);
  const report = (path: string, problem: string) => {
    if (out.length < 50) out.push({ path, problem });
  };

  const resolve = (t: AnyType): Resolved => {
    const hit = seen.get(t);
    if (hit) return hit;
    let r: Resolved;
    const item = t._item;
    if (item === null) {
      const name = Y.findRootTypeKey(t);
      const node = schema.roots[name];
      r = node ? { node, rule: [], path: name, fresh: false } : { unknownRoot: name };
    } else if (item.deleted) r = 'dead';
    else {
      const parent = resolve(asType(item.parent));
      if (parent === 'dead' || 'unknownRoot' in parent) r = 'dead'; // reported where it was created
      else {
        const key = item.parentSub;
        const path = `${parent.path}/${key ?? '#'}`;
        const fresh = isFresh(item);
        const f = childField(parent.node, key);
        if (parent.node.kind === 'richtext') r = { node: parent.node, rule: parent.rule, path, fresh: fresh || parent.fresh };
        else if (!f) r = 'dead';
        else {
          const node = nodeForType(f.node, t);
          r = node ? { node, rule: f.write, path, fresh: fresh || parent.fresh } : 'dead';
        }
      }
    }
    seen.set(t, r);
    return r;
  };

  const newRecords: Array<{ t: AnyType; node: RecordNode; path: string }> = [];

  const checkNew = (item: Y.Item) => {
    if (item.deleted) return; // invisible: lost a concurrent write, or added and removed at once
    const parentType = asType(item.parent);
    const at = resolve(parentType);
    if (at === 'dead') return;
    if ('unknownRoot' in at) return report(at.unknownRoot, `"${at.unknownRoot}" is not a root of the workspace document`);
    const key = item.parentSub;
    const path = `${at.path}/${key ?? '#'}`;
    const parentFresh = at.fresh || (parentType._item !== null && isFresh(parentType._item));
    const content = item.content;
    const node = at.node;
    switch (node.kind) {
      case 'text':
        if (key !== null || !(content instanceof Y.ContentString || content instanceof Y.ContentDeleted)) return report(at.path, `${node.what} holds characters only`);
        if (!parentFresh && !may(at.rule, writer)) report(at.path, `${writer} may not edit ${node.what}`);
        return;
      case 'richtext': {
        const p = richContentProblem(parentType, key, content);
        if (p) return report(at.path, p);
        if (content instanceof Y.ContentType && richDepth(parentType) > MAX_RICH_DEPTH) return report(at.path, 'rich text nested too deeply');
        if (!parentFresh && !may(at.rule, writer)) report(at.path, `${writer} may not edit ${node.what}`);
        return;
      }
      case 'list': {
        if (key !== null) return report(at.path, `${node.what} is a list: it has no key "${key}"`);
        if (!parentFresh && !may(node.insert, writer)) return report(at.path, `${writer} may not add to ${node.what}`);
        const p = contentProblem(node.item, content);
        if (p) return report(`${at.path}/#`, p);
        noteRecord(content, node.item, `${at.path}/#`);
        return;
      }
      case 'record':
      case 'dict': {
        if (key === null) return report(at.path, `${node.what} holds keys, not a list`);
        let f: Field | undefined;
        if (node.kind === 'dict') {
          if (!node.key.safeParse(key).success) return report(path, `"${key}" is not a valid key of ${node.what}`);
          f = node.entry;
        } else f = node.fields[key] ?? node.extra;
        if (!f) return report(path, `${node.what} has no key "${key}"`);
        const rule = parentFresh ? f.create : f.write;
        if (rule && !may(rule, writer)) return report(path, `${writer} may not ${parentFresh ? 'create' : 'write'} ${key}`);
        const p = contentProblem(f.node, content);
        if (p) return report(path, p);
        if (f.check && content instanceof Y.ContentAny) {
          const c = f.check(content.arr[0], writer);
          if (c) return report(path, c);
        }
        noteRecord(content, f.node, path);
        return;
      }
      default:
        return;
    }
  };

  const noteRecord = (content: unknown, node: Node, path: string) => {
    if (!(content instanceof Y.ContentType)) return;
    const n = nodeForType(node, content.type);
    if (n?.kind === 'record') newRecords.push({ t: asType(content.type), node: n, path });
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
    const node = at.node;
    const key = s.parentSub;
    if (node.kind === 'text' || node.kind === 'richtext') {
      if (!may(at.rule, writer)) report(at.path, `${writer} may not edit ${node.what}`);
      return;
    }
    if (node.kind === 'list') {
      if (!may(node.remove, writer)) report(at.path, `${writer} may not remove from ${node.what}`);
      return;
    }
    if ((node.kind === 'record' || node.kind === 'dict') && key !== null) {
      const current = parentType._map.get(key);
      if (current && !current.deleted) return; // replaced: the new value was checked
      const f = node.kind === 'dict' ? node.entry : (node.fields[key] ?? node.extra);
      if (!f) return;
      if (!may(f.remove ?? f.write, writer)) report(`${at.path}/${key}`, `${writer} may not remove ${key}`);
      else if (f.required) report(`${at.path}/${key}`, `${key} is required`);
    }
  });

  for (const r of newRecords) {
    if (r.t._item?.deleted) continue;
    for (const [k, f] of Object.entries(r.node.fields)) {
      const it = r.t._map.get(k);
      if (f.required && (!it || it.deleted)) report(r.path, `${r.node.what} needs "${k}"`);
    }
  }
  return out;
}

/** The field under which `key` of a container described by `node` lives (null for list items of no field). */
function childField(node: Node, key: string | null): Field | null {
  switch (node.kind) {
    case 'record':
      return key === null ? null : (node.fields[key] ?? node.extra ?? null);
    case 'dict':
      return key === null || !node.key.safeParse(key).success ? null : node.entry;
    case 'list':
      return key === null ? { node: node.item, write: node.insert } : null;
    default:
      return null;
  }
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
  const out: Violation[] = [];
  const report = (path: string, problem: string) => {
    if (out.length < limit) out.push({ path, problem });
  };
  for (const [name, t] of doc.share) {
    const type = asType(t);
    const node = schema.roots[name];
    if (!node) {
      if (aliveListItems(type).length || aliveEntries(type).length) report(name, `"${name}" is not a root of the workspace document`);
      continue;
    }
    walk(node, type, name, report, 0);
  }
  return out;
}

function walk(node: Node, t: AnyType, path: string, report: (p: string, m: string) => void, depth: number): void {
  switch (node.kind) {
    case 'record':
    case 'dict': {
      if (aliveListItems(t).length) report(path, `${node.what} holds keys, not a list`);
      for (const [key, it] of aliveEntries(t)) {
        const f = node.kind === 'dict' ? (node.key.safeParse(key).success ? node.entry : undefined) : (node.fields[key] ?? node.extra);
        const p = `${path}/${key}`;
        if (!f) {
          report(p, node.kind === 'dict' ? `"${key}" is not a valid key of ${node.what}` : `${node.what} has no key "${key}"`);
          continue;
        }
        const problem = contentProblem(f.node, it.content);
        if (problem) report(p, problem);
        else if (it.content instanceof Y.ContentType) walk(nodeForType(f.node, it.content.type)!, asType(it.content.type), p, report, depth + 1);
      }
      if (node.kind === 'record')
        for (const [k, f] of Object.entries(node.fields)) if (f.required && !(t._map.get(k) && !t._map.get(k)!.deleted)) report(path, `${node.what} needs "${k}"`);
      return;
    }
    case 'list':
      if (aliveEntries(t).length) report(path, `${node.what} is a list, not a map`);
      aliveListItems(t).forEach((it, i) => {
        const p = `${path}/${i}`;
        const problem = contentProblem(node.item, it.content);
        if (problem) report(p, problem);
        else if (it.content instanceof Y.ContentType) walk(nodeForType(node.item, it.content.type)!, asType(it.content.type), p, report, depth + 1);
      });
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
    const p = richContentProblem(t, key, it.content);
    if (p) report(path, p);
  }
  for (let it = t._start; it; it = it.right) {
    if (it.deleted) continue;
    const p = richContentProblem(t, null, it.content);
    if (p) report(path, p);
    else if (it.content instanceof Y.ContentType) walkRich(asType(it.content.type), path, report, depth + 1);
  }
}
