/**
 * Small HTTP helpers: JSON responses, clear JSON errors, bounded JSON bodies. Every error body
 * (status ≥ 400) passes through `redactServerPaths`, the last guard against a message that names
 * a file of the server (the data directory, temporary files). Effects: I/O.
 */
import fs from 'node:fs';
import os from 'node:os';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Directories whose paths never leave the server, longest first, with what to say instead. */
const serverDirs: Array<[string, string]> = [];

/** Adds a directory (and its real path) whose absolute path must never appear in an error body. */
export function registerServerDir(dir: string, label: string): void {
  const variants = new Set([dir.replace(/\/+$/, '')]);
  try {
    variants.add(fs.realpathSync(dir));
  } catch {
    // not created yet: its given path is enough
  }
  for (const v of variants) if (v.length > 1 && !serverDirs.some(([d]) => d === v)) serverDirs.push([v, label]);
  serverDirs.sort((a, b) => b[0].length - a[0].length);
}
registerServerDir(os.tmpdir(), '<temp dir>');
registerServerDir(process.cwd(), '<server dir>');
registerServerDir(os.homedir(), '<home dir>');

/**
 * An absolute path starting a word: `/` and a name, after the start, a space, a quote, a bracket,
 * `=`, `:` or `,`. Our own URL paths (`/api/…`, `/volumes/…`, `/collab`, `/yjs/…`) are not files.
 */
const ABSOLUTE_PATH = /(^|[\s"'`(=:,[{])\/(?!(?:api|volumes|yjs)\/|collab\b)[A-Za-z0-9._~-][^\s"'`)\]},;]*/g;

const dirPatterns = new Map<string, RegExp>();
/** `dir` where the next character cannot continue its last name (end, `/`, a quote, a space...). */
function dirPattern(dir: string): RegExp {
  let re = dirPatterns.get(dir);
  if (!re) dirPatterns.set(dir, (re = new RegExp(`${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9._~-])`, 'g')));
  return re;
}

/** The text with every server directory and any other absolute path replaced by a label. */
export function redactServerPaths(text: string): string {
  let out = text;
  // A directory only as a whole path segment: `/tmp/x` is not in `/tmp/x.duckdb`.
  for (const [dir, label] of serverDirs) if (out.includes(dir)) out = out.replace(dirPattern(dir), label);
  return out.replace(ABSOLUTE_PATH, (_m, lead: string) => `${lead}<server path>`);
}

function redactDeep(v: unknown): unknown {
  if (typeof v === 'string') return redactServerPaths(v);
  if (Array.isArray(v)) return v.map(redactDeep);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, redactDeep(x)]));
  return v;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const data = JSON.stringify(status >= 400 ? redactDeep(body) : body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(data) });
  res.end(data);
}

export function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, { error: code, message });
}

/** Reads a JSON body of at most `limit` bytes (empty body = {}). */
export async function readJson(req: IncomingMessage, limit = 1024 * 1024): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HttpError(413, 'too-large', `request body exceeds ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return {};
  try {
    const v = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
    return v as Record<string, unknown>;
  } catch {
    throw new HttpError(400, 'bad-json', 'request body must be a JSON object');
  }
}
