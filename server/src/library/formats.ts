/**
 * What the library accepts: markdown (.md, .markdown), plain text (.txt) and PDF (.pdf), told by
 * the file name's extension AND the bytes (a PDF starts with `%PDF-`; text is valid UTF-8 without
 * NUL bytes). Anything else is refused with a LibraryError naming the problem. Pure module.
 */
import type { LibraryFormat } from '@plexus/shared';

export class LibraryError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Largest document accepted (bytes). */
export const LIBRARY_MAX_BYTES = 10 * 1024 * 1024;
/** Longest file name kept. */
export const MAX_NAME_CHARS = 200;

const EXTENSIONS: Record<string, LibraryFormat> = { md: 'md', markdown: 'md', txt: 'txt', text: 'txt', pdf: 'pdf' };

/** The format a file name announces; throws for paths, odd names and other types. */
export function formatFromName(fileName: string): LibraryFormat {
  if (!fileName || fileName.length > MAX_NAME_CHARS) throw new LibraryError(400, 'bad-name', `the file name must be 1 to ${MAX_NAME_CHARS} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[/\\\x00-\x1f\x7f]/.test(fileName) || fileName.startsWith('.') || fileName.includes('..'))
    throw new LibraryError(400, 'bad-name', `"${fileName}" is not a plain file name (no paths, no control characters, no leading dot)`);
  const dot = fileName.lastIndexOf('.');
  const format = dot > 0 ? EXTENSIONS[fileName.slice(dot + 1).toLowerCase()] : undefined;
  if (!format) throw new LibraryError(400, 'unsupported-type', `"${fileName}": the library takes markdown (.md), plain text (.txt) and PDF (.pdf) files`);
  return format;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Checks that the bytes are what the name says. Returns the text of a markdown or text file (the
 * BOM dropped); a PDF's text is extracted later (pdf-text.ts).
 */
export function checkContent(fileName: string, format: LibraryFormat, bytes: Uint8Array): string | null {
  if (bytes.length === 0) throw new LibraryError(400, 'empty', `"${fileName}" is empty`);
  if (format === 'pdf') {
    if (Buffer.from(bytes.subarray(0, 5)).toString('latin1') !== '%PDF-') throw new LibraryError(400, 'not-a-pdf', `"${fileName}" is not a PDF (a PDF file starts with %PDF-)`);
    return null;
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new LibraryError(400, 'not-text', `"${fileName}" is not UTF-8 text: save it as UTF-8 (${format === 'md' ? 'markdown' : 'plain text'}), or upload a PDF as .pdf`);
  }
  if (text.includes('\0')) throw new LibraryError(400, 'not-text', `"${fileName}" holds binary data (NUL bytes), not ${format === 'md' ? 'markdown' : 'plain text'}`);
  if (!/\p{L}|\p{N}/u.test(text)) throw new LibraryError(400, 'no-text', `"${fileName}" has no words to index`);
  return text;
}
