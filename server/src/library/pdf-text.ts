/**
 * The text of an uploaded PDF, extracted once at upload on a worker thread (pdf-worker.mjs) with
 * a memory cap and a time limit, so neither a big nor a hostile file can stall or exhaust the server.
 *
 * Library: `unpdf` 1.7.0 (MIT, no dependencies), which packages Mozilla's pdf.js as a "serverless"
 * build: pure JavaScript, no worker script to locate, no canvas, no font or CMap downloads, so it
 * runs offline from a fresh clone on Node 20. pdf.js is the maintained reference PDF reader (it is
 * Firefox's). 1.7.0 is pinned because unpdf 1.8 requires Node 22, which Plexus does not (yet).
 * Alternatives: `pdfjs-dist` (Apache-2.0, the same engine) needs its legacy build and a worker
 * path set up under Node and pulls in an optional native canvas; `pdf-parse` wraps the same
 * engine with more code around it.
 * Effects: a worker thread.
 */
import { Worker } from 'node:worker_threads';
import { LibraryError } from './formats.ts';
import { PAGE_BREAK } from './passages.ts';

export interface PdfLimits {
  timeoutMs: number;
  memoryMb: number;
}

export const DEFAULT_PDF_LIMITS: PdfLimits = { timeoutMs: 60_000, memoryMb: 512 };

/** The extraction running now and those waiting (one at a time). */
let queue: Promise<unknown> = Promise.resolve();

/** Tidies a page's text: no trailing spaces, at most one blank line, no form feeds of its own. */
function tidyPage(page: string): string {
  return page
    .replace(/\r\n?/g, '\n')
    .replace(new RegExp(PAGE_BREAK, 'g'), '\n')
    .replace(/[ \t\u00a0]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * The text of each page of `bytes`. Throws LibraryError 400 for a file pdf.js cannot read
 * (malformed, encrypted) or one without extractable text (a scan).
 */
export function extractPdfPages(fileName: string, bytes: Uint8Array, limits: PdfLimits = DEFAULT_PDF_LIMITS): Promise<string[]> {
  // One PDF at a time: each reader may take a core and `memoryMb`.
  const run = queue.then(() => extract(fileName, bytes, limits));
  queue = run.catch(() => {});
  return run;
}

async function extract(fileName: string, bytes: Uint8Array, limits: PdfLimits): Promise<string[]> {
  const copy = new Uint8Array(bytes); // the worker gets its own copy (transferred, not cloned)
  const result = await new Promise<{ pages?: string[]; error?: string; message?: string }>((resolve, reject) => {
    const worker = new Worker(new URL('./pdf-worker.mjs', import.meta.url), {
      workerData: { bytes: copy },
      transferList: [copy.buffer],
      resourceLimits: { maxOldGenerationSizeMb: limits.memoryMb },
      stdout: true,
      stderr: true,
    });
    // pdf.js prints nothing at verbosity 0; whatever it might is dropped, not buffered.
    worker.stdout.resume();
    worker.stderr.resume();
    let settled = false;
    const finish = (f: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      f();
      void worker.terminate();
    };
    const timer = setTimeout(
      () => finish(() => reject(new LibraryError(400, 'bad-pdf', `"${fileName}": reading the PDF took longer than ${Math.round(limits.timeoutMs / 1000)} s`))),
      limits.timeoutMs,
    );
    worker.on('message', (m) => finish(() => resolve(m as { pages?: string[] })));
    worker.on('error', (e) => finish(() => reject(new LibraryError(400, 'bad-pdf', `"${fileName}" could not be read as a PDF: ${/memory/i.test(e.message) ? 'it needs too much memory' : e.message}`))));
    worker.on('exit', (code) => finish(() => reject(new LibraryError(400, 'bad-pdf', `"${fileName}" could not be read as a PDF (the reader stopped, code ${code})`))));
  });
  if (!result.pages) {
    const why = result.error === 'PasswordException' ? 'it is encrypted (password protected)'
      : result.error === 'InvalidPDFException' ? 'its structure is invalid (a damaged or truncated file?)'
      : result.message ?? 'unknown error';
    throw new LibraryError(400, 'bad-pdf', `"${fileName}" could not be read as a PDF: ${why}`);
  }
  const pages = result.pages.map(tidyPage);
  if (!pages.some((p) => /\p{L}|\p{N}/u.test(p)))
    throw new LibraryError(400, 'no-text', `"${fileName}" has no text to index (a scanned PDF? run OCR on it first)`);
  return pages;
}

/** The stored form of a PDF's text: pages separated by PAGE_BREAK. */
export const joinPages = (pages: string[]): string => pages.join(PAGE_BREAK);
