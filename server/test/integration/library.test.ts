/**
 * The method library on a real server: the shipped notes in new and older workspaces (once: a
 * removed one stays removed), uploads of markdown, text and a real PDF (made here with pdf-lib),
 * listing, text, search, removal, markdown cells tagged as notes, duplication and deletion, and
 * refusals (wrong type, garbage PDF, oversize, viewers) that store nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { createCell, initWorkspace, listLibrary, serverOrigin, setCellTags, cellTags, userOrigin, NOTE_TAG } from '@plexus/shared';
import type { PlexusServer } from '../../src/app.ts';
import { api, hocuspocusClient, startTestServer, waitFor, type HpClient } from '@plexus/testkit';
import { ServerApi } from '../../../agent/src/peer/server-api.ts';
import { libraryTools } from '../../../agent/src/tools/library-tools.ts';

let s: PlexusServer;
const clients: HpClient[] = [];
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  clients.forEach((c) => c.destroy());
  await s.close();
});

const SHIPPED = ['deconvolution.md', 'dff.md', 'motion-correction.md', 'neuropil.md', 'roi-detection.md', 'statistics-pitfalls.md'];

async function newWorkspace(name = 'Library test'): Promise<string> {
  const r = await api(s.url, s.ownerToken, 'POST', '/api/workspaces', { name });
  expect(r.status).toBe(201);
  return r.json.workspace.id as string;
}

async function upload(ws: string, name: string, body: Uint8Array | string, token = s.ownerToken): Promise<{ status: number; json: any }> {
  const res = await fetch(`${s.url}/api/workspaces/${ws}/library?name=${encodeURIComponent(name)}&uploader=Ada`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
    body: typeof body === 'string' ? body : Buffer.from(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

const search = async (ws: string, q: string, token = s.ownerToken, limit = 5) =>
  api(s.url, token, 'GET', `/api/workspaces/${ws}/library/search?q=${encodeURIComponent(q)}&limit=${limit}`);
const list = async (ws: string) => (await api(s.url, s.ownerToken, 'GET', `/api/workspaces/${ws}/library`)).json;
const storedFiles = (ws: string) => {
  const dir = path.join(s.config.dataDir, 'library', ws);
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f !== 'builtins.json').sort() : [];
};

/** A real PDF of two pages with known text. */
async function makePdf(): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const lines = [
    ['Zebrafish tectum imaging protocol.', 'Larvae are embedded in low-melt agarose at six days post fertilisation.', 'The tectal periventricular layer is imaged at 15 Hz with a resonant scanner.',
      'Each fish is imaged for thirty minutes in one plane.'],
    ['Stimulus presentation.', 'Looming dots expand on a screen below the larva for two seconds.', 'Each loom is repeated twelve times with a randomised interval.',
      'The screen is a diffusive film lit by a small projector.'],
  ];
  for (const page of lines) {
    const p = pdf.addPage();
    page.forEach((l, i) => p.drawText(l, { x: 50, y: 700 - 20 * i, size: 12, font }));
  }
  return pdf.save();
}

describe('method library', () => {
  it('a new workspace starts with the shipped notes, searchable at once', async () => {
    const ws = await newWorkspace();
    const { documents, notes } = await list(ws);
    expect(documents.map((d: { name: string }) => d.name)).toEqual(SHIPPED);
    expect(notes).toEqual([]);
    for (const d of documents) expect(d).toMatchObject({ builtin: true, uploadedBy: null, format: 'md' });
    expect(documents.every((d: { passages: number }) => d.passages >= 5)).toBe(true);

    const r = await search(ws, 'neuropil subtraction coefficient');
    expect(r.status).toBe(200);
    expect(r.json.results[0]).toMatchObject({ docName: 'neuropil.md', heading: expect.stringMatching(/Subtraction/) });
    expect((await search(ws, 'phase correlation')).json.results[0].docName).toBe('motion-correction.md');

    const neuropil = documents.find((d: { name: string }) => d.name === 'neuropil.md');
    const text = await api(s.url, s.ownerToken, 'GET', `/api/workspaces/${ws}/library/${neuropil.id}`);
    expect(text.status).toBe(200);
    expect(text.json).toMatchObject({ name: 'neuropil.md', format: 'md', builtin: true });
    expect(text.json.text).toMatch(/^# Neuropil contamination/);
  });

  it('an older workspace without them gets them when it loads, once: a removed note stays removed', async () => {
    const doc = new Y.Doc();
    initWorkspace(doc, { title: 'Older' }, serverOrigin('create'));
    const ws = 'older-workspace';
    s.store.create({ id: ws, name: 'Older', state: Y.encodeStateAsUpdate(doc) });
    const c = hocuspocusClient(s.url, ws, s.ownerToken);
    clients.push(c);
    await c.synced;
    await waitFor(() => listLibrary(c.doc).length === SHIPPED.length, { message: 'the shipped notes reach the client' });

    const dff = listLibrary(c.doc).find((d) => d.name === 'dff.md')!;
    expect((await api(s.url, s.ownerToken, 'DELETE', `/api/workspaces/${ws}/library/${dff.id}`)).status).toBe(204);
    await waitFor(() => listLibrary(c.doc).length === SHIPPED.length - 1, { message: 'removal reaches the client' });
    c.destroy();
    // Unloaded and loaded again: the removed note is not brought back.
    await waitFor(() => !s.hocuspocus.documents.has(ws), { message: 'unloaded' });
    const again = await list(ws);
    expect(again.documents.map((d: { name: string }) => d.name)).toEqual(SHIPPED.filter((n) => n !== 'dff.md'));
    expect((await search(ws, 'maximin baseline')).json.results.some((h: { docName: string }) => h.docName === 'dff.md')).toBe(false);
  });

  it('uploads markdown, text and PDF: listed, readable, searchable, removable', async () => {
    const ws = await newWorkspace();
    const md = await upload(ws, 'two-photon-rig.md', '# Rig\n\n## Laser\n\nThe Chameleon laser is tuned to 920 nm for GCaMP excitation; power at the sample stays below 40 mW.\n');
    expect(md.status).toBe(201);
    expect(md.json.document).toMatchObject({ name: 'two-photon-rig.md', format: 'md', builtin: false, uploadedBy: { id: 'local-owner', name: 'Ada' }, passages: 1 });
    const txt = await upload(ws, 'husbandry.txt', 'Fish are raised at 28.5 degrees.\n\nThe light cycle is fourteen hours on, ten hours off.\n');
    expect(txt.status).toBe(201);
    expect(txt.json.document).toMatchObject({ format: 'txt' });
    const pdf = await upload(ws, 'tectum-protocol.pdf', await makePdf());
    expect(pdf.status).toBe(201);
    expect(pdf.json.document).toMatchObject({ name: 'tectum-protocol.pdf', format: 'pdf', builtin: false });

    const { documents } = await list(ws);
    expect(documents.map((d: { name: string }) => d.name)).toEqual([...SHIPPED.slice(0, 4), 'husbandry.txt', ...SHIPPED.slice(4, 5), ...SHIPPED.slice(5), 'tectum-protocol.pdf', 'two-photon-rig.md'].sort((a, b) => a.localeCompare(b)));

    // The PDF's text was extracted once and stored beside it, with its pages.
    const pdfText = await api(s.url, s.ownerToken, 'GET', `/api/workspaces/${ws}/library/${pdf.json.document.id}`);
    expect(pdfText.json.text).toContain('Larvae are embedded in low-melt agarose');
    expect(pdfText.json.text).toContain('Looming dots expand');
    expect(storedFiles(ws)).toEqual([`${md.json.document.id}.md`, `${md.json.document.id}.text`, `${txt.json.document.id}.text`, `${txt.json.document.id}.txt`, `${pdf.json.document.id}.pdf`, `${pdf.json.document.id}.text`].sort());

    const agarose = (await search(ws, 'agarose larvae embedded')).json.results;
    expect(agarose[0]).toMatchObject({ docName: 'tectum-protocol.pdf', heading: 'page 1', docId: pdf.json.document.id });
    expect((await search(ws, 'looming stimulus')).json.results[0]).toMatchObject({ docName: 'tectum-protocol.pdf', heading: 'page 2' });
    expect((await search(ws, 'laser wavelength 920 nm')).json.results[0]).toMatchObject({ docName: 'two-photon-rig.md', heading: 'Rig > Laser' });
    expect((await search(ws, 'light cycle')).json.results[0]).toMatchObject({ docName: 'husbandry.txt' });

    // Removal: gone from the list, the search and the disk.
    expect((await api(s.url, s.ownerToken, 'DELETE', `/api/workspaces/${ws}/library/${pdf.json.document.id}`)).status).toBe(204);
    expect((await search(ws, 'agarose larvae embedded')).json.results.some((h: { docName: string }) => h.docName === 'tectum-protocol.pdf')).toBe(false);
    expect((await api(s.url, s.ownerToken, 'GET', `/api/workspaces/${ws}/library/${pdf.json.document.id}`)).status).toBe(404);
    expect((await api(s.url, s.ownerToken, 'DELETE', `/api/workspaces/${ws}/library/${pdf.json.document.id}`)).status).toBe(404);
    expect(storedFiles(ws).some((f) => f.startsWith(pdf.json.document.id))).toBe(false);

    // An upload of the same name replaces the document.
    const md2 = await upload(ws, 'two-photon-rig.md', '# Rig\n\n## Laser\n\nThe laser now runs at 1040 nm for red indicators.\n');
    expect(md2.status).toBe(201);
    const rigs = (await list(ws)).documents.filter((d: { name: string }) => d.name === 'two-photon-rig.md');
    expect(rigs.map((d: { id: string }) => d.id)).toEqual([md2.json.document.id]);
    expect((await search(ws, 'laser 1040 nm')).json.results[0].docId).toBe(md2.json.document.id);
    expect((await search(ws, 'Chameleon')).json.results).toEqual([]);
    expect(storedFiles(ws).some((f) => f.startsWith(md.json.document.id))).toBe(false);
  });

  it('a markdown cell tagged as a note is searchable; untagged, it is not', async () => {
    const ws = await newWorkspace();
    const c = hocuspocusClient(s.url, ws, s.ownerToken);
    clients.push(c);
    await c.synced;
    const me = userOrigin('local-owner');
    const cell = createCell(c.doc, { kind: 'markdown', author: 'local-owner', source: '# Zebrafish husbandry\n\nLarvae are kept in E3 medium with methylene blue until imaging.' }, me);
    createCell(c.doc, { kind: 'markdown', author: 'local-owner', source: 'Methylene blue mentioned in an untagged cell.' }, me);
    await waitFor(() => c.provider.unsyncedChanges === 0, { message: 'ack' });
    expect((await search(ws, 'methylene blue')).json.results).toEqual([]);

    setCellTags(c.doc, cell, [NOTE_TAG], me);
    expect(cellTags(c.doc, cell)).toEqual(['note']);
    await waitFor(() => c.provider.unsyncedChanges === 0, { message: 'ack' });
    const hits = (await search(ws, 'methylene blue')).json.results;
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ cellId: cell, docName: 'Zebrafish husbandry', docId: `cell:${cell}` });
    expect((await list(ws)).notes).toEqual([{ cellId: cell, name: 'Zebrafish husbandry', passages: 1 }]);

    setCellTags(c.doc, cell, [], me);
    await waitFor(() => c.provider.unsyncedChanges === 0, { message: 'ack' });
    expect((await search(ws, 'methylene blue')).json.results).toEqual([]);
    c.destroy();
  });

  it('refuses what it does not take with a clear 400 and stores nothing', async () => {
    const ws = await newWorkspace();
    const before = (await list(ws)).documents.length;
    const random = new Uint8Array(4096).map((_, i) => (i * 7919 + 13) % 256);
    const cases: Array<[string, Uint8Array | string, RegExp]> = [
      ['paper.pdf', random, /not a PDF/],
      ['broken.pdf', Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from(random)]), /could not be read as a PDF/],
      ['setup.exe', 'MZ…', /the library takes markdown/],
      ['binary.txt', random, /not UTF-8|binary/],
      ['empty.md', '', /empty/],
      ['big.txt', new Uint8Array(10 * 1024 * 1024 + 1).fill(0x61), /larger than the library's 10 MiB limit/],
    ];
    for (const [name, body, message] of cases) {
      const r = await upload(ws, name, body);
      expect(r.status, name).toBe(400);
      expect(r.json.message, name).toMatch(message);
    }
    expect((await list(ws)).documents.length).toBe(before);
    expect(storedFiles(ws)).toEqual([]);
  });

  it('viewers read and search but cannot upload or remove; the agent\'s service token searches', async () => {
    const ws = await newWorkspace();
    const viewer = s.signer.sign({ ws, role: 'viewer', sub: 'link:viewer', ttlSeconds: 600 });
    const r = await upload(ws, 'notes.md', '# Notes\n\nSomething to read.', viewer);
    expect(r.status).toBe(403);
    expect(r.json.message).toMatch(/viewers cannot change the library/);
    const id = (await list(ws)).documents[0].id;
    expect((await api(s.url, viewer, 'DELETE', `/api/workspaces/${ws}/library/${id}`)).status).toBe(403);
    expect((await api(s.url, viewer, 'GET', `/api/workspaces/${ws}/library`)).status).toBe(200);
    expect((await search(ws, 'phase correlation', viewer)).json.results[0].docName).toBe('motion-correction.md');
    const agent = s.signer.sign({ ws: '*', role: 'service', sub: 'service:agent', ttlSeconds: 600 });
    expect((await search(ws, 'spike inference OASIS', agent)).json.results[0].docName).toBe('deconvolution.md');
    const other = s.signer.sign({ ws: 'someone-else', role: 'owner', sub: 'x', ttlSeconds: 60 });
    expect((await search(ws, 'phase correlation', other)).status).toBe(403);
    expect((await search(ws, '')).status).toBe(400);
    expect((await search(ws, 'x'.repeat(1001))).status).toBe(400);
    expect((await search(ws, 'baseline', s.ownerToken, 21)).status).toBe(400);
    expect((await list(ws)).documents.length).toBe(SHIPPED.length);
  });

  it('the agent\'s search_library tool returns passages with what to cite, through its service token', async () => {
    const ws = await newWorkspace();
    const token = s.signer.sign({ ws: '*', role: 'service', sub: 'service:agent', ttlSeconds: 600 });
    const serverApi = new ServerApi(s.url, () => token, ws);
    const text = await serverApi.libraryText('builtin-neuropil', new AbortController().signal);
    expect(text).toMatchObject({ name: 'neuropil.md', builtin: true });
    const tool = libraryTools.find((t) => t.name === 'search_library')!;
    const ctx = { api: serverApi, signal: new AbortController().signal } as never;
    const r = await tool.call(ctx, JSON.stringify({ query: 'neuropil subtraction coefficient', limit: 3 }));
    expect(r.status).toBe('done');
    const content = JSON.parse(r.content);
    expect(content.passages).toHaveLength(3);
    expect(content.passages[0]).toMatchObject({ cite: 'neuropil.md', heading: expect.stringMatching(/Subtraction/), text: expect.stringContaining('F_corrected') });
    expect(content.note).toMatch(/\(from <cite>\)/);
    expect(r.summary).toMatch(/^3 passages from neuropil\.md/);
    await expect(tool.call(ctx, JSON.stringify({ query: 'x', limit: 9 }))).rejects.toThrow(/limit/);
    const none = JSON.parse((await tool.call(ctx, JSON.stringify({ query: 'qwzxv' }))).content);
    expect(none.passages).toEqual([]);
    expect(none.note).toMatch(/no passage/);
  });

  it('a duplicate keeps the uploaded documents; deleting a workspace removes its files', async () => {
    const ws = await newWorkspace();
    const up = await upload(ws, 'calibration.md', '# Calibration\n\nThe objective is calibrated with a 10 µm bead slide every month.');
    expect(up.status).toBe(201);
    const dup = await api(s.url, s.ownerToken, 'POST', `/api/workspaces/${ws}/duplicate`, {});
    const copy = dup.json.workspace.id as string;
    expect((await search(copy, 'bead slide')).json.results[0]).toMatchObject({ docName: 'calibration.md', docId: up.json.document.id });
    expect((await api(s.url, s.ownerToken, 'DELETE', `/api/workspaces/${ws}`)).status).toBe(204);
    expect(fs.existsSync(path.join(s.config.dataDir, 'library', ws))).toBe(false);
    expect((await search(copy, 'bead slide')).json.results).toHaveLength(1);
  });
});
