/**
 * Library files on disk, per workspace, under `<dataDir>/library/<workspace>/` (mode 0700, like
 * the rest of the data directory): `<docId>.<md|txt|pdf>` is the uploaded file as sent and
 * `<docId>.text` its text (a PDF's extracted once at upload, pages separated by form feeds), which
 * is what the index and the text route read. `builtins.json` lists the shipped notes ever
 * registered in the workspace, so one people removed is not brought back at the next load.
 * Files are written to a temporary name and renamed, so a crash leaves no half file.
 * Effects: files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { isWorkspaceId, type LibraryFormat } from '@plexus/shared';

/** Ids of uploaded documents (and of built-ins): safe as file names. */
export const DOC_ID = /^[A-Za-z0-9_-]{1,80}$/;

export class LibraryStorage {
  readonly root: string;

  constructor(dataDir: string) {
    this.root = path.join(dataDir, 'library');
  }

  /** The workspace's folder (created on demand). */
  dir(ws: string, create = false): string {
    if (!isWorkspaceId(ws)) throw new Error(`not a workspace id: ${ws}`);
    const d = path.join(this.root, ws);
    if (create) {
      fs.mkdirSync(this.root, { recursive: true, mode: 0o700 });
      fs.mkdirSync(d, { recursive: true, mode: 0o700 });
    }
    return d;
  }

  private writeAtomic(file: string, data: Uint8Array | string): void {
    const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      fs.writeFileSync(tmp, data, { mode: 0o600, flag: 'wx' });
      fs.renameSync(tmp, file);
    } catch (e) {
      fs.rmSync(tmp, { force: true });
      throw e;
    }
  }

  /** Stores an uploaded document and its text. */
  save(ws: string, docId: string, format: LibraryFormat, bytes: Uint8Array, text: string): void {
    if (!DOC_ID.test(docId)) throw new Error('bad document id');
    const d = this.dir(ws, true);
    try {
      this.writeAtomic(path.join(d, `${docId}.${format}`), bytes);
      this.writeAtomic(path.join(d, `${docId}.text`), text);
    } catch (e) {
      this.remove(ws, docId);
      throw e;
    }
  }

  /** The stored text of a document, or null when it has none here. */
  async readText(ws: string, docId: string): Promise<string | null> {
    if (!DOC_ID.test(docId)) return null;
    try {
      return await fs.promises.readFile(path.join(this.dir(ws), `${docId}.text`), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  /** Removes a document's files (nothing when there are none). */
  remove(ws: string, docId: string): void {
    if (!DOC_ID.test(docId)) return;
    const d = this.dir(ws);
    for (const ext of ['md', 'txt', 'pdf', 'text']) fs.rmSync(path.join(d, `${docId}.${ext}`), { force: true });
  }

  /** Names of the built-in notes ever registered in the workspace. */
  builtinsSeen(ws: string): Set<string> | null {
    try {
      const v = JSON.parse(fs.readFileSync(path.join(this.dir(ws), 'builtins.json'), 'utf8')) as unknown;
      return new Set(Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
    } catch {
      return null;
    }
  }

  markBuiltinsSeen(ws: string, names: Iterable<string>): void {
    this.writeAtomic(path.join(this.dir(ws, true), 'builtins.json'), JSON.stringify([...new Set(names)].sort()));
  }

  /** Copies a workspace's files to another (duplication). */
  copy(from: string, to: string): void {
    const src = this.dir(from);
    if (!fs.existsSync(src)) return;
    fs.cpSync(src, this.dir(to, true), { recursive: true, filter: (f) => !f.endsWith('.tmp') });
  }

  /** Removes a workspace's files (deletion). */
  deleteWorkspace(ws: string): void {
    fs.rmSync(this.dir(ws), { recursive: true, force: true });
  }
}
