/**
 * Seeded random fuzzer over N in-memory replicas. Every operation goes through the shared helpers
 * (the only way the app writes), with a mix of user and agent origins. While it runs it checks the
 * local effect of each helper (placement, text, origin); at the end it settles the network and
 * collects every divergence or broken invariant as a readable problem string.
 */
import * as Y from 'yjs';
import * as S from '../src/index.ts';
import { Network, Rng, cellIds, docView, encodedView, seedWebCrypto, wrote } from './helpers.ts';

export interface FuzzResult {
  problems: string[];
  opCounts: Record<string, number>;
}

const MD_LINES = ['# Title', '## Sub **bold**', 'plain *it* and `code`', '- item', '- other', '1. first', '2. second', '> quoted', '```py', 'x = 1', '```', '---', '', 'snake_case_name'];

/** What the user asked for: the index the moved/new cell should land at among `cells`. */
function requestedIndex(cells: S.CellView[], pos: S.CellPosition): number {
  if ('index' in pos) return Math.max(0, Math.min(cells.length, pos.index));
  const anchor = 'after' in pos ? pos.after : pos.before;
  if (anchor === null) return 'after' in pos ? 0 : cells.length;
  const i = cells.findIndex((c) => c.id === anchor);
  if (i < 0) return cells.length; // anchor deleted concurrently: append
  return 'after' in pos ? i + 1 : i;
}

/** Two neighbours with the same order key (a concurrent-insert tie): no key fits strictly between them. */
const tiedAt = (cells: S.CellView[], i: number) => i > 0 && i < cells.length && cells[i - 1]!.order === cells[i]!.order;

/** What a markdown cell reads back after being set to `md` (the parser normalises some syntax). */
function normalisedMarkdown(md: string): string {
  const doc = new Y.Doc();
  const id = S.createCell(doc, { kind: 'markdown', source: md, author: 'n' }, S.serverOrigin('normalise'));
  return S.cellSource(S.getCell(doc, id)!);
}

export function runFuzz(seed: number, replicas: number, ops: number): FuzzResult {
  const rng = new Rng(seed);
  const crypto = seedWebCrypto(new Rng(seed ^ 0x5eed));
  const problems: string[] = [];
  const opCounts: Record<string, number> = {};
  const fail = (msg: string) => problems.push(`seed ${seed}/${replicas} replicas: ${msg}`);
  try {
    const net = new Network(replicas, rng);
    const docs = net.docs;
    S.initWorkspace(docs[0]!, { title: 'Fuzz', created: 0 }, S.serverOrigin('seed'));
    net.settle();

    const users = docs.map((_, i) => S.userOrigin(`u${i}`));
    const agent = S.agentOrigin('r1');
    let expectedOrigin: S.Origin | null = null;
    docs.forEach((doc, i) =>
      doc.on('afterTransaction', (tr: Y.Transaction) => {
        if (tr.local && wrote(tr) && tr.origin !== expectedOrigin) fail(`replica ${i} wrote with origin ${JSON.stringify(tr.origin)}`);
      }),
    );

    const created = new Set<string>();
    const deleted = new Set<string>();
    const posted = new Set<string>();
    const removed = new Set<string>();
    let nextId = 0;
    // Sometimes a cell/message id nobody has (or that was deleted): helpers must cope.
    const someCell = (doc: Y.Doc) =>
      (rng.bool(0.85) && created.size ? rng.pick(rng.bool(0.8) ? cellIds(doc).concat('c_none') : [...created]) : 'c_none') as S.CellId;
    const someMessage = () => (posted.size && rng.bool(0.9) ? rng.pick([...posted]) : 'm_none');
    const somePosition = (doc: Y.Doc): S.CellPosition | undefined => {
      switch (rng.int(4)) {
        case 0: return { index: rng.int(cellIds(doc).length + 3) - 1 };
        case 1: return { after: rng.bool(0.15) ? null : someCell(doc) };
        case 2: return { before: rng.bool(0.15) ? null : someCell(doc) };
        default: return undefined;
      }
    };

    const operations: Record<string, (doc: Y.Doc, o: S.Origin, who: number) => void> = {
      createCell(doc, o, who) {
        const kind = rng.pick(S.CELL_KINDS);
        const source = kind === 'markdown' ? Array.from({ length: rng.int(4) }, () => rng.pick(MD_LINES)).join('\n') : rng.string(rng.int(12));
        const position = somePosition(doc);
        const before = S.listCells(doc);
        const want = requestedIndex(before, position ?? { index: before.length });
        const id = S.createCell(doc, { kind, source, position, author: `u${who}`, id: `c_${seed}_${nextId++}` as S.CellId }, o);
        created.add(id);
        const got = cellIds(doc).indexOf(id);
        if (!tiedAt(before, want) && got !== want) fail(`createCell ${JSON.stringify(position)} landed at ${got}, wanted ${want}`);
      },
      deleteCell(doc, o) {
        const id = someCell(doc);
        if (S.deleteCell(doc, id, o)) deleted.add(id);
        if (S.getCell(doc, id)) fail(`cell ${id} still there after deleteCell`);
      },
      moveCell(doc, o) {
        const id = someCell(doc);
        const to = somePosition(doc) ?? { index: 0 };
        const selfAnchor = ('after' in to && to.after === id) || ('before' in to && to.before === id);
        const before = cellIds(doc);
        const others = S.listCells(doc).filter((c) => c.id !== id);
        const want = requestedIndex(others, to);
        if (!S.moveCell(doc, id, to, o)) return;
        const got = cellIds(doc).indexOf(id);
        if (selfAnchor && got !== before.indexOf(id)) fail(`moveCell relative to itself moved ${id} from ${before.indexOf(id)} to ${got}`);
        else if (!selfAnchor && !tiedAt(others, want) && got !== want) fail(`moveCell ${JSON.stringify(to)} landed at ${got}, wanted ${want}`);
      },
      moveCellBy(doc, o) {
        const id = someCell(doc);
        const delta = rng.bool() ? 1 : -1;
        const before = cellIds(doc);
        if (!S.moveCellBy(doc, id, delta, o)) return;
        const after = cellIds(doc);
        const swapped = [...before];
        const i = before.indexOf(id);
        [swapped[i], swapped[i + delta]] = [swapped[i + delta]!, swapped[i]!];
        if (!S.listCells(doc).some((c, k, all) => k > 0 && all[k - 1]!.order === c.order) && after.join() !== swapped.join())
          fail(`moveCellBy ${delta} did not swap neighbours: ${before} -> ${after}`);
      },
      setCellSource(doc, o) {
        const cell = S.getCell(doc, someCell(doc));
        if (!cell) return;
        const old = S.cellSource(cell);
        const at = rng.int(old.length + 1);
        const ins = cell.kind === 'markdown' ? rng.pick(MD_LINES) + (rng.bool() ? '\n' : ' ') : rng.string(rng.int(6));
        const text = old.slice(0, at) + ins + old.slice(at + rng.int(4));
        S.setCellSource(doc, cell.id, text, o);
        const want = cell.kind === 'markdown' ? normalisedMarkdown(text) : text;
        if (S.cellSource(S.getCell(doc, cell.id)!) !== want) fail(`setCellSource on ${cell.kind} did not produce its text`);
      },
      insertCellText(doc, o) {
        const cell = S.getCell(doc, someCell(doc));
        const ok = S.insertCellText(doc, cell?.id ?? 'c_none', rng.int(20), rng.string(1 + rng.int(3)), o);
        if (ok !== (cell !== undefined && cell.kind !== 'markdown')) fail(`insertCellText returned ${ok} for a ${cell?.kind} cell`);
      },
      setCellKind(doc, o) {
        const id = someCell(doc);
        const kind = rng.pick(S.CELL_KINDS);
        if (S.setCellKind(doc, id, kind, o) && S.getCell(doc, id)!.kind !== kind) fail(`setCellKind did not set ${kind}`);
      },
      setCellName(doc, o) {
        S.setCellName(doc, someCell(doc), rng.bool(0.8) ? `df${rng.int(5)}` : null, o);
      },
      postMessage(doc, o, who) {
        const id = `m_${seed}_${nextId++}` as S.MessageId;
        const agentTurn = o.kind === 'agent';
        const author = { id: agentTurn ? 'agent' : `u${who}`, name: agentTurn ? 'Agent' : `User ${who}`, kind: agentTurn ? ('agent' as const) : ('person' as const) };
        S.postMessage(doc, { id, author, text: agentTurn && rng.bool() ? '' : 'hi ' + rng.string(5), status: agentTurn ? 'streaming' : 'done' }, o);
        posted.add(id);
      },
      appendToMessage(doc, o) {
        S.appendToMessage(doc, someMessage(), rng.string(1 + rng.int(8)), o);
      },
      setMessageStatus(doc, o) {
        S.setMessageStatus(doc, someMessage(), rng.pick(['done', 'stopped', 'error', 'streaming'] as const), o);
      },
      deleteMessage(doc, o) {
        const id = someMessage();
        if (S.deleteMessage(doc, id, o)) removed.add(id);
      },
      setTitle(doc, o) {
        S.setTitle(doc, 'Title ' + rng.string(4, 'xyz'), o);
      },
    };
    const names = Object.keys(operations);
    // Cell operations are what can go wrong, so they get most of the weight.
    const weights = names.map((n) => (n.startsWith('create') ? 4 : /Cell|Source|Text/.test(n) ? 3 : 1));

    for (let step = 0; step < ops; step++) {
      const r = rng.next();
      if (r < 0.07) {
        const i = rng.int(replicas);
        if (net.online[i]) net.disconnect(i);
        else net.reconnect(i);
      } else if (r < 0.35) {
        for (let k = rng.int(4); k >= 0 && net.deliverSome(); k--);
      }
      let pickW = rng.next() * weights.reduce((a, b) => a + b, 0);
      const name = names.find((_, k) => (pickW -= weights[k]!) < 0) ?? names[0]!;
      const who = rng.int(replicas);
      const origin = rng.bool(0.7) ? users[who]! : agent;
      expectedOrigin = origin;
      operations[name]!(docs[who]!, origin, who);
      expectedOrigin = null;
      opCounts[name] = (opCounts[name] ?? 0) + 1;
    }

    net.settle();
    const views = docs.map(encodedView);
    views.forEach((v, i) => {
      if (v !== views[0]) fail(`replica ${i} diverged:\n${v}\nvs\n${views[0]}`);
      if (v !== JSON.stringify(docView(docs[i]!))) fail(`replica ${i}: live view differs from its encoded state`);
    });
    const sv0 = Y.encodeStateVector(docs[0]!).join();
    docs.forEach((d, i) => Y.encodeStateVector(d).join() !== sv0 && fail(`replica ${i} has another state vector`));

    const doc = docs[0]!;
    const ids = cellIds(doc);
    if (new Set(ids).size !== ids.length) fail(`duplicate cell ids: ${ids}`);
    const alive = [...created].filter((id) => !deleted.has(id)).sort();
    if ([...ids].sort().join() !== alive.join()) fail(`cells ${[...ids].sort()} but created-and-not-deleted ${alive}`);
    for (const c of S.listCells(doc)) {
      if (S.roots(doc).cells.get(c.id) !== c.map) fail(`cell ${c.id} is stored under another key`);
      const rich = c.map.get('source') instanceof Y.XmlFragment;
      if (rich !== (c.kind === 'markdown')) fail(`cell ${c.id} is kind ${c.kind} but its source is ${rich ? 'rich text' : 'plain text'}`);
    }
    const msgs = S.listMessages(doc).map((m) => m.id as string);
    const liveMsgs = [...posted].filter((id) => !removed.has(id)).sort();
    if ([...msgs].sort().join() !== liveMsgs.join()) fail(`messages ${msgs} but posted-and-not-deleted ${liveMsgs}`);
  } finally {
    crypto.mockRestore();
  }
  return { problems, opCounts };
}
