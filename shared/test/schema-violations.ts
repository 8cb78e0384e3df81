/**
 * One violating update per rule of the document schema, generated from the schema itself over the
 * fixture workspace (schema-fixture.ts): wrong types for every key, unknown keys, writes by every
 * writer a rule leaves out (with the same write by an allowed writer as a control), removal of
 * required keys, records created with keys their creator may not set, bad dictionary keys, list
 * inserts and removals, embeds and marks in plain text, wrong root types and unknown roots.
 * The cases carry the mutation only: the test applies it to a copy of the fixture, encodes the
 * update and checks it where the server would.
 */
import * as Y from 'yjs';
import * as S from '../src/index.ts';

export interface ViolationCase {
  /** Readable name of the rule broken. */
  rule: string;
  writer: S.Writer;
  /** Makes the change on a copy of the fixture (roots already typed). */
  mutate: (doc: Y.Doc) => void;
  /** Text the reported violation must contain (the key or place concerned). */
  expect: string;
  /** The same change by a writer the rule allows (must pass), when there is one. */
  control?: S.Writer;
}

type Step = string | number;
/** A path as the checker reports it (list items are `#`). */
const shown = (path: Step[]) => path.map((s) => (typeof s === 'number' ? '#' : s)).join('/');
const WRITERS_CHECKED: S.Writer[] = ['person', 'agent', 'kernel'];

export const originOf = (w: S.Writer): S.Origin =>
  w === 'person' ? S.userOrigin('u_eve', 'Eve') : w === 'agent' ? S.agentOrigin('r_x') : w === 'kernel' ? S.KERNEL_ORIGIN : S.serverOrigin('test');

/** A fresh copy of `base` with its roots typed as the schema says. */
export function copyOf(base: Y.Doc, typeRoots = true): Y.Doc {
  const doc = new Y.Doc();
  Y.applyUpdate(doc, Y.encodeStateAsUpdate(base));
  if (typeRoots) for (const [name, node] of Object.entries(S.WORKSPACE_SCHEMA.roots)) (node.kind === 'list' ? doc.getArray(name) : doc.getMap(name));
  return doc;
}

function typeAt(doc: Y.Doc, path: Step[]): Y.AbstractType<unknown> {
  const [root, ...rest] = path;
  const node = S.WORKSPACE_SCHEMA.roots[root as string]!;
  let t: unknown = node.kind === 'list' ? doc.getArray(root as string) : doc.getMap(root as string);
  for (const s of rest) t = typeof s === 'number' ? (t as Y.Array<unknown>).get(s) : (t as Y.Map<unknown>).get(s);
  return t as Y.AbstractType<unknown>;
}
const mapAt = (doc: Y.Doc, path: Step[]) => typeAt(doc, path) as Y.Map<unknown>;

const JSON_CANDIDATES: unknown[] = ['x', 42, -1.5, true, null, [], {}, { zz: [1] }, 'x'.repeat(20_001)];
/** A JSON value `node` refuses, if any. */
function badJson(node: S.Node): unknown {
  const accepts = (n: S.Node, v: unknown): boolean =>
    n.kind === 'json' ? n.schema.safeParse(v).success : n.kind === 'oneOf' ? n.options.some((o) => accepts(o, v)) : false;
  return JSON_CANDIDATES.find((v) => !accepts(node, v));
}
const acceptsJson = (n: S.Node): boolean => n.kind === 'json' || (n.kind === 'oneOf' && n.options.some(acceptsJson));
const isText = (n: S.Node): boolean => n.kind === 'text' || (n.kind === 'oneOf' && n.options.some(isText));
const denied = (rule: S.Writers) => WRITERS_CHECKED.filter((w) => !rule.includes(w));
const allowed = (rule: S.Writers) => WRITERS_CHECKED.find((w) => rule.includes(w));

/** Every case, for the fixture `base`. */
export function violationCases(base: Y.Doc): ViolationCase[] {
  const cases: ViolationCase[] = [];
  const seenRecords = new Set<S.Node>();

  const visitValue = (node: S.Node, value: unknown, path: Step[], parent: { kind: 'dict' | 'list'; path: Step[] } | null) => {
    if (value instanceof Y.Map && node.kind === 'oneOf') node = node.options.find((o) => o.kind === 'record' || o.kind === 'dict')!;
    if (value instanceof Y.Text && node.kind === 'oneOf') node = node.options.find((o) => o.kind === 'text')!;
    if (value instanceof Y.XmlFragment && node.kind === 'oneOf') node = node.options.find((o) => o.kind === 'richtext')!;
    if (node.kind === 'record' && value instanceof Y.Map) visitRecord(node, value, path, parent);
    else if (node.kind === 'dict' && value instanceof Y.Map) visitDict(node, value, path);
    else if (node.kind === 'list' && value instanceof Y.Array) visitList(node, value, path);
  };

  const visitRecord = (node: S.RecordNode, m: Y.Map<unknown>, path: Step[], parent: { kind: 'dict' | 'list'; path: Step[] } | null) => {
    const where = shown(path);
    const first = !seenRecords.has(node);
    seenRecords.add(node);
    if (first && !node.extra)
      cases.push({ rule: `${node.what}: unknown key`, writer: 'server', expect: 'zz_unknown', mutate: (d) => mapAt(d, path).set('zz_unknown', 1) });
    for (const [key, f] of Object.entries(node.extra ? { ...node.fields, zz_open: f_(node.extra) } : node.fields)) {
      if (key === 'zz_open') {
        if (first) pushShape(node.what, key, f, path);
        continue;
      }
      if (!m.has(key)) continue;
      const value = m.get(key);
      if (first) {
        pushShape(node.what, key, f, path);
        // Writers the rule leaves out change the key (text: type into it); an allowed one may.
        for (const w of denied(f.write)) {
          const mutate = value instanceof Y.Text ? (d: Y.Doc) => (mapAt(d, path).get(key) as Y.Text).insert(0, 'x')
            : value instanceof Y.XmlFragment ? (d: Y.Doc) => (mapAt(d, path).get(key) as Y.XmlFragment).insert(0, [new Y.XmlText('x')])
            : value instanceof Y.AbstractType ? (d: Y.Doc) => mapAt(d, path).delete(key)
            : (d: Y.Doc) => mapAt(d, path).set(key, structuredClone(value));
          const control = allowed(f.write);
          cases.push({ rule: `${node.what}.${key}: written by ${w}`, writer: w, expect: key === 'source' || value instanceof Y.Text ? where : key, mutate, control: f.required && value instanceof Y.AbstractType && !(value instanceof Y.Text) ? undefined : control });
        }
        if (f.required) cases.push({ rule: `${node.what}.${key}: required`, writer: 'server', expect: key, mutate: (d) => mapAt(d, path).delete(key) });
        if (f.create && parent) {
          for (const w of denied(f.create)) {
            const mutate = (d: Y.Doc) => {
              const copy = mapAt(d, path).clone();
              if (parent.kind === 'dict') mapAt(d, parent.path).set(`${String(path.at(-1))}_copy`, copy);
              else (typeAt(d, parent.path) as Y.Array<unknown>).push([copy]);
            };
            cases.push({ rule: `${node.what}.${key}: created by ${w}`, writer: w, expect: key, mutate });
          }
        }
        if (f.check && w_check(f, value)) cases.push(...w_check(f, value)!(path, key));
      }
      visitValue(f.node, value, [...path, key], null);
    }
  };

  const pushShape = (what: string, key: string, f: S.Field, path: Step[]) => {
    const k = key === 'zz_open' ? 'zz_open_key' : key;
    if (acceptsJson(f.node)) {
      const bad = badJson(f.node);
      if (bad !== undefined) cases.push({ rule: `${what}.${key}: bad value`, writer: 'server', expect: k, mutate: (d) => mapAt(d, path).set(k, structuredClone(bad)) });
      cases.push({ rule: `${what}.${key}: a map instead of a value`, writer: 'server', expect: k, mutate: (d) => mapAt(d, path).set(k, new Y.Map()) });
    } else {
      cases.push({ rule: `${what}.${key}: a plain value instead of ${f.node.what}`, writer: 'server', expect: k, mutate: (d) => mapAt(d, path).set(k, 'plain') });
      const other = f.node.kind === 'list' ? () => new Y.Map() : () => new Y.Array();
      cases.push({ rule: `${what}.${key}: another container instead of ${f.node.what}`, writer: 'server', expect: k, mutate: (d) => mapAt(d, path).set(k, other()) });
    }
    if (isText(f.node)) {
      cases.push({ rule: `${what}.${key}: an embed in text`, writer: 'server', expect: shown(path), mutate: (d) => withText(d, path, k, (t) => t.insertEmbed(0, { zz: 1 })) });
      cases.push({ rule: `${what}.${key}: formatting in plain text`, writer: 'server', expect: shown(path), mutate: (d) => withText(d, path, k, (t) => t.insert(0, 'x', { bold: true })) });
    }
  };

  const visitDict = (node: S.DictNode, m: Y.Map<unknown>, path: Step[]) => {
    const keys = [...m.keys()];
    if (!keys.length) return;
    const firstKey = keys[0]!;
    const where = shown(path);
    const sample = m.get(firstKey);
    const copy = (d: Y.Doc) => { const v = mapAt(d, path).get(firstKey); return v instanceof Y.AbstractType ? (v as Y.Map<unknown>).clone() : structuredClone(v); };
    if (!node.key.safeParse('').success) cases.push({ rule: `${node.what}: empty key`, writer: 'server', expect: where, mutate: (d) => mapAt(d, path).set('', copy(d)) });
    // A copied entry keeps keys only some writers may create: no control then.
    const restricted = node.entry.node.kind === 'record' && Object.values(node.entry.node.fields).some((f) => f.create);
    for (const w of denied(node.entry.write))
      cases.push({ rule: `${node.what}: entry added by ${w}`, writer: w, expect: 'added_by', mutate: (d) => mapAt(d, path).set('added_by', copy(d)), control: restricted ? undefined : allowed(node.entry.write) });
    for (const w of denied(node.entry.remove ?? node.entry.write))
      cases.push({ rule: `${node.what}: entry removed by ${w}`, writer: w, expect: firstKey, mutate: (d) => mapAt(d, path).delete(firstKey), control: allowed(node.entry.remove ?? node.entry.write) });
    if (acceptsJson(node.entry.node)) cases.push({ rule: `${node.what}: a map entry`, writer: 'server', expect: 'zz_entry', mutate: (d) => mapAt(d, path).set('zz_entry', new Y.Map()) });
    else cases.push({ rule: `${node.what}: a plain entry`, writer: 'server', expect: 'zz_entry', mutate: (d) => mapAt(d, path).set('zz_entry', 'plain') });
    const bad = acceptsJson(node.entry.node) ? badJson(node.entry.node) : undefined;
    if (bad !== undefined) cases.push({ rule: `${node.what}: bad entry`, writer: 'server', expect: 'zz_entry', mutate: (d) => mapAt(d, path).set('zz_entry', structuredClone(bad)) });
    for (const k of keys) visitValue(node.entry.node, m.get(k), [...path, k], { kind: 'dict', path });
    void sample;
  };

  const visitList = (node: S.ListNode, a: Y.Array<unknown>, path: Step[]) => {
    if (!a.length) return;
    const where = shown(path);
    const copy = (d: Y.Doc) => { const v = (typeAt(d, path) as Y.Array<unknown>).get(0); return v instanceof Y.AbstractType ? (v as Y.Map<unknown>).clone() : structuredClone(v); };
    for (const w of denied(node.insert))
      cases.push({ rule: `${node.what}: item added by ${w}`, writer: w, expect: where, mutate: (d) => (typeAt(d, path) as Y.Array<unknown>).push([copy(d)]), control: allowed(node.insert) });
    for (const w of denied(node.remove))
      cases.push({ rule: `${node.what}: item removed by ${w}`, writer: w, expect: where, mutate: (d) => (typeAt(d, path) as Y.Array<unknown>).delete(0), control: allowed(node.remove) });
    cases.push({ rule: `${node.what}: a keyed entry in a list`, writer: 'server', expect: where, mutate: (d) => (typeAt(d, path) as unknown as { _map: Map<string, unknown> }) && listKey(d, path) });
    cases.push({ rule: `${node.what}: a wrong item`, writer: 'server', expect: where, mutate: (d) => (typeAt(d, path) as Y.Array<unknown>).push([acceptsJson(node.item) ? new Y.Text('t') : 'plain']) });
    a.forEach((v, i) => visitValue(node.item, v, [...path, i], { kind: 'list', path }));
  };

  for (const [name, node] of Object.entries(S.WORKSPACE_SCHEMA.roots)) {
    const d = copyOf(base);
    visitValue(node, node.kind === 'list' ? d.getArray(name) : d.getMap(name), [name], null);
    // The root itself holding the wrong kind of content (on a copy whose roots are not typed yet).
    cases.push({
      rule: `${name}: wrong root type`, writer: 'server', expect: name,
      mutate: (doc) => (node.kind === 'list' ? doc.getMap(name).set('zz', 1) : doc.getArray(name).insert(0, ['zz'])),
    });
  }
  cases.push({ rule: 'unknown root', writer: 'server', expect: 'zz_root', mutate: (d) => d.getText('zz_root').insert(0, 'x') });
  cases.push({ rule: 'rich text holding a map', writer: 'server', expect: 'cells', mutate: (d) => (mapAt(d, ['cells', 'c_md']).get('source') as Y.XmlFragment).insert(0, [new Y.Map() as never]) });
  cases.push({ rule: 'schema version from a person', writer: 'person', expect: 'schemaVersion', mutate: (d) => mapAt(d, ['meta']).set('schemaVersion', 999) });
  return cases;
}

const f_ = (f: S.Field) => f;
/** A chat author check: a person posting as the agent. */
function w_check(f: S.Field, value: unknown) {
  if (!f.check || typeof value !== 'object' || !value) return null;
  return (path: Step[], key: string): ViolationCase[] => {
    const parentPath = path.slice(0, -1);
    return [{
      rule: `${path[0]} ${key}: a person writing as the agent`, writer: 'person', expect: key,
      mutate: (d) => {
        const copy = mapAt(d, path).clone();
        copy.set(key, { ...(value as object), kind: 'agent' });
        (typeAt(d, parentPath) as Y.Array<unknown>).push([copy]);
      },
    }];
  };
}

function withText(d: Y.Doc, path: Step[], key: string, fn: (t: Y.Text) => void) {
  const t = mapAt(d, path).get(key);
  if (t instanceof Y.Text) fn(t);
  else {
    const fresh = new Y.Text();
    mapAt(d, path).set(key, fresh);
    fn(fresh);
  }
}

/** Puts a keyed entry into a list type (Yjs' API cannot: write the struct through a map of the same name on a copy). */
function listKey(d: Y.Doc, path: Step[]): void {
  const list = typeAt(d, path) as unknown as Y.AbstractType<unknown>;
  // A Y.Map's set() works on any type's key space: call it with the list as `this`.
  (Y.Map.prototype.set as (this: unknown, k: string, v: unknown) => void).call(list, 'zz_key', 1);
}
