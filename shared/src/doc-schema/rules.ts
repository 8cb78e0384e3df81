/**
 * The rules of the document schema as single checks, shared by the two ways the server and the
 * browser enforce them: `check.ts` (what an applied transaction did) and `precheck.ts` (what a
 * decoded update would do, before anything is applied). Each check takes where an edit lands — a
 * `Place` in the schema — and what it writes there, so both callers apply the same rule the same
 * way. Reads Yjs internals (`_item`, `_map`), see check.ts. Pure module; not exported from the
 * package.
 */
import * as Y from 'yjs';
import type { DictNode, DocSchema, Field, Node, RecordNode, Writer, Writers } from './spec.ts';

// Yjs internals read here (stable across Yjs 13).
export type AnyType = Y.AbstractType<unknown> & { _item: Y.Item | null; _map: Map<string, Y.Item>; _start: Y.Item | null };
export const asType = (t: unknown) => t as AnyType;

/** What a type is, in the schema: its node, and the field whose rule governs edits inside it. */
export interface Place {
  node: Node;
  /** The rule for edits inside a text (or rich text) and for the type itself. */
  rule: Writers;
  path: string;
  /** Created by the change being checked (its contents need no edit rights). */
  fresh: boolean;
}
/** A place, or 'dead' (inside something deleted or unknown: invisible), or an unknown root. */
export type Resolved = Place | 'dead' | { unknownRoot: string };

/** Where problems go (an object, so that callers need not create a closure per check). */
export interface Reporter {
  report(path: string, problem: string): void;
}

const TAG = /^[A-Za-z][\w-]{0,63}$/;
export const MAX_RICH_DEPTH = 64;

/** The option of `node` a Yjs type can be (oneOf picks by type class), or null. */
export function nodeForType(node: Node, t: unknown): Node | null {
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
export function contentProblem(node: Node, content: unknown): string | null {
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

export const may = (rule: Writers, writer: Writer) => writer === 'server' || rule.includes(writer);

/** Problems of content inside rich text (elements, text runs with marks, element attributes). */
export function richContentProblem(parentClass: unknown, key: string | null, content: unknown): string | null {
  const pc = parentClass;
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

/** How deep a live rich-text type is below its fragment. */
export function richDepth(t: AnyType): number {
  let d = 0;
  for (let p: AnyType | null = t; p && p.constructor !== Y.XmlFragment; p = p._item ? asType(p._item.parent) : null) d++;
  return d;
}

/** Results of dictionary key checks (ids are checked on every edit inside their entry), bounded. */
const validKeys = new WeakMap<object, Map<string, boolean>>();
/** Whether `key` is a valid key of the dictionary `node`. */
export function validKey(node: DictNode, key: string): boolean {
  let known = validKeys.get(node.key);
  if (!known) validKeys.set(node.key, (known = new Map()));
  let ok = known.get(key);
  if (ok === undefined) {
    ok = node.key.safeParse(key).success;
    if (known.size >= 10_000) known.clear();
    known.set(key, ok);
  }
  return ok;
}

/** The field under which `key` of a container described by `node` lives (null for list items of no field). */
export function childField(node: Node, key: string | null): Field | null {
  switch (node.kind) {
    case 'record':
      return key === null ? null : (node.fields[key] ?? node.extra ?? null);
    case 'dict':
      return key === null || !validKey(node, key) ? null : node.entry;
    case 'list':
      return key === null ? { node: node.item, write: node.insert } : null;
    default:
      return null;
  }
}

/** Where a child type created at `key` of a container at `parent` sits (the type itself is checked where it is added). */
export function childPlace(parent: Place, key: string | null, type: unknown, fresh: boolean): Place | 'dead' {
  const path = `${parent.path}/${key ?? '#'}`;
  if (parent.node.kind === 'richtext') return { node: parent.node, rule: parent.rule, path, fresh: fresh || parent.fresh };
  const f = childField(parent.node, key);
  if (!f) return 'dead';
  const node = nodeForType(f.node, type);
  return node ? { node, rule: f.write, path, fresh: fresh || parent.fresh } : 'dead';
}

/**
 * Resolves live types to their places, with a cache (one resolver per checked change). `isFresh`
 * tells items the change created; a deleted container (or one inside a deleted one) is 'dead'.
 * A class, not closures: the server runs with tsx, whose name-keeping wraps every closure created.
 */
export class PlaceResolver {
  private readonly seen = new Map<unknown, Resolved>();
  constructor(
    private readonly schema: DocSchema,
    private readonly isFresh: ((item: Y.Item) => boolean) | null,
  ) {}

  resolve(t: AnyType): Resolved {
    const hit = this.seen.get(t);
    if (hit) return hit;
    let r: Resolved;
    const item = t._item;
    if (item === null) {
      const name = Y.findRootTypeKey(t);
      const node = this.schema.roots[name];
      r = node ? { node, rule: [], path: name, fresh: false } : { unknownRoot: name };
    } else if (item.deleted) r = 'dead';
    else {
      const parent = this.resolve(asType(item.parent));
      // Unknown roots are reported where they were created.
      r = parent === 'dead' || 'unknownRoot' in parent ? 'dead' : childPlace(parent, item.parentSub, t, this.isFresh !== null && this.isFresh(item));
    }
    this.seen.set(t, r);
    return r;
  }
}

/** A new record created by the change, whose required keys are checked once everything is in. */
export interface NewRecord {
  node: RecordNode;
  path: string;
}

/** What is added, and where: an item's parent (its place and class), key and content. */
export interface Addition {
  at: Place;
  /** The parent type's class (Y.Map, Y.XmlText, …). */
  parentClass: unknown;
  /** The parent's depth below its rich-text fragment, or the live parent to count it from (asked only for types added to rich text). */
  richDepth: number | AnyType;
  /** The parent was created by the same change. */
  parentFresh: boolean;
  key: string | null;
  content: unknown;
}

/**
 * Checks one added item against the schema and `writer`'s rights. Reports problems; returns the
 * new record the item creates, if any (its required keys are checked by the caller at the end).
 */
export function checkAddition(a: Addition, writer: Writer, to: Reporter): NewRecord | null {
  const { at, key, content, parentFresh } = a;
  const path = `${at.path}/${key ?? '#'}`;
  const node = at.node;
  switch (node.kind) {
    case 'text':
      if (key !== null || !(content instanceof Y.ContentString || content instanceof Y.ContentDeleted)) to.report(at.path, `${node.what} holds characters only`);
      else if (!parentFresh && !may(at.rule, writer)) to.report(at.path, `${writer} may not edit ${node.what}`);
      return null;
    case 'richtext': {
      const p = richContentProblem(a.parentClass, key, content);
      if (p) to.report(at.path, p);
      else if (content instanceof Y.ContentType && (typeof a.richDepth === 'number' ? a.richDepth : richDepth(a.richDepth)) > MAX_RICH_DEPTH) to.report(at.path, 'rich text nested too deeply');
      else if (!parentFresh && !may(at.rule, writer)) to.report(at.path, `${writer} may not edit ${node.what}`);
      return null;
    }
    case 'list': {
      if (key !== null) return to.report(at.path, `${node.what} is a list: it has no key "${key}"`), null;
      if (!parentFresh && !may(node.insert, writer)) return to.report(at.path, `${writer} may not add to ${node.what}`), null;
      const p = contentProblem(node.item, content);
      if (p) return to.report(`${at.path}/#`, p), null;
      return newRecordOf(content, node.item, `${at.path}/#`);
    }
    case 'record':
    case 'dict': {
      if (key === null) return to.report(at.path, `${node.what} holds keys, not a list`), null;
      let f: Field | undefined;
      if (node.kind === 'dict') {
        if (!validKey(node, key)) return to.report(path, `"${key}" is not a valid key of ${node.what}`), null;
        f = node.entry;
      } else f = node.fields[key] ?? node.extra;
      if (!f) return to.report(path, `${node.what} has no key "${key}"`), null;
      const rule = parentFresh ? f.create : f.write;
      if (rule && !may(rule, writer)) return to.report(path, `${writer} may not ${parentFresh ? 'create' : 'write'} ${key}`), null;
      const p = contentProblem(f.node, content);
      if (p) return to.report(path, p), null;
      // Every element: a map shows the last one of a multi-value write, a list holds them all.
      if (f.check && content instanceof Y.ContentAny)
        for (const v of content.arr) {
          const c = f.check(v, writer);
          if (c) return to.report(path, c), null;
        }
      return newRecordOf(content, f.node, path);
    }
    default:
      return null;
  }
}

function newRecordOf(content: unknown, node: Node, path: string): NewRecord | null {
  if (!(content instanceof Y.ContentType)) return null;
  const n = nodeForType(node, content.type);
  return n?.kind === 'record' ? { node: n, path } : null;
}

/** Required keys of a new record that it does not hold (`has` tells which keys end up set). */
export function checkRequired(r: NewRecord, has: (key: string) => boolean, to: Reporter): void {
  for (const [k, f] of Object.entries(r.node.fields)) if (f.required && !has(k)) to.report(r.path, `${r.node.what} needs "${k}"`);
}

/**
 * Checks the removal of an item that existed before the change, from a live container at `at`:
 * `key` is the item's map key (null in lists and text); `replaced` says the key holds a new value
 * after the change.
 */
export function checkRemoval(at: Place, key: string | null, replaced: boolean, writer: Writer, to: Reporter): void {
  const node = at.node;
  if (node.kind === 'text' || node.kind === 'richtext') {
    if (!may(at.rule, writer)) to.report(at.path, `${writer} may not edit ${node.what}`);
    return;
  }
  if (node.kind === 'list') {
    if (!may(node.remove, writer)) to.report(at.path, `${writer} may not remove from ${node.what}`);
    return;
  }
  if ((node.kind === 'record' || node.kind === 'dict') && key !== null) {
    if (replaced) return; // the new value was checked
    const f = node.kind === 'dict' ? node.entry : (node.fields[key] ?? node.extra);
    if (!f) return;
    if (!may(f.remove ?? f.write, writer)) to.report(`${at.path}/${key}`, `${writer} may not remove ${key}`);
    else if (f.required) to.report(`${at.path}/${key}`, `${key} is required`);
  }
}
