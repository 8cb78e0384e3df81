/**
 * Benchmark workspace content, written with the shared document helpers: a notebook of `cells`
 * code cells of `lines` lines each with a small `outputs` Y.Map per cell (optionally every n-th
 * cell markdown with inline formatting instead), and a generator of realistic single-keystroke
 * updates. Deterministic apart from ids.
 */
import * as Y from 'yjs';
import { mulberry32, KERNEL_ORIGIN, cellText, createCell, finishExec, getCell, insertCellText, listCells, serverOrigin, startExec, userOrigin, type Origin } from '@plexus/shared';

/** Small deterministic PRNG (mulberry32). */
export const rng = mulberry32;

function codeLines(i: number, lines: number): string {
  const out: string[] = [];
  for (let l = 0; l < lines; l++) out.push(l % 5 === 4 ? `}` : `  const v${l} = rows.filter((r) => r.t > ${(i + l) % 97});`);
  return out.join('\n');
}

function markdownLines(i: number, lines: number): string {
  const out = [`## Section ${i}`];
  for (let l = 1; l < lines; l++) out.push(l % 4 === 0 ? `- item ${l}: **bold** and \`code\`` : `Line ${l} of cell ${i} describes the *analysis* step.`);
  return out.join('\n');
}

/**
 * Fills a workspace document with a notebook (use as `workspaces.create({ fill })`). With
 * `markdownEvery` = n, every n-th cell is a markdown cell (headings, lists, italics) instead. Each
 * code cell's run is started and finished as the kernel does it (settled into one value when it
 * ends; `settleRuns: false`: left as a map, as before, for bench/doc-at-rest.ts).
 */
export function fillNotebook(doc: Y.Doc, cells = 1000, lines = 20, markdownEvery = 0, opts: { settleRuns?: boolean } = {}): void {
  const origin = serverOrigin('bench-fill');
  for (let i = 0; i < cells; i++) {
    const markdown = markdownEvery > 0 && i % markdownEvery === 0;
    const id = createCell(doc, { kind: markdown ? 'markdown' : 'code', author: 'bench', source: markdown ? markdownLines(i, lines) : codeLines(i, lines) }, origin);
    if (markdown) continue;
    // A small output per code cell, as the kernel writes it (the run protocol's `exec` record).
    const cell = getCell(doc, id)!;
    const run = startExec(doc, cell, { runId: `k_${i}`, requestId: null, trigger: 'run-all', requestedBy: null, count: i, generation: 1, startedAt: 0, sourceHash: '', source: '', defines: [] }, KERNEL_ORIGIN);
    finishExec(run, { state: 'done', outputs: [{ type: 'text', text: `Out[${i}]: Array(${(i * 37) % 500}) [${i}, ${i + 1}, ${i + 2}, …]` }] }, KERNEL_ORIGIN, { settle: opts.settleRuns });
  }
}

/**
 * Appends `n` cells that read nothing and define names no other fixture uses (`o<i>_<line>`): code
 * cells of 20 lines, every fifth markdown — a long notebook around the cells a benchmark runs.
 * Returns their ids.
 */
export function unrelatedCells(doc: Y.Doc, n: number, origin: Origin): string[] {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const markdown = i % 5 === 0;
    const lines = Array.from({ length: 20 }, (_, l) => (markdown ? `Note ${i}, line ${l}: *some* text.` : `const o${i}_${l} = ${l} * ${i};`));
    ids.push(createCell(doc, { kind: markdown ? 'markdown' : 'code', source: lines.join('\n'), author: 'bench' }, origin));
  }
  return ids;
}

/**
 * Replays `count` keystrokes on a copy of `state` and returns one Yjs update per keystroke (what a
 * client sends while typing): bursts of ~200 keystrokes at a random place of a random code cell,
 * about 8% of them backspaces.
 */
export function keystrokeUpdates(state: Uint8Array, count: number, seed = 42, clientID?: number): Uint8Array[] {
  const doc = new Y.Doc();
  if (clientID !== undefined) doc.clientID = clientID;
  Y.applyUpdate(doc, state);
  const code = listCells(doc).filter((c) => c.kind === 'code');
  const updates: Uint8Array[] = [];
  doc.on('update', (u: Uint8Array) => updates.push(u));
  const rand = rng(seed);
  const origin = userOrigin('bench-typist', 'Typist');
  const alphabet = 'abcdefghijklmnopqrstuvwxyz (){};=.+-*/0123456789\n';
  let cell = code[0]!;
  let pos = 0;
  for (let k = 0; k < count; k++) {
    if (k % 200 === 0) {
      cell = code[Math.floor(rand() * code.length)]!;
      pos = Math.floor(rand() * (cellText(cell)!.length + 1));
    }
    if (pos > 0 && rand() < 0.08) {
      const t = cellText(cell)!;
      doc.transact(() => t.delete(pos - 1, 1), origin);
      pos--;
    } else {
      insertCellText(doc, cell.id, pos, alphabet[Math.floor(rand() * alphabet.length)]!, origin);
      pos++;
    }
  }
  doc.destroy();
  return updates;
}
