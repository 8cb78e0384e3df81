/**
 * A plain Node static file server: `http.createServer` + `fs.createReadStream`, no auth, no
 * ranges, no conditional requests, no compression negotiation — the baseline the /volumes route
 * is compared against (bench/volume-serving.ts). Serves the directory STATIC_ROOT on 127.0.0.1 and
 * a free port; prints `{"ready":true,"port":…,"url":…}` when it listens.
 * Run: STATIC_ROOT=dir npx tsx bench/static-file-server.ts
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const root = path.resolve(process.env.STATIC_ROOT ?? '.');
const server = http.createServer((req, res) => {
  const file = path.join(root, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
  fs.stat(file, (err, st) => {
    if (err || !st.isFile() || !file.startsWith(root + path.sep)) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': st.size });
    fs.createReadStream(file).pipe(res);
  });
});
server.listen(0, '127.0.0.1', () => {
  const port = (server.address() as { port: number }).port;
  process.stdout.write(JSON.stringify({ ready: true, port, url: `http://127.0.0.1:${port}` }) + '\n');
});
