/**
 * Sends one file over HTTP the way static data servers do: strong ETag and Last-Modified with
 * 304 revalidation (If-None-Match, If-Modified-Since), single byte ranges (206 / 416, If-Range),
 * HEAD, Content-Length always, and streaming (never the whole file in memory). A file stored
 * gzip-compressed is sent as is with `Content-Encoding: gzip` to clients that accept gzip (each
 * representation has its own ETag); to the others, and for any range request, it is gunzipped
 * on the fly and ranges apply to the identity bytes, whose length is the gzip trailer's ISIZE
 * (single-member gzip files under 4 GiB, as the writer makes them).
 * Effects: file reads, writes the response.
 */
import fs from 'node:fs';
import type { Stats } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';

export interface FileToSend {
  path: string;
  stat: Stats;
  /** The file holds gzip-compressed bytes of the resource. */
  gzip: boolean;
  contentType: string;
}

/** True when `Accept-Encoding` admits gzip (q > 0, by name or by `*`). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let gzip: number | null = null;
  let star: number | null = null;
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qp ? Number(qp.slice(2)) : 1;
    if (name === 'gzip' || name === 'x-gzip') gzip = Number.isFinite(q) ? q : 0;
    else if (name === '*') star = Number.isFinite(q) ? q : 0;
  }
  return (gzip ?? star ?? 0) > 0;
}

export type RangeRequest = { kind: 'none' } | { kind: 'unsatisfiable' } | { kind: 'range'; start: number; end: number };

/**
 * Parses a `Range` header against a resource of `length` bytes. Only one `bytes=` range is
 * honoured; anything else (several ranges, other units, bad syntax) is ignored: 200 with the whole.
 */
export function parseRange(header: string | undefined, length: number): RangeRequest {
  if (!header) return { kind: 'none' };
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) return { kind: 'none' };
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0 || length === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', start: Math.max(0, length - n), end: length - 1 };
  }
  const start = Number(m[1]);
  if (m[2] !== '' && Number(m[2]) < start) return { kind: 'none' }; // invalid: ignored
  if (start >= length) return { kind: 'unsatisfiable' };
  return { kind: 'range', start, end: m[2] === '' ? length - 1 : Math.min(Number(m[2]), length - 1) };
}

const etagMatches = (header: string, etag: string) => header.split(',').some((t) => t.trim() === '*' || t.trim().replace(/^W\//, '') === etag);

/** Uncompressed size from a gzip file's trailer (ISIZE, the last four bytes, little-endian). */
async function gzipIsize(file: string, size: number): Promise<number> {
  if (size < 18) throw new Error(`${file} is too short to be gzip`);
  const fh = await fs.promises.open(file, 'r');
  try {
    const b = Buffer.alloc(4);
    await fh.read(b, 0, 4, size - 4);
    return b.readUInt32LE(0);
  } finally {
    await fh.close();
  }
}

/** Passes bytes [start, end] of its input through and checks the input had `total` bytes. */
class ByteSlice extends Transform {
  private seen = 0;
  constructor(
    private readonly first: number,
    private readonly last: number,
    private readonly total: number,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    const from = this.seen;
    this.seen += chunk.length;
    const a = Math.max(this.first, from);
    const b = Math.min(this.last + 1, this.seen);
    if (b > a) this.push(chunk.subarray(a - from, b - from));
    done();
  }
  override _flush(done: TransformCallback): void {
    done(this.seen === this.total ? null : new Error(`decompressed ${this.seen} bytes, the gzip trailer said ${this.total}`));
  }
}

/**
 * Answers a GET or HEAD for `file` (other methods: the caller's business). `headers` are added to
 * every answer (cache policy, CORS).
 */
export async function sendFile(req: IncomingMessage, res: ServerResponse, file: FileToSend, headers: Record<string, string> = {}): Promise<void> {
  const { stat } = file;
  const base = `${stat.size.toString(36)}-${Math.floor(stat.mtimeMs).toString(36)}`;
  const lastModified = new Date(stat.mtimeMs).toUTCString();
  const rangeHeader = req.headers.range;
  const wantsRange = parseRange(rangeHeader, Number.MAX_SAFE_INTEGER).kind !== 'none';
  const sendGzip = file.gzip && acceptsGzip(req.headers['accept-encoding']) && !wantsRange;
  const etag = sendGzip ? `"${base}-gz"` : `"${base}"`;
  const common: Record<string, string> = {
    ...headers,
    etag,
    'last-modified': lastModified,
    'accept-ranges': 'bytes',
    ...(file.gzip ? { vary: [headers.vary, 'Accept-Encoding'].filter(Boolean).join(', ') } : {}),
  };

  const inm = req.headers['if-none-match'];
  const ims = req.headers['if-modified-since'];
  const notModified = inm !== undefined ? etagMatches(inm, etag) : ims !== undefined && Math.floor(stat.mtimeMs / 1000) * 1000 <= Date.parse(ims);
  if (notModified) {
    res.writeHead(304, common).end();
    return;
  }

  const length = file.gzip && !sendGzip ? await gzipIsize(file.path, stat.size) : stat.size;
  let range = sendGzip ? ({ kind: 'none' } as RangeRequest) : parseRange(rangeHeader, length);
  const ifRange = req.headers['if-range'] as string | undefined;
  if (range.kind !== 'none' && ifRange !== undefined && !(ifRange.startsWith('"') || ifRange.startsWith('W/') ? ifRange === etag : ifRange === lastModified)) range = { kind: 'none' };
  if (range.kind === 'unsatisfiable') {
    res.writeHead(416, { ...common, 'content-range': `bytes */${length}`, 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify({ error: 'range-not-satisfiable', message: `the range ${rangeHeader} is outside the ${length} bytes of this file` }));
    return;
  }
  const start = range.kind === 'range' ? range.start : 0;
  const end = range.kind === 'range' ? range.end : length - 1;
  res.writeHead(range.kind === 'range' ? 206 : 200, {
    ...common,
    'content-type': file.contentType,
    'content-length': String(end - start + 1),
    ...(range.kind === 'range' ? { 'content-range': `bytes ${start}-${end}/${length}` } : {}),
    ...(sendGzip ? { 'content-encoding': 'gzip' } : {}),
  });
  if (req.method === 'HEAD' || length === 0) {
    res.end();
    return;
  }
  if (!file.gzip || sendGzip) streamTo(res, fs.createReadStream(file.path, { start, end }));
  else streamTo(res, fs.createReadStream(file.path), zlib.createGunzip(), new ByteSlice(start, end, length));
}

/**
 * Pipes `source` through `transforms` into `res`; any error destroys everything (the client sees
 * a cut connection, the Content-Length being already sent), and so does the client leaving.
 * Plain `pipe` rather than `stream.pipeline`: pipeline aborts an AbortController at every finish,
 * and building that DOMException cost ~4 % of the CPU of serving small files.
 */
function streamTo(res: ServerResponse, source: Readable, ...transforms: Transform[]): void {
  const all = [source, ...transforms];
  const stop = (err?: Error) => {
    for (const s of all) s.destroy();
    if (err) res.destroy(err);
  };
  for (const s of all) s.on('error', stop);
  res.on('close', () => stop());
  let tail: Readable = source;
  for (const t of transforms) tail = tail.pipe(t);
  tail.pipe(res);
}
