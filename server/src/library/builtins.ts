/**
 * The method notes shipped with Plexus (`server/library/methods/*.md`, its README excepted): read
 * once from the source tree at run time (the path is resolved from this module's file, so it works
 * from a fresh clone with `npm start`, whatever the working directory), registered in every
 * workspace's library as built-in documents (`builtin: true`, `uploadedBy: null`).
 * Effects: reads files (once).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LibraryDoc } from '@plexus/shared';
import { passagesOf, type Passage } from './passages.ts';

export const METHODS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../library/methods');

export interface BuiltinNote {
  id: string;
  name: string;
  text: string;
  bytes: number;
  passages: Passage[];
}

/** Id of a shipped note: `builtin-<file name without .md>`. */
export const builtinId = (name: string): string => `builtin-${name.replace(/\.md$/i, '').replace(/[^A-Za-z0-9_-]/g, '-')}`.slice(0, 80);

let cached: BuiltinNote[] | null = null;

/** The shipped notes, by name (read on first use; none when the folder is missing). */
export function builtinNotes(dir = METHODS_DIR): BuiltinNote[] {
  if (cached && dir === METHODS_DIR) return cached;
  let files: string[] = [];
  try {
    files = fs.readdirSync(dir).filter((f) => /\.md$/i.test(f) && f.toLowerCase() !== 'readme.md').sort();
  } catch {
    files = [];
  }
  const notes = files.map((name) => {
    const buf = fs.readFileSync(path.join(dir, name));
    const text = buf.toString('utf8');
    return { id: builtinId(name), name, text, bytes: buf.length, passages: passagesOf('md', text) };
  });
  if (dir === METHODS_DIR) cached = notes;
  return notes;
}

/** The library entry of a shipped note. */
export function builtinEntry(note: BuiltinNote, created = Date.now()): LibraryDoc {
  return { id: note.id, name: note.name, format: 'md', chars: note.text.length, passages: note.passages.length, bytes: note.bytes, uploadedBy: null, builtin: true, created };
}
