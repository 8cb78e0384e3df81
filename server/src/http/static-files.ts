/**
 * Serves the built client (client/dist) with an SPA fallback to index.html. Hashed assets are
 * cached for a year; index.html never. A file the build also wrote compressed (`.br`, `.gz`:
 * client/scripts/precompress.mjs) is sent in the smallest form the browser accepts
 * (`Accept-Encoding`; `Vary` says so to caches); nothing is compressed per request. Effects: file reads.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CODINGS, COMPRESSIBLE_TYPES, acceptedEncodings } from './content-coding.ts';

/** The compressed copies the build writes, in the order codings are preferred. */
const COPY_EXT: Record<(typeof CODINGS)[number], string> = { br: '.br', gzip: '.gz' };

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png',
  '.ico': 'image/x-icon', '.wasm': 'application/wasm', '.woff2': 'font/woff2', '.map': 'application/json', '.txt': 'text/plain; charset=utf-8',
};

/** Returns a handler, or null when the client has not been built. */
export function staticFiles(dir: string): ((req: IncomingMessage, res: ServerResponse) => void) | null {
  const index = path.join(dir, 'index.html');
  if (!fs.existsSync(index)) return null;
  const root = path.resolve(dir);
  return (req, res) => {
    let pathname: string;
    try {
      pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    } catch {
      res.writeHead(400).end('bad path');
      return;
    }
    let file = path.resolve(root, '.' + pathname);
    if (!file.startsWith(root + path.sep) && file !== root) {
      res.writeHead(403).end('forbidden');
      return;
    }
    let stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat || stat.isDirectory()) {
      if (path.extname(pathname)) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      file = index; // client-side route
      stat = fs.statSync(file);
    }
    const hashed = file.includes(`${path.sep}assets${path.sep}`);
    const type = TYPES[path.extname(file)] ?? 'application/octet-stream';
    const accepted = acceptedEncodings(req.headers['accept-encoding']);
    let body = file;
    let encoding: string | null = null;
    for (const enc of CODINGS) {
      if (!accepted.has(enc)) continue;
      const ext = COPY_EXT[enc];
      const s = fs.statSync(file + ext, { throwIfNoEntry: false });
      if (s?.isFile()) {
        [body, encoding, stat] = [file + ext, enc, s];
        break;
      }
    }
    res.writeHead(200, {
      'content-type': type,
      'content-length': stat.size,
      'cache-control': hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
      ...(encoding ? { 'content-encoding': encoding } : {}),
      ...(COMPRESSIBLE_TYPES.test(type) ? { vary: 'accept-encoding' } : {}),
    });
    if (req.method === 'HEAD') return void res.end();
    fs.createReadStream(body).pipe(res);
  };
}
