/**
 * A workspace's method library on the server: uploads (checked, stored with their text, listed in
 * the document's `library` root), removal, the text of a document, and retrieval over the stored
 * documents plus the markdown cells tagged `note`. Every workspace gets the notes shipped with
 * Plexus: new ones when created (`seed`), older ones when loaded (`extension`), once — a shipped
 * note people removed stays removed (storage.ts keeps which were registered).
 *
 * The index of each workspace is built lazily on the first search and kept in step incrementally:
 * any update of the document marks it dirty; the next search reads the library list and the note
 * cells' text (cheap), and re-indexes only the sources whose version changed. Stored documents'
 * passages are read from disk once per loaded workspace; the shipped notes' once per process.
 * Effects: files, document writes (server origin), worker threads (PDF text).
 */
import type { Readable } from 'node:stream';
import type { Extension, Hocuspocus } from '@hocuspocus/server';
import type * as Y from 'yjs';
import {
  cellSource, getCell, listLibrary, noteCellName, noteCells, randomId, registerLibraryDoc, removeLibraryDoc, serverOrigin,
  type LibraryDoc, type LibraryFormat,
} from '@plexus/shared';
import type { Logger } from '../log.ts';
import { withDoc } from '../http/doc-access.ts';
import { builtinEntry, builtinNotes } from './builtins.ts';
import { LIBRARY_MAX_BYTES, LibraryError, checkContent, formatFromName } from './formats.ts';
import { passagesOf, type Passage } from './passages.ts';
import { DEFAULT_PDF_LIMITS, extractPdfPages, joinPages, type PdfLimits } from './pdf-text.ts';
import { LibrarySearchIndex, type LibraryHit, type LibrarySource } from './search-index.ts';
import { DOC_ID, LibraryStorage } from './storage.ts';

export interface LibraryOptions {
  /** The server's Hocuspocus (a function: the library's extension is one of its extensions). */
  hocuspocus: () => Hocuspocus;
  dataDir: string;
  log: Logger;
  maxBytes?: number;
  pdf?: PdfLimits;
}

/** A note cell as listed: the name citations use and how many passages it gives. */
export interface NoteCellEntry {
  cellId: string;
  name: string;
  passages: number;
}

interface WsIndex {
  doc: Y.Doc | null;
  dirty: boolean;
  off: (() => void) | null;
  index: LibrarySearchIndex;
  /** Passages of stored (uploaded) documents, by id. */
  stored: Map<string, Passage[]>;
  /** The searches of this workspace run one after the other. */
  queue: Promise<unknown>;
}

/** Reads a request body of at most `max` bytes; past that it is drained and refused. */
function readBody(body: Readable, max: number, fileName: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let ended = false;
    body.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= max) chunks.push(c);
      else chunks.length = 0;
    });
    body.once('end', () => {
      ended = true;
      if (size > max) reject(tooLarge(fileName, max));
      else resolve(Buffer.concat(chunks));
    });
    body.once('error', (e) => reject(new LibraryError(400, 'upload-interrupted', `the upload of "${fileName}" did not complete: ${e.message}`)));
    body.once('close', () => {
      if (!ended) reject(new LibraryError(400, 'upload-interrupted', `the upload of "${fileName}" did not complete`));
    });
  });
}

const tooLarge = (fileName: string, max: number) =>
  new LibraryError(400, 'too-large', `"${fileName}" is larger than the library's ${Math.round(max / 1024 / 1024)} MiB limit for one document`);

export class Library {
  readonly storage: LibraryStorage;
  readonly maxBytes: number;
  private readonly hp: () => Hocuspocus;
  private readonly log: Logger;
  private readonly pdf: PdfLimits;
  private readonly indexes = new Map<string, WsIndex>();

  constructor(opts: LibraryOptions) {
    this.hp = opts.hocuspocus;
    this.log = opts.log;
    this.storage = new LibraryStorage(opts.dataDir);
    this.maxBytes = opts.maxBytes ?? LIBRARY_MAX_BYTES;
    this.pdf = opts.pdf ?? DEFAULT_PDF_LIMITS;
  }

  /** Hocuspocus hooks: the shipped notes when a workspace loads, its index dropped when it unloads. */
  readonly extension: Extension = {
    extensionName: 'plexus-library',
    afterLoadDocument: async ({ documentName, document }) => {
      try {
        this.ensureBuiltins(documentName, document);
      } catch (e) {
        this.log.warn('could not add the shipped method notes', { ws: documentName, err: e });
      }
    },
    afterUnloadDocument: async ({ documentName }) => this.forget(documentName),
  };

  /** A new workspace's document: every shipped note (called before it is first stored). */
  seed(doc: Y.Doc): void {
    const now = Date.now();
    doc.transact(() => {
      for (const n of builtinNotes()) registerLibraryDoc(doc, builtinEntry(n, now), serverOrigin('library-builtins'));
    }, serverOrigin('library-builtins'));
  }

  /**
   * Registers the shipped notes a loaded workspace never had (idempotent), and refreshes the
   * entries of those whose text changed since.
   */
  ensureBuiltins(ws: string, doc: Y.Doc): void {
    const notes = builtinNotes();
    const seen = this.storage.builtinsSeen(ws);
    const present = new Map(listLibrary(doc).map((d) => [d.id, d]));
    const changes: LibraryDoc[] = [];
    for (const n of notes) {
      const had = present.get(n.id);
      const entry = builtinEntry(n);
      if (!had) {
        if (!seen?.has(n.name)) changes.push(entry);
      } else if (had.builtin && (had.chars !== entry.chars || had.passages !== entry.passages || had.bytes !== entry.bytes)) {
        changes.push({ ...entry, created: had.created });
      }
    }
    if (changes.length) {
      const origin = serverOrigin('library-builtins');
      doc.transact(() => changes.forEach((e) => registerLibraryDoc(doc, e, origin)), origin);
    }
    if (!seen || notes.some((n) => !seen.has(n.name))) this.storage.markBuiltinsSeen(ws, [...(seen ?? []), ...notes.map((n) => n.name)]);
  }

  /** The workspace's documents and note cells. */
  list(ws: string): Promise<{ documents: LibraryDoc[]; notes: NoteCellEntry[] }> {
    return withDoc(this.hp(), ws, (doc) => ({
      documents: listLibrary(doc),
      notes: noteCells(doc).map(({ id, index }) => {
        const cell = getCell(doc, id);
        const text = cell ? cellSource(cell) : '';
        return { cellId: id, name: noteCellName(text, index), passages: passagesOf('md', text).length };
      }),
    }));
  }

  /**
   * Checks, stores and registers an uploaded document. A document of the same name is replaced.
   * Throws LibraryError (400) for anything the library does not take; then nothing is stored.
   */
  async upload(ws: string, input: { fileName: string; body: Readable; contentLength?: number; by: { id: string; name?: string } }): Promise<LibraryDoc> {
    const { fileName } = input;
    const format = formatFromName(fileName);
    if (input.contentLength !== undefined && input.contentLength > this.maxBytes) throw tooLarge(fileName, this.maxBytes);
    const bytes = await readBody(input.body, this.maxBytes, fileName);
    // Markdown and text are checked and decoded here; a PDF's text is extracted (once, now).
    const text = checkContent(fileName, format, bytes) ?? joinPages(await extractPdfPages(fileName, bytes, this.pdf));
    const passages = passagesOf(format, text);
    if (!passages.length) throw new LibraryError(400, 'no-text', `"${fileName}" has no text to index`);
    const id = `doc-${randomId(16)}`;
    const entry: LibraryDoc = {
      id, name: fileName, format, chars: text.length, passages: passages.length, bytes: bytes.length,
      uploadedBy: input.by, builtin: false, created: Date.now(),
    };
    this.storage.save(ws, id, format, bytes, text);
    let replaced: string[];
    try {
      replaced = await withDoc(this.hp(), ws, (doc) => {
        const origin = serverOrigin('library-upload');
        const same = listLibrary(doc).filter((d) => d.name === fileName).map((d) => d.id);
        registerLibraryDoc(doc, entry, origin);
        for (const old of same) removeLibraryDoc(doc, old, origin);
        return same;
      });
    } catch (e) {
      this.storage.remove(ws, id);
      throw e;
    }
    for (const old of replaced) this.storage.remove(ws, old);
    this.indexes.get(ws)?.stored.set(id, passages);
    this.log.info('library document added', { ws, doc: id, format, bytes: bytes.length, passages: passages.length, replaced: replaced.length });
    return entry;
  }

  /** Removes a document from the library and its files. False when it was not there. */
  async remove(ws: string, docId: string): Promise<boolean> {
    const removed = await withDoc(this.hp(), ws, (doc) => removeLibraryDoc(doc, docId, serverOrigin('library-remove')));
    if (removed) this.storage.remove(ws, docId);
    return removed;
  }

  /** A document's text, or null when the library has no such document (or lost its file). */
  async text(ws: string, docId: string): Promise<{ id: string; name: string; format: LibraryFormat; builtin: boolean; text: string } | null> {
    const entry = await withDoc(this.hp(), ws, (doc) => listLibrary(doc).find((d) => d.id === docId) ?? null);
    if (!entry) return null;
    const text = entry.builtin ? (builtinNotes().find((n) => n.id === entry.id)?.text ?? null) : DOC_ID.test(docId) ? await this.storage.readText(ws, docId) : null;
    return text === null ? null : { id: entry.id, name: entry.name, format: entry.format, builtin: entry.builtin, text };
  }

  /** The best passages for `query` among the workspace's documents and note cells. */
  search(ws: string, query: string, limit: number): Promise<LibraryHit[]> {
    const st = this.state(ws);
    const run = st.queue.then(() => this.searchNow(ws, st, query, limit));
    st.queue = run.catch(() => {});
    return run;
  }

  private state(ws: string): WsIndex {
    let st = this.indexes.get(ws);
    if (!st) {
      st = { doc: null, dirty: true, off: null, index: new LibrarySearchIndex(), stored: new Map(), queue: Promise.resolve() };
      this.indexes.set(ws, st);
    }
    return st;
  }

  private async searchNow(ws: string, st: WsIndex, query: string, limit: number): Promise<LibraryHit[]> {
    // What the index is built from, read from the live document when it changed since.
    const snapshot = await withDoc(this.hp(), ws, (doc) => {
      if (st.doc !== doc) {
        st.off?.();
        const mark = () => void (st.dirty = true);
        doc.on('update', mark);
        st.off = () => doc.off('update', mark);
        st.doc = doc;
        st.dirty = true;
      }
      if (!st.dirty) return null;
      st.dirty = false;
      return {
        documents: listLibrary(doc),
        notes: noteCells(doc).map(({ id, index }) => {
          const cell = getCell(doc, id);
          return { id, index, text: cell ? cellSource(cell) : '' };
        }),
      };
    });
    if (snapshot) {
      try {
        const sources: LibrarySource[] = [];
        const builtins = new Map(builtinNotes().map((n) => [n.id, n]));
        for (const d of snapshot.documents) {
          let passages: Passage[] | undefined;
          if (d.builtin) passages = builtins.get(d.id)?.passages ?? [];
          else {
            passages = st.stored.get(d.id);
            if (!passages) {
              const text = await this.storage.readText(ws, d.id);
              if (text === null) this.log.warn('a library document has no stored text', { ws, doc: d.id });
              passages = text === null ? [] : passagesOf(d.format, text);
              st.stored.set(d.id, passages);
            }
          }
          const ps = passages;
          sources.push({ key: d.id, version: `${d.name}\n${d.created}`, docId: d.id, docName: d.name, passages: () => ps });
        }
        for (const n of snapshot.notes) {
          const name = noteCellName(n.text, n.index);
          sources.push({ key: `cell:${n.id}`, version: `${name}\n${n.text}`, docId: `cell:${n.id}`, docName: name, cellId: n.id, passages: () => passagesOf('md', n.text) });
        }
        const started = performance.now();
        const changed = st.index.sync(sources);
        if (changed.added || changed.removed) this.log.debug('library index updated', { ws, ...changed, passages: st.index.size, ms: +(performance.now() - started).toFixed(1) });
      } catch (e) {
        st.dirty = true;
        throw e;
      }
    }
    return st.index.search(query, limit);
  }

  /** Drops a workspace's index (its document unloaded). */
  forget(ws: string): void {
    const st = this.indexes.get(ws);
    st?.off?.();
    this.indexes.delete(ws);
  }

  /** Copies a workspace's library files to its duplicate. */
  copyWorkspace(from: string, to: string): void {
    this.storage.copy(from, to);
  }

  /** Removes a deleted workspace's library files. */
  deleteWorkspace(ws: string): void {
    this.forget(ws);
    this.storage.deleteWorkspace(ws);
  }
}
