/**
 * After `vite build`: writes a Brotli (`.br`) and a gzip (`.gz`) copy next to every compressible
 * file of client/dist (scripts, styles, HTML, SVG, JSON, WebAssembly; source maps and files under
 * 1 KiB left out), once, at high settings, so the server sends the smallest form a browser
 * accepts without compressing anything per request (server/src/http/static-files.ts). The first
 * bundle goes from 1.36 MB to about 0.37 MB (Brotli): on a real network that is most of the time
 * before anything runs. Uses only Node's zlib.
 *
 *   node scripts/precompress.mjs [dist]
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const COMPRESSIBLE = new Set(['.js', '.mjs', '.css', '.html', '.svg', '.json', '.wasm', '.txt']);
const MIN_BYTES = 1024;

const dist = path.resolve(process.argv[2] ?? new URL('../dist', import.meta.url).pathname);
const files = [];
const walk = (dir) => {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (COMPRESSIBLE.has(path.extname(e.name)) && fs.statSync(p).size >= MIN_BYTES) files.push(p);
  }
};
walk(dist);

let raw = 0;
let br = 0;
const t0 = performance.now();
for (const file of files) {
  const data = fs.readFileSync(file);
  // The highest Brotli setting only for what every workspace opens with (index.html, the first
  // bundle and its CSS): 9 % smaller than quality 9 but 20× slower; the lazy chunks get quality 9.
  const quality = /^index[-.]/.test(path.basename(file)) ? 11 : 9;
  const b = zlib.brotliCompressSync(data, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: quality, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: data.length, [zlib.constants.BROTLI_PARAM_MODE]: path.extname(file) === '.wasm' ? zlib.constants.BROTLI_MODE_GENERIC : zlib.constants.BROTLI_MODE_TEXT },
  });
  const g = zlib.gzipSync(data, { level: 9 });
  // Only where it pays: a copy that is not smaller is not written (the server then sends the file).
  if (b.length < data.length) fs.writeFileSync(`${file}.br`, b);
  if (g.length < data.length) fs.writeFileSync(`${file}.gz`, g);
  raw += data.length;
  br += Math.min(b.length, data.length);
}
console.log(`precompressed ${files.length} files: ${(raw / 1e6).toFixed(2)} MB → ${(br / 1e6).toFixed(2)} MB (Brotli) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
