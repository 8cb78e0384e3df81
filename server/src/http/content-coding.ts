/**
 * HTTP content codings: which ones a request accepts, and compressing a response body with the
 * best of them (Brotli, then gzip) at a fast setting, off the event loop (zlib's thread pool).
 * Pure apart from compress() (CPU on the thread pool).
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';

/** The codings Plexus sends, best first. */
export const CODINGS = ['br', 'gzip'] as const;
export type Coding = (typeof CODINGS)[number];

/** Types worth compressing (and whose responses therefore vary with `Accept-Encoding`). */
export const COMPRESSIBLE_TYPES = /^(text\/|application\/(json|wasm|octet-stream)|image\/svg)/;

/** The content codings an `Accept-Encoding` header accepts (`q=0` refuses one; `*` accepts the rest). */
export function acceptedEncodings(header: string | string[] | undefined): Set<string> {
  const out = new Set<string>();
  const refused = new Set<string>();
  let any = false;
  for (const part of (Array.isArray(header) ? header.join(',') : header ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((p) => /^\s*q\s*=\s*([\d.]+)\s*$/.exec(p)).find(Boolean);
    const ok = !q || Number(q[1]) > 0;
    if (name === '*') any = ok;
    else if (ok) out.add(name);
    else refused.add(name);
  }
  if (any) for (const enc of CODINGS) if (!refused.has(enc)) out.add(enc);
  return out;
}

/** The best coding Plexus sends that `accepted` holds, or null. */
export const bestCoding = (accepted: ReadonlySet<string>): Coding | null => CODINGS.find((c) => accepted.has(c)) ?? null;

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/**
 * `body` compressed with `coding`, fast (Brotli quality 1, gzip level 1: a 15 MiB Yjs state becomes
 * ~2.3 MiB in ~50 ms of one pool thread), for bodies made per request.
 */
export function compress(body: Uint8Array, coding: Coding): Promise<Buffer> {
  return coding === 'br'
    ? brotli(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength } })
    : gzip(body, { level: 1 });
}
