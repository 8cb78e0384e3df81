/**
 * The document schema: the fixture workspace (every record, written by the writers that really
 * write it) is valid, it covers every key the schema declares, and one generated update per rule
 * is refused — while the same change by a writer the rule allows passes.
 */
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import * as S from '../src/index.ts';
import { buildFixture } from './schema-fixture.ts';
import { copyOf, originOf, violationCases } from './schema-violations.ts';

const writes: Array<{ writer: S.Writer; violations: S.Violation[] }> = [];
const base = buildFixture((w) => writes.push(w));

function violationsOf(writer: S.Writer, mutate: (d: Y.Doc) => void): { update: S.Violation[]; doc: S.Violation[] } {
  const d = copyOf(base, false);
  const sv = Y.encodeStateVector(d);
  d.transact(() => mutate(d), originOf(writer));
  const update = Y.encodeStateAsUpdate(d, sv);
  const replica = copyOf(base, false);
  let found: S.Violation[] = [];
  replica.on('afterTransaction', (tr: Y.Transaction) => (found = found.concat(S.checkTransaction(tr, writer))));
  Y.applyUpdate(replica, update, 'remote');
  return { update: found, doc: S.checkDocument(replica) };
}

describe('document schema', () => {
  it('the fixture is valid and each of its writes keeps its writer’s rules', () => {
    expect(writes.length).toBeGreaterThan(45);
    expect(writes.filter((w) => w.violations.length)).toEqual([]);
    expect(S.checkDocument(base)).toEqual([]);
  });

  it('the fixture holds every key of every record the schema declares', () => {
    const declared = new Set<string>();
    const present = new Set<string>();
    const walk = (node: S.Node, v: unknown) => {
      if (node.kind === 'oneOf') return node.options.forEach((o) => walk(o, v));
      if (node.kind === 'record' && v instanceof Y.Map) {
        for (const [k, f] of Object.entries(node.fields)) {
          declared.add(`${node.what}.${k}`);
          if (v.has(k)) {
            present.add(`${node.what}.${k}`);
            walk(f.node, v.get(k));
          }
        }
      } else if (node.kind === 'dict' && v instanceof Y.Map) v.forEach((x) => walk(node.entry.node, x));
      else if (node.kind === 'list' && v instanceof Y.Array) v.forEach((x) => walk(node.item, x));
    };
    const d = copyOf(base);
    for (const [name, node] of Object.entries(S.WORKSPACE_SCHEMA.roots)) walk(node, node.kind === 'list' ? d.getArray(name) : d.getMap(name));
    expect([...declared].filter((k) => !present.has(k))).toEqual([]);
  });

  it('requires only keys written once (undo racing an overwrite can leave any other key without a value)', () => {
    const bad: string[] = [];
    const walk = (node: S.Node) => {
      if (node.kind === 'oneOf') return node.options.forEach(walk);
      if (node.kind === 'record') for (const [k, f] of Object.entries(node.fields)) {
        if (f.required && f.write.length > 0 && f.node.kind !== 'text') bad.push(`${node.what}.${k}`);
        walk(f.node);
      }
      if (node.kind === 'dict') walk(node.entry.node);
      if (node.kind === 'list') walk(node.item);
    };
    Object.values(S.WORKSPACE_SCHEMA.roots).forEach(walk);
    expect(bad).toEqual([]);
  });

  const cases = violationCases(base);
  it('generates cases for every kind of rule', () => {
    expect(cases.length).toBeGreaterThan(150);
    for (const kind of ['unknown key', 'bad value', 'another container', 'written by person', 'written by kernel', 'written by agent', 'required', 'created by person', 'entry added by kernel', 'entry removed by', 'item added by', 'item removed by', 'wrong root type', 'unknown root', 'an embed in text', 'a person writing as the agent'])
      expect(cases.some((c) => c.rule.includes(kind)), kind).toBe(true);
  });

  for (const c of cases) {
    it(`refuses: ${c.rule}`, () => {
      const { update, doc } = violationsOf(c.writer, c.mutate);
      expect(update.map((v) => `${v.path}: ${v.problem}`).join('\n')).toContain(c.expect);
      if (c.writer === 'server') expect(doc.length).toBeGreaterThan(0); // shape rules hold for whole documents too
      if (c.control) expect(violationsOf(c.control, c.mutate).update).toEqual([]);
    });
  }
});

describe('a document checked a share at a time (checkDocumentSteps, as a server loads one)', () => {
  const stepped = (doc: Y.Doc, perStep: number) => {
    const steps = S.checkDocumentSteps(doc, undefined, 10_000, perStep);
    let yields = 0;
    for (;;) {
      const step = steps.next();
      if (step.done) return { violations: step.value, yields };
      yields++;
    }
  };
  const text = (vs: S.Violation[]) => vs.map((v) => `${v.path}: ${v.problem}`).sort();

  it('finds what the whole check finds, for every document-shape rule broken', () => {
    let broken = 0;
    for (const c of violationCases(base).filter((x) => x.writer === 'server')) {
      const d = copyOf(base, false);
      d.transact(() => c.mutate(d), originOf(c.writer));
      const whole = S.checkDocument(d, undefined, 10_000);
      expect(whole.length, c.rule).toBeGreaterThan(0);
      expect(text(stepped(d, 1).violations), c.rule).toEqual(text(whole));
      broken++;
    }
    expect(broken).toBeGreaterThan(20);
    expect(stepped(copyOf(base, false), 3).violations).toEqual([]);
  });

  it('checks the entries of the roots a share per step', () => {
    const d = copyOf(base, false);
    for (let i = 0; i < 500; i++) S.createCell(d, { kind: 'code', source: `const x${i} = ${i};`, author: 'u_ada' }, S.userOrigin('u_ada'));
    const entries = [...d.share.values()].reduce((n, t) => n + (t as Y.AbstractType<unknown>)._map.size + (t as Y.AbstractType<unknown>)._length, 0);
    const { violations, yields } = stepped(d, 50);
    expect(violations).toEqual([]);
    expect(yields).toBeGreaterThanOrEqual(Math.floor(500 / 50));
    expect(yields).toBeLessThanOrEqual(Math.ceil(entries / 50) + 1);
  });
});

describe('a run written whole when it ended (a plain `exec` value, recordExec)', () => {
  const setExec = (v: unknown) => (d: Y.Doc) => S.getCell(d, 'c_fast')!.map.set('exec', v);
  const good = { runId: 'k_9', state: 'done', requestId: null, trigger: 'request', requestedBy: { id: 'u_ada' }, count: 3, startedAt: 1, endedAt: 2, durationMs: 1, defines: ['z'], outputs: [{ type: 'text', text: '1' }, { type: 'table', rows: [{ a: 1 }], totalRows: 1 }] };

  it('the kernel may write one; nobody else may', () => {
    expect(violationsOf('kernel', setExec(good)).update).toEqual([]);
    for (const writer of ['person', 'agent'] as const) expect(violationsOf(writer, setExec(good)).update.length, writer).toBeGreaterThan(0);
  });

  it('refuses a plain run that is still running, lacks its id, has keys the schema does not know, or outputs that are not outputs', () => {
    const bad: unknown[] = [
      { ...good, state: 'running' },
      { ...good, runId: undefined },
      { ...good, runId: '' },
      { ...good, extra: 1 },
      { ...good, outputs: 'text' },
      { ...good, outputs: [{ text: 'no type' }] },
      { ...good, outputs: [{ type: 'text', text: 5 }] },
      { ...good, outputs: undefined },
      { ...good, reason: 'x'.repeat(2001) },
      'done',
      ['k_9', 'done'],
    ];
    for (const v of bad) {
      const { update, doc } = violationsOf('kernel', setExec(v));
      expect(update.length, JSON.stringify(v)).toBeGreaterThan(0);
      expect(doc.length, JSON.stringify(v)).toBeGreaterThan(0); // and whole documents holding it are refused too
    }
  });
});
