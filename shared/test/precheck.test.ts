/**
 * The pre-check (doc-schema/precheck.ts) against the slow check it stands in for: applying the
 * update to a scratch replica and running `checkTransaction` there (what the server's shadow
 * does). The pre-check may say "decide the slow way" whenever it likes, but whenever it accepts,
 * the slow way must accept too — the update applies without throwing, leaves nothing pending and
 * breaks no rule. Checked on every update of the convergence fuzzer's writers (people, agent,
 * kernel, server; delivered in order, merged, and out of order), on one violating update per
 * schema rule, on randomly mutated real updates, and on hand-built hostile structs. It must also
 * accept what real clients send: the test fails if the fast path stops being taken.
 */
import { describe, expect, it } from 'vitest';
import * as encoding from 'lib0/encoding';
import * as Y from 'yjs';
import * as S from '../src/index.ts';
import { runFuzz } from './fuzz.ts';
import { Rng, canonicalJson, docView } from './helpers.ts';
import { buildFixture } from './schema-fixture.ts';
import { copyOf, originOf, violationCases } from './schema-violations.ts';
import { checkAddition } from '../src/doc-schema/rules.ts';

/** The slow check: apply to a copy, check the transaction, refuse pending changes. */
function slowVerdict(live: Y.Doc, update: Uint8Array, writer: S.Writer): { ok: boolean; why: string; after?: Y.Doc } {
  const shadow = new Y.Doc({ gc: live.gc });
  Y.applyUpdate(shadow, Y.encodeStateAsUpdate(live));
  let violations: S.Violation[] = [];
  shadow.on('afterTransaction', (tr: Y.Transaction) => (violations = violations.concat(S.checkTransaction(tr, writer))));
  try {
    Y.applyUpdate(shadow, update);
  } catch (e) {
    return { ok: false, why: `throws: ${(e as Error).message}` };
  }
  if (violations.length) return { ok: false, why: violations.map((v) => `${v.path}: ${v.problem}`).join('; ') };
  if (shadow.store.pendingStructs || shadow.store.pendingDs) return { ok: false, why: 'pending' };
  return { ok: true, why: '', after: shadow };
}

function fastVerdict(live: Y.Doc, update: Uint8Array, writer: S.Writer): S.Precheck {
  let decoded: S.DecodedUpdate;
  try {
    decoded = S.decodeForPrecheck(update);
  } catch {
    return { ok: false, reason: 'does not decode' };
  }
  return S.precheckUpdate(live, decoded, writer);
}

/** Feeds updates to a server replica the way the server does; returns how many took the fast path. */
class Server {
  readonly doc = new Y.Doc();
  fast = 0;
  slow = 0;
  refused = 0;
  readonly reasons = new Map<string, number>();
  readonly problems: string[] = [];

  receive(update: Uint8Array, writer: S.Writer): void {
    const fast = fastVerdict(this.doc, update, writer);
    const slow = slowVerdict(this.doc, update, writer);
    if (fast.ok && !slow.ok) this.problems.push(`accepted by the pre-check, refused by the slow check (${slow.why})`);
    if (!fast.ok) this.reasons.set(fast.reason, (this.reasons.get(fast.reason) ?? 0) + 1);
    if (!slow.ok) {
      this.refused++;
      return;
    }
    if (fast.ok) this.fast++;
    else this.slow++;
    Y.applyUpdate(this.doc, update);
    if (this.doc.store.pendingStructs || this.doc.store.pendingDs) this.problems.push('pending after an accepted update');
  }
}

describe('pre-check of incoming updates', () => {
  it('takes the fast path for every update of a writer working alone (no concurrent edits)', () => {
    for (const seed of [2, 9]) {
      const server = new Server();
      const r = runFuzz(seed, 1, 300, (u, writer) => server.receive(u, writer));
      expect(r.problems).toEqual([]);
      expect(server.problems).toEqual([]);
      expect(server.refused).toBe(0);
      expect([...server.reasons], `seed ${seed}`).toEqual([]);
      expect(server.fast).toBeGreaterThan(150);
    }
  });

  it('accepts only what the slow check accepts, and most of what concurrent writers send in order', () => {
    for (const [seed, replicas, ops] of [
      [1, 2, 200],
      [7, 3, 300],
      [45, 5, 300],
    ] as const) {
      const server = new Server();
      const r = runFuzz(seed, replicas, ops, (u, writer) => server.receive(u, writer));
      expect(r.problems).toEqual([]);
      expect(server.problems, `seed ${seed}`).toEqual([]);
      expect(server.refused, `seed ${seed}: the fuzzer's writers keep the rules`).toBe(0);
      // Concurrent map writes, and edits inside what another replica deleted meanwhile, go the slow way.
      expect(server.fast, `seed ${seed}: ${JSON.stringify([...server.reasons])}`).toBeGreaterThan(0.8 * (server.fast + server.slow));
    }
  });

  it('never accepts what the slow check refuses when updates arrive merged or out of order', () => {
    for (const seed of [3, 11, 29]) {
      const updates: Array<{ u: Uint8Array; writer: S.Writer; replica: number }> = [];
      runFuzz(seed, 3, 200, (u, writer, replica) => updates.push({ u, writer, replica }));
      const rng = new Rng(seed);
      const server = new Server();
      // Runs of one replica's consecutive updates merged (a reconnect's sync step 2), others swapped.
      let i = 0;
      while (i < updates.length) {
        const n = 1 + rng.int(4);
        const batch = updates.slice(i, i + n).filter((x) => x.replica === updates[i]!.replica && x.writer === updates[i]!.writer);
        i += batch.length;
        if (rng.bool(0.15) && i < updates.length) {
          const next = updates[i]!;
          server.receive(next.u, next.writer); // ahead of what it may depend on
        }
        server.receive(batch.length > 1 ? Y.mergeUpdates(batch.map((b) => b.u)) : batch[0]!.u, batch[0]!.writer);
      }
      expect(server.problems, `seed ${seed}`).toEqual([]);
      expect(server.fast + server.slow + server.refused).toBeGreaterThan(100);
    }
  });

  const base = buildFixture(() => {});
  const updateOf = (writer: S.Writer, mutate: (d: Y.Doc) => void) => {
    const d = copyOf(base, false);
    const sv = Y.encodeStateVector(d);
    d.transact(() => mutate(d), originOf(writer));
    return Y.encodeStateAsUpdate(d, sv);
  };

  it('turns down every violating update the schema generates, and accepts the allowed writer’s same change', () => {
    const cases = violationCases(base);
    expect(cases.length).toBeGreaterThan(150);
    // The slow check refuses each of these (doc-schema.test.ts); the pre-check never changes the document.
    const live = copyOf(base, false);
    let controls = 0;
    for (const c of cases) {
      expect(fastVerdict(live, updateOf(c.writer, c.mutate), c.writer).ok, c.rule).toBe(false);
      if (c.control && fastVerdict(live, updateOf(c.control, c.mutate), c.control).ok) controls++;
    }
    expect(controls).toBeGreaterThan(0.9 * cases.filter((c) => c.control).length);
  });

  it('never accepts a randomly mutated update the slow check refuses (or that throws)', () => {
    const rng = new Rng(2026);
    const updates: Array<{ u: Uint8Array; writer: S.Writer }> = [];
    const server = new Server();
    runFuzz(5, 2, 120, (u, writer) => {
      updates.push({ u, writer });
      server.receive(u, writer);
    });
    // Mutations of each update against the state just before it.
    const replay = new Y.Doc();
    let fastAccepted = 0;
    let tried = 0;
    const problems: string[] = [];
    for (const { u, writer } of updates) {
      for (let k = 0; k < 20; k++) {
        const m = u.slice();
        for (let f = 1 + rng.int(3); f > 0; f--) m[rng.int(m.length)] = rng.int(256);
        const fast = fastVerdict(replay, m, writer);
        tried++;
        if (!fast.ok) continue;
        fastAccepted++;
        const slow = slowVerdict(replay, m, writer);
        if (!slow.ok) problems.push(`mutation accepted by the pre-check only: ${slow.why}`);
        // Applying it to the live document itself must not throw either.
        const probe = new Y.Doc();
        Y.applyUpdate(probe, Y.encodeStateAsUpdate(replay));
        expect(() => Y.applyUpdate(probe, m)).not.toThrow();
      }
      Y.applyUpdate(replay, u);
    }
    expect(problems).toEqual([]);
    expect(tried).toBeGreaterThan(1000);
    expect(fastAccepted).toBeGreaterThan(0); // some mutations are still valid updates
  });

  it('checks every value of a multi-value write (a map shows the last one): a person cannot slip in an agent author', () => {
    const node = (S.WORKSPACE_SCHEMA.roots.chat as S.ListNode).item as S.RecordNode;
    const problems: string[] = [];
    const author = (kind: string) => ({ id: kind === 'agent' ? 'agent' : 'u_a', name: kind, kind });
    const add = (values: unknown[]) =>
      checkAddition({ at: { node, rule: [], path: 'chat/#', fresh: true }, parentClass: Y.Map, richDepth: 0, parentFresh: true, key: 'author', content: new Y.ContentAny(values) }, 'person', { report: (p, m) => problems.push(`${p}: ${m}`) });
    add([author('person')]);
    expect(problems).toEqual([]);
    add([author('person'), author('agent')]);
    expect(problems.join('\n')).toContain('chat/#/author');
  });

  describe('hand-built structs', () => {
    // A live document with a code cell (plain text), a deleted cell and garbage-collected items.
    const live = new Y.Doc();
    live.clientID = 1;
    S.initWorkspace(live, { title: 't', created: 0 }, S.serverOrigin('seed'));
    const me = S.userOrigin('u_a', 'A');
    const cell = S.createCell(live, { kind: 'code', source: 'hello', author: 'u_a' }, me);
    const gone = S.createCell(live, { kind: 'code', source: 'bye', author: 'u_a' }, me);
    S.deleteCell(live, gone, me);
    const cells = S.roots(live).cells;
    const text = (cells.get(cell) as Y.Map<unknown>).get('source') as Y.Text;
    const textItem = (text as unknown as { _start: Y.Item })._start;
    const cellItem = (cells as unknown as { _map: Map<string, Y.Item> })._map.get(cell)!;
    const goneItem = (cells as unknown as { _map: Map<string, Y.Item> })._map.get(gone)!;
    const structs = live.store.clients.get(1)!;
    const gc = structs.find((s) => s instanceof Y.GC);
    const deletedType = structs.find((s) => s instanceof Y.Item && s.deleted && !(s.content instanceof Y.ContentType) && s.content instanceof Y.ContentDeleted);

    type Spec = { client: number; clock: number; origin?: Y.ID | null; rightOrigin?: Y.ID | null; parent?: string | Y.ID; key?: string; content: 'string' | 'any' | 'map' | 'binary' | 'embed' | 'deleted'; value?: unknown };
    /** Encodes client sections (v1) the way Yjs does, without Yjs' own checks (a client may appear twice). */
    function encodeSections(sections: Array<{ client: number; clock: number; specs: Spec[] }>, deletes: Array<[number, number, number]> = []): Uint8Array {
      const e = encoding.createEncoder();
      encoding.writeVarUint(e, sections.length);
      for (const { client, clock, specs: list } of sections) {
        encoding.writeVarUint(e, list.length);
        encoding.writeVarUint(e, client);
        encoding.writeVarUint(e, clock);
        for (const s of list) {
          const ref = { string: 4, any: 8, map: 7, binary: 3, embed: 5, deleted: 1 }[s.content];
          encoding.writeUint8(e, ref | (s.origin ? 0x80 : 0) | (s.rightOrigin ? 0x40 : 0) | (s.key !== undefined ? 0x20 : 0));
          if (s.origin) (encoding.writeVarUint(e, s.origin.client), encoding.writeVarUint(e, s.origin.clock));
          if (s.rightOrigin) (encoding.writeVarUint(e, s.rightOrigin.client), encoding.writeVarUint(e, s.rightOrigin.clock));
          if (!s.origin && !s.rightOrigin) {
            if (typeof s.parent === 'string') (encoding.writeVarUint(e, 1), encoding.writeVarString(e, s.parent));
            else (encoding.writeVarUint(e, 0), encoding.writeVarUint(e, s.parent!.client), encoding.writeVarUint(e, s.parent!.clock));
            if (s.key !== undefined) encoding.writeVarString(e, s.key);
          }
          if (s.content === 'string') encoding.writeVarString(e, String(s.value ?? 'x'));
          else if (s.content === 'any') {
            const values = Array.isArray(s.value) ? s.value : [s.value ?? 'x'];
            encoding.writeVarUint(e, values.length);
            for (const v of values) encoding.writeAny(e, v as string);
          } else if (s.content === 'map') encoding.writeVarUint(e, 1); // YMap type ref
          else if (s.content === 'binary') encoding.writeVarUint8Array(e, new Uint8Array([1]));
          else if (s.content === 'deleted') encoding.writeVarUint(e, 1);
          else encoding.writeVarString(e, JSON.stringify(s.value ?? {}));
        }
      }
      const dsByClient = new Map<number, Array<[number, number]>>();
      for (const [c, clock, len] of deletes) dsByClient.set(c, [...(dsByClient.get(c) ?? []), [clock, len]]);
      encoding.writeVarUint(e, dsByClient.size);
      for (const [c, ranges] of dsByClient) {
        encoding.writeVarUint(e, c);
        encoding.writeVarUint(e, ranges.length);
        for (const [clock, len] of ranges) (encoding.writeVarUint(e, clock), encoding.writeVarUint(e, len));
      }
      return encoding.toUint8Array(e);
    }
    /** One section per client, in the order given. */
    function encode(specs: Spec[], deletes: Array<[number, number, number]> = []): Uint8Array {
      const byClient = new Map<number, Spec[]>();
      for (const sp of specs) byClient.set(sp.client, [...(byClient.get(sp.client) ?? []), sp]);
      return encodeSections([...byClient].map(([client, list]) => ({ client, clock: list[0]!.clock, specs: list })), deletes);
    }
    const cellKey = (key: string) => (cells.get(cell) as unknown as { _map: Map<string, Y.Item> })._map.get(key)!;
    const end = (it: Y.Item) => Y.createID(it.id.client, it.id.clock + it.length - 1);
    const state = Y.getState(live.store, 1);
    const fresh = 77; // a client the document has not seen

    it('accepts typing after a live character, and a first write to a new key', () => {
      expect(fastVerdict(live, encode([{ client: fresh, clock: 0, origin: end(textItem), content: 'string', value: '!' }]), 'person')).toEqual({ ok: true });
      expect(slowVerdict(live, encode([{ client: fresh, clock: 0, origin: end(textItem), content: 'string', value: '!' }]), 'person').ok).toBe(true);
    });

    const hostile: Array<[string, Uint8Array, string]> = [
      ['a gap before the first struct', encode([{ client: fresh, clock: 3, origin: end(textItem), content: 'string' }]), 'depends on changes'],
      ['an overlap with what the document has', encode([{ client: 1, clock: state - 1, origin: end(textItem), content: 'string' }]), 'overlaps'],
      ['a neighbour the document does not have', encode([{ client: fresh, clock: 0, origin: Y.createID(99, 5), content: 'string' }]), 'neighbour'],
      ['a neighbour later in the same update', encode([{ client: fresh, clock: 0, origin: Y.createID(fresh, 1), content: 'string' }, { client: fresh, clock: 1, origin: end(textItem), content: 'string' }]), 'neighbour'],
      ['a reference to itself', encode([{ client: fresh, clock: 0, origin: Y.createID(fresh, 0), content: 'string' }]), 'neighbour'],
      ['an unknown root', encode([{ client: fresh, clock: 0, parent: 'nope', key: 'k', content: 'any' }]), 'root'],
      ['neighbours in two different places', encode([{ client: fresh, clock: 0, origin: end(textItem), rightOrigin: cellItem.id, content: 'string' }]), 'different places'],
      ['binary content', encode([{ client: fresh, clock: 0, origin: end(textItem), content: 'binary' }]), 'content'],
      ['an embed in plain text', encode([{ client: fresh, clock: 0, origin: end(textItem), content: 'embed' }]), 'content'],
      ['a deletion beyond the document', encode([], [[1, state, 1]]), 'does not have'],
      ['a deletion of nothing past the end', encode([], [[1, state + 5, 0]]), 'does not have'],
      ['a map write after an old value of the key (may lose)', encode([{ client: fresh, clock: 0, parent: 'cells', key: cell, content: 'any' }]), ''],
      ['a key written twice in one update', encode([{ client: fresh, clock: 0, parent: 'meta', key: 'zz', content: 'any' }, { client: fresh, clock: 1, parent: 'meta', key: 'zz', content: 'any' }]), ''],
      ['a deleted write of a key that still displaces its value (author)', encode([{ client: fresh, clock: 0, origin: end(cellKey('author')), content: 'any', value: 'evil' }], [[fresh, 0, 1]]), 'deleted map write'],
      ['deleted content written over a required key (id)', encode([{ client: fresh, clock: 0, origin: end(cellKey('id')), content: 'deleted' }]), 'deleted map write'],
      ['a kernel typing, with the first character deleted by its own update', encode([{ client: fresh, clock: 0, origin: end(textItem), content: 'string', value: 'XYZ' }], [[fresh, 0, 1]]), 'part of a new item'],
      ['typing whose last character the update deletes', encode([{ client: fresh, clock: 0, origin: end(textItem), content: 'string', value: 'XYZ' }], [[fresh, 2, 1]]), 'part of a new item'],
      ['one client in two sections (Yjs keeps the last only)', encodeSections([{ client: fresh, clock: 0, specs: [{ client: fresh, clock: 0, origin: end(textItem), content: 'string', value: 'a' }] }, { client: fresh, clock: 1, specs: [{ client: fresh, clock: 1, origin: Y.createID(fresh, 0), content: 'string', value: 'b' }] }]), 'several sections'],
      ['an empty section after a client’s structs', encodeSections([{ client: fresh, clock: 0, specs: [{ client: fresh, clock: 0, origin: end(textItem), content: 'string', value: 'a' }] }, { client: fresh, clock: 1, specs: [] }], [[fresh, 0, 1]]), 'several sections'],
      ['a person removing a cell’s author', encode([], [[cellItem.id.client, cellKey('author').id.clock, 1]]), 'schema'],
    ];
    // Yjs turns these into garbage (no parent): accepted, and nothing visible changes.
    const garbage: Array<[string, Uint8Array, string]> = [
      ['a parent that is a character, not a type', encode([{ client: fresh, clock: 0, parent: textItem.id, content: 'string' }]), 'not a type'],
      ['a parent that is a deleted type (its content gone)', encode([{ client: fresh, clock: 0, parent: deletedType ? deletedType.id : textItem.id, key: 'k', content: 'any' }]), 'not a type'],
      ['a parent inside a deleted cell', encode([{ client: fresh, clock: 0, parent: goneItem.id, key: 'kind', content: 'any', value: 'code' }]), ''],
      ['a garbage-collected neighbour', encode([{ client: fresh, clock: 0, origin: gc ? Y.createID(1, gc.id.clock) : Y.createID(99, 0), content: 'string' }]), ''],
      ['a neighbour that is garbage of the same update', encode([{ client: fresh, clock: 0, parent: textItem.id, content: 'string' }, { client: fresh, clock: 1, origin: Y.createID(fresh, 0), content: 'string' }]), ''],
    ];
    for (const [what, u] of garbage) {
      it(`accepts as garbage, as Yjs integrates it: ${what}`, () => {
        expect(fastVerdict(live, u, 'person')).toEqual({ ok: true });
        const slow = slowVerdict(live, u, 'person');
        expect(slow.ok).toBe(true);
        expect(S.checkDocument(slow.after!)).toEqual([]);
        expect(canonicalJson(docView(slow.after!))).toBe(canonicalJson(docView(live)));
        expect(Y.getState(slow.after!.store, fresh)).toBeGreaterThan(0);
      });
    }
    for (const [what, u, reason] of hostile) {
      it(`leaves to the slow check: ${what}`, () => {
        const before = Y.encodeStateAsUpdate(live);
        const v = fastVerdict(live, u, 'person');
        expect(v.ok).toBe(false);
        if (!v.ok && reason) expect(v.reason).toContain(reason);
        expect(Buffer.from(Y.encodeStateAsUpdate(live)).equals(Buffer.from(before))).toBe(true); // the check changes nothing
      });
    }
  });
});
