/**
 * The built client is sent compressed when the build wrote compressed copies (client/scripts/
 * precompress.mjs) and the browser accepts them: Brotli first, then gzip, else as it is; over a
 * real HTTP server, reading the raw bytes (no client-side decoding).
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tmpDir } from '@plexus/testkit';
import { staticFiles } from '../../src/http/static-files.ts';
import { acceptedEncodings } from '../../src/http/content-coding.ts';

const script = Array.from({ length: 400 }, (_, i) => `export const value${i} = "plexus ${i}";`).join('\n');
let dir: string;
let server: http.Server;
let base: string;

beforeAll(async () => {
  dir = tmpDir('plexus-static-');
  fs.mkdirSync(path.join(dir, 'assets'));
  fs.writeFileSync(path.join(dir, 'index.html'), `<!doctype html><title>Plexus</title><script>${script}</script>`);
  fs.writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), script);
  fs.writeFileSync(path.join(dir, 'assets', 'index-abc123.js.map'), JSON.stringify({ mappings: script }));
  fs.writeFileSync(path.join(dir, 'assets', 'tiny-1.js'), 'export {};');
  fs.writeFileSync(path.join(dir, 'assets', 'logo-9.png'), Buffer.alloc(4096, 7));
  // The build step, as `npm run build -w client` runs it.
  execFileSync(process.execPath, [path.resolve(import.meta.dirname, '../../../client/scripts/precompress.mjs'), dir]);
  const handler = staticFiles(dir)!;
  server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** A raw GET (or HEAD): status, headers and the bytes as sent. */
function get(p: string, acceptEncoding?: string, method = 'GET'): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${p}`, { method, headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the built client, compressed', () => {
  it('the build step writes Brotli and gzip copies of what compresses (not maps, not tiny files, not images)', () => {
    const files = fs.readdirSync(path.join(dir, 'assets')).sort();
    expect(files).toEqual(['index-abc123.js', 'index-abc123.js.br', 'index-abc123.js.gz', 'index-abc123.js.map', 'logo-9.png', 'tiny-1.js']);
    expect(fs.existsSync(path.join(dir, 'index.html.br'))).toBe(true);
    expect(zlib.brotliDecompressSync(fs.readFileSync(path.join(dir, 'assets', 'index-abc123.js.br'))).toString()).toBe(script);
    expect(fs.statSync(path.join(dir, 'assets', 'index-abc123.js.br')).size).toBeLessThan(script.length / 4);
  });

  it('Brotli when accepted, else gzip, else as it is; the same content every way, and caches told it varies', async () => {
    const br = await get('/assets/index-abc123.js', 'gzip, deflate, br');
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(br.headers.vary).toBe('accept-encoding');
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(Number(br.headers['content-length'])).toBe(br.body.length);
    expect(zlib.brotliDecompressSync(br.body).toString()).toBe(script);

    const gz = await get('/assets/index-abc123.js', 'gzip');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(gz.body).toString()).toBe(script);

    for (const ae of [undefined, 'identity', 'br;q=0, gzip;q=0', 'deflate']) {
      const plain = await get('/assets/index-abc123.js', ae);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.body.toString()).toBe(script);
      expect(plain.headers.vary).toBe('accept-encoding');
    }
    expect((await get('/assets/index-abc123.js', 'br;q=0, gzip')).headers['content-encoding']).toBe('gzip');
  });

  it('files without copies go as they are; a HEAD says the size it would send; the app route gets index.html compressed', async () => {
    const tiny = await get('/assets/tiny-1.js', 'br');
    expect(tiny.headers['content-encoding']).toBeUndefined();
    expect(tiny.body.toString()).toBe('export {};');
    const png = await get('/assets/logo-9.png', 'br, gzip');
    expect(png.headers['content-encoding']).toBeUndefined();
    expect(png.headers.vary).toBeUndefined();
    expect(png.body.length).toBe(4096);
    const head = await get('/assets/index-abc123.js', 'br', 'HEAD');
    expect(head.body.length).toBe(0);
    expect(Number(head.headers['content-length'])).toBe(fs.statSync(path.join(dir, 'assets', 'index-abc123.js.br')).size);
    const page = await get('/w/some-workspace', 'br');
    expect(page.headers['content-encoding']).toBe('br');
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(zlib.brotliDecompressSync(page.body).toString()).toContain('<title>Plexus</title>');
  });

  it('reads Accept-Encoding as browsers and proxies write it', () => {
    expect([...acceptedEncodings('gzip, deflate, br, zstd')].sort()).toEqual(['br', 'deflate', 'gzip', 'zstd']);
    expect([...acceptedEncodings('br;q=0, gzip;q=0.8')]).toEqual(['gzip']);
    expect([...acceptedEncodings('*')].sort()).toEqual(['br', 'gzip']);
    expect([...acceptedEncodings('br;q=0, *')]).toEqual(['gzip']);
    expect([...acceptedEncodings('*;q=0')]).toEqual([]);
    expect([...acceptedEncodings(['gzip', 'BR'])].sort()).toEqual(['br', 'gzip']);
    expect([...acceptedEncodings(undefined)]).toEqual([]);
    expect([...acceptedEncodings(' gzip ; q = 0 ')]).toEqual([]);
  });
});
