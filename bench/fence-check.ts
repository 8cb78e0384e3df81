/**
 * What the server pays, per update of a service peer (the agent, a kernel process), to ask whether
 * the update brings anything new before its lease is checked (persistence.ts, the lease fence), as
 * the document's history grows: Yjs' `snapshotContainsUpdate(snapshot(doc), update)` (before:
 * building the snapshot walks every struct of the document) against `documentHasUpdate` (now:
 * only the structs the update names), side by side on the same document and updates. The document
 * is a 1,000-cell notebook (bench/fixtures.ts) in which an agent rewrites one ~400-character region
 * of a cell with its own edit engine (the smallest edit, in 4-character pieces), as
 * bench/agent-typing.ts has it do (~1 rewrite a second there), with garbage collection on, as the
 * server's documents: each rewrite leaves its deleted pieces between the characters it kept.
 * Prints µs per update (p50) and the ratio.
 * A second table: what deciding such an update costs when it arrives again, all of it known (a
 * provider's sync reply that crossed its own updates; shadow.ts): before, the pre-check left it to
 * the shadow replica, built for it from the live document (encoded, applied to a new Y.Doc) and
 * the update applied there and checked; now `ShadowValidator.check` accepts it as nothing new.
 * Run: node --import tsx bench/fence-check.ts [--rewrites=0,100,300,1000] [--cells=1000]
 * (0 rewrites is measured after one: the updates asked about are a rewrite's.)
 */
import * as Y from 'yjs';
import { cellSource, checkTransaction, createCell, getCell, initWorkspace, planTextEdit, serverOrigin, textEditSteps, userOrigin, type Writer } from '@plexus/shared';
import { ShadowValidator } from '@plexus/server/collab/shadow';
import { documentHasUpdate } from '@plexus/server/collab/update-known';
import { fillNotebook } from './fixtures.ts';
import { fmt, machine, printTable, summarize } from './lib.ts';

const arg = (name: string, def: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? def;
const REWRITES = arg('rewrites', '0,100,300,1000').split(',').map(Number);
const CELLS = Number(arg('cells', '1000'));
const origin = userOrigin('agent', 'Agent');
const versionA = Array.from({ length: 10 }, (_, i) => `const a${i} = data.map((x) => x * ${i + 1});`).join('\n');
const versionB = Array.from({ length: 10 }, (_, i) => `let b${i} = values.filter((v) => v > ${i * 3});`).join('\n');

const doc = new Y.Doc();
initWorkspace(doc, { title: 'fence' }, serverOrigin('bench'));
fillNotebook(doc, CELLS, 20);
const cellId = createCell(doc, { kind: 'code', author: 'bench', source: `// the agent's cell\n${versionA}\n` }, origin);
const text = () => getCell(doc, cellId)!.map.get('source') as Y.Text;
/** One rewrite by the agent's own edit engine: the smallest edit from one version to the other, in 4-character pieces (one transaction each). */
function rewrite(to: string): Uint8Array[] {
  const updates: Uint8Array[] = [];
  const record = (u: Uint8Array) => updates.push(u);
  doc.on('update', record);
  const current = cellSource(getCell(doc, cellId)!);
  const proposed = current.replace(to === versionA ? versionB : versionA, to);
  for (const step of textEditSteps(text(), planTextEdit(current, current, proposed).hunks, 4)) doc.transact(() => step(), origin);
  doc.off('update', record);
  return updates;
}

console.log(`# Is a service peer's update news? Per update, as the history grows (${machine()}; ${CELLS} cells)\n`);
const rows: Array<Array<string | number>> = [];
const repeats: Array<Array<string | number>> = [];
const agent: Writer = 'agent';
let done = 0;
for (const target of REWRITES) {
  let last: Uint8Array[] = [];
  while (done < target) last = rewrite(done++ % 2 === 0 ? versionB : versionA);
  if (!last.length) last = rewrite(done++ % 2 === 0 ? versionB : versionA);
  // The rewrite's own updates, asked about once applied (the answer the fence needs is "not news"
  // only for a repeat; the cost is the same either way), and a fresh 4-character piece (news).
  const piece = (() => {
    const probe = new Y.Doc();
    Y.applyUpdate(probe, Y.encodeStateAsUpdate(doc));
    const ups: Uint8Array[] = [];
    probe.on('update', (u: Uint8Array) => ups.push(u));
    (getCell(probe, cellId)!.map.get('source') as Y.Text).insert(0, 'abcd');
    return ups[0]!;
  })();
  const updates = [...last.slice(0, 40), piece];
  const before: number[] = [];
  const now: number[] = [];
  for (let round = 0; round < 5; round++) {
    for (const u of updates) {
      let t = performance.now();
      const a = Y.snapshotContainsUpdate(Y.snapshot(doc), u);
      before.push((performance.now() - t) * 1000);
      t = performance.now();
      const b = documentHasUpdate(doc, u);
      now.push((performance.now() - t) * 1000);
      if (a !== b) throw new Error('the two answers differ');
    }
  }
  // A rewrite's updates arriving again, decided as the server decides an incoming update.
  const validator = new ShadowValidator();
  validator.attach('ws', doc, () => false, true);
  const oldWay: number[] = [];
  const newWay: number[] = [];
  // (Those that insert: a repeated deletion alone is accepted by the pre-check, as it always was.)
  for (const u of last.filter((x) => Y.decodeUpdate(x).structs.length > 0).slice(0, 5)) {
    let t = performance.now();
    const shadow = new Y.Doc({ gc: doc.gc, guid: doc.guid });
    Y.applyUpdate(shadow, Y.encodeStateAsUpdate(doc));
    let violations = 0;
    shadow.on('afterTransaction', (tr: Y.Transaction) => void (violations += checkTransaction(tr, agent).length));
    Y.applyUpdate(shadow, u);
    oldWay.push(performance.now() - t);
    shadow.destroy();
    t = performance.now();
    if (validator.check('ws', u, agent)) throw new Error('a repeat was taken for news');
    newWay.push(performance.now() - t);
    if (violations) throw new Error('the repeated update broke a rule on the shadow');
  }
  if (validator.stats.known !== 5 || validator.stats.shadowsBuilt !== 0) throw new Error(`not decided as nothing new: ${JSON.stringify(validator.stats)}`);
  validator.detach('ws');
  const o = summarize(Float64Array.from(oldWay)).p50;
  const w = summarize(Float64Array.from(newWay)).p50;
  repeats.push([done, fmt(o, 1), fmt(w * 1000, 1), fmt(w / o, 5)]);
  const b = summarize(Float64Array.from(before)).p50;
  const n = summarize(Float64Array.from(now)).p50;
  const structs = [...doc.store.clients.values()].reduce((s, l) => s + l.length, 0);
  rows.push([done, structs, fmt(b, 1), fmt(n, 1), fmt(n / b, 4)]);
}
printTable(['rewrites so far', 'structs in the document', 'before: snapshot µs (p50)', 'now µs (p50)', 'now / before'], rows);
console.log('\n# A rewrite\'s update arriving again (all known), decided (p50 of 5)\n');
printTable(['rewrites so far', 'before: shadow built, applied, checked (ms)', 'now: nothing new (µs)', 'now / before'], repeats);
