import * as Y from 'yjs';
import { fillNotebook } from './fixtures.ts';
import { listCells, readExec, readOutputs } from '@plexus/shared';
const count = (u: Uint8Array) => { const dec = Y.decodeUpdate(u); const kinds = new Map<string, number>(); for (const s of dec.structs) { const k = s.constructor.name + ((s as any).content ? ':' + (s as any).content.constructor.name : ''); kinds.set(k, (kinds.get(k) ?? 0) + 1); } return [dec.structs.length, [...kinds].map(([k, v]) => `${k}=${v}`).join(' ')]; };
const doc = new Y.Doc();
fillNotebook(doc, 10000, 20, 5);
const before = Y.encodeStateAsUpdate(doc);
doc.transact(() => { for (const c of listCells(doc)) { const e = readExec(c); if (e) c.map.set('exec', { ...e, outputs: readOutputs(c) }); } });
const after = Y.encodeStateAsUpdate(doc);
console.log('before', before.length, count(before));
console.log('after', after.length, count(after));
for (let r = 0; r < 3; r++) for (const [n, u] of [['before', before], ['after', after]] as const) { const t = performance.now(); const d = new Y.Doc(); Y.applyUpdate(d, u); console.log(n, 'apply', (performance.now() - t).toFixed(0)); }
// markdown cell content
const md = listCells(doc).find((c) => c.kind === 'markdown')!;
console.log([...md.map.keys()], md.map.toJSON ? Object.keys(md.map.toJSON()) : '');
const code = listCells(doc).find((c) => c.kind === 'code')!;
console.log([...code.map.keys()]);
