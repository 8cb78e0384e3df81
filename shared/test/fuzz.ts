/**
 * Seeded random fuzzer over N in-memory replicas, covering every writer of the workspace: people
 * (cells, chat, viewer, settings, proposals' Accept, undo), the agent (runs, three-way edits,
 * proposals, Undo run), the kernel (the run protocol and outputs) and the server (title, tables).
 * Operations (fuzz-ops.ts) go through the shared helpers, the only way the app writes. While it
 * runs it checks each helper's local effect, that every local transaction carries its origin and
 * keeps its writer's rules of the document schema, and that the replica is schema-valid after
 * every step; at the end it settles the network (concurrent delivery, reordering, disconnects) and
 * collects every divergence or broken invariant as a readable problem string.
 */
import * as Y from 'yjs';
import * as S from '../src/index.ts';
import { Network, REMOTE, Rng, canonicalJson, cellIds, docView, encodedView, seedWebCrypto, wrote } from './helpers.ts';
import { fuzzOperations, type FuzzContext } from './fuzz-ops.ts';

export interface FuzzResult {
  problems: string[];
  opCounts: Record<string, number>;
}

/** Every local update of a replica, with the writer that made it (what a server would receive from that client). */
export type LocalUpdateHook = (update: Uint8Array, writer: S.Writer, replica: number) => void;

export function runFuzz(seed: number, replicas: number, ops: number, onLocalUpdate?: LocalUpdateHook): FuzzResult {
  const rng = new Rng(seed);
  const crypto = seedWebCrypto(new Rng(seed ^ 0x5eed));
  const problems: string[] = [];
  const opCounts: Record<string, number> = {};
  const fail = (msg: string) => problems.length < 20 && problems.push(`seed ${seed}/${replicas} replicas: ${msg}`);
  try {
    const net = new Network(replicas, rng);
    const docs = net.docs;
    // Registered before the seed, which only the server writes (so undoWriter is not read before it exists).
    if (onLocalUpdate)
      docs.forEach((doc, i) =>
        doc.on('update', (update: Uint8Array, origin: unknown) => {
          if (origin === REMOTE) return;
          const writer = S.writerOfOrigin(origin) ?? undoWriter.get(origin);
          if (writer) onLocalUpdate(update, writer, i);
        }),
      );
    S.initWorkspace(docs[0]!, { title: 'Fuzz', created: 0 }, S.serverOrigin('seed'));
    net.settle();

    const users = docs.map((_, i) => S.userOrigin(`u${i}`, `User ${i}`));
    const agents = docs.map((_, i) => S.agentOrigin(`r_fuzz_${i}`));
    const server = S.serverOrigin('fuzz');
    const personUndo = docs.map((d, i) => S.createUserUndoManager(d, users[i]!));
    const agentUndo = docs.map((d, i) => {
      const { cells } = S.roots(d);
      const v = S.viewerRoots(d);
      return new Y.UndoManager([cells, v.state, v.layers, v.views], { trackedOrigins: new Set([agents[i]]), captureTimeout: 0 });
    });
    const undoWriter = new Map<unknown, S.Writer>([...personUndo.map((u) => [u, 'person'] as const), ...agentUndo.map((u) => [u, 'agent'] as const)]);
    let expectedOrigin: unknown = null;
    docs.forEach((doc, i) =>
      doc.on('afterTransaction', (tr: Y.Transaction) => {
        if (!tr.local || !wrote(tr)) return;
        if (tr.origin !== expectedOrigin) fail(`replica ${i} wrote with origin ${JSON.stringify(tr.origin)}`);
        const writer = S.writerOfOrigin(tr.origin) ?? undoWriter.get(tr.origin);
        if (!writer) {
          fail(`replica ${i}: a transaction with no writer`);
          return;
        }
        const v = S.checkTransaction(tr, writer);
        if (v.length) fail(`replica ${i}: a ${writer}'s transaction breaks the schema: ${v.map((x) => `${x.path}: ${x.problem}`).join('; ')}`);
      }),
    );

    let nextId = 0;
    const ctx: FuzzContext = {
      rng,
      seed,
      fail,
      id: (prefix) => `${prefix}_${seed}_${nextId++}`,
      created: new Set(),
      deleted: new Set(),
      posted: new Set(),
      removed: new Set(),
      expectOrigin: (o) => (expectedOrigin = o),
      undid: false,
      personUndo: (who) => personUndo[who]!,
      agentUndo: (who) => agentUndo[who]!,
    };
    const operations = fuzzOperations(ctx);
    const originOf = (w: S.Writer, who: number): S.Origin => (w === 'person' ? users[who]! : w === 'agent' ? agents[who]! : w === 'kernel' ? S.KERNEL_ORIGIN : server);
    const total = operations.reduce((a, op) => a + op.weight, 0);

    for (let step = 0; step < ops; step++) {
      const r = rng.next();
      if (r < 0.07) {
        const i = rng.int(replicas);
        if (net.online[i]) net.disconnect(i);
        else net.reconnect(i);
      } else if (r < 0.35) {
        for (let k = rng.int(4); k >= 0 && net.deliverSome(); k--);
      }
      let pickW = rng.next() * total;
      const op = operations.find((o) => (pickW -= o.weight) < 0) ?? operations[0]!;
      const who = rng.int(replicas);
      const origin = originOf(op.writer, who);
      expectedOrigin = origin;
      op.run(docs[who]!, origin, who);
      expectedOrigin = null;
      opCounts[op.name] = (opCounts[op.name] ?? 0) + 1;
      const invalid = S.checkDocument(docs[who]!);
      if (invalid.length) fail(`after ${op.name} (step ${step}) replica ${who} breaks the schema: ${invalid.map((x) => `${x.path}: ${x.problem}`).join('; ')}`);
    }

    net.settle();
    const views = docs.map(encodedView);
    views.forEach((v, i) => {
      if (v !== views[0]) fail(`replica ${i} diverged:\n${v}\nvs\n${views[0]}`);
      if (v !== canonicalJson(docView(docs[i]!))) fail(`replica ${i}: live view differs from its encoded state`);
    });
    const sv0 = Y.encodeStateVector(docs[0]!).join();
    docs.forEach((d, i) => Y.encodeStateVector(d).join() !== sv0 && fail(`replica ${i} has another state vector`));

    docs.forEach((d, i) => {
      const invalid = S.checkDocument(d);
      if (invalid.length) fail(`settled replica ${i} breaks the schema: ${invalid.map((x) => `${x.path}: ${x.problem}`).join('; ')}`);
    });
    const { created, deleted, posted, removed } = ctx;
    const doc = docs[0]!;
    const ids = cellIds(doc);
    if (new Set(ids).size !== ids.length) fail(`duplicate cell ids: ${ids}`);
    const alive = [...created].filter((id) => !deleted.has(id)).sort();
    // Undo legitimately removes created cells and brings deleted ones back: then only "no phantom cells".
    if (ctx.undid) ids.filter((id) => !created.has(id)).forEach((id) => fail(`cell ${id} was never created`));
    else if ([...ids].sort().join() !== alive.join()) fail(`cells ${[...ids].sort()} but created-and-not-deleted ${alive}`);
    for (const c of S.listCells(doc)) {
      if (S.roots(doc).cells.get(c.id) !== c.map) fail(`cell ${c.id} is stored under another key`);
      const rich = c.map.get('source') instanceof Y.XmlFragment;
      if (rich !== (c.kind === 'markdown')) fail(`cell ${c.id} is kind ${c.kind} but its source is ${rich ? 'rich text' : 'plain text'}`);
    }
    const msgs = S.listMessages(doc).map((m) => m.id as string);
    const liveMsgs = [...posted].filter((id) => !removed.has(id)).sort();
    if (ctx.undid) msgs.filter((id) => !posted.has(id)).forEach((id) => fail(`message ${id} was never posted`));
    else if ([...msgs].sort().join() !== liveMsgs.join()) fail(`messages ${msgs} but posted-and-not-deleted ${liveMsgs}`);
  } finally {
    crypto.mockRestore();
  }
  return { problems, opCounts };
}
