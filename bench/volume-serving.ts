/**
 * Volume serving: throughput of Plexus' /volumes route (token check, path checks + realpath,
 * ETag, gzip negotiation) against a plain Node static file server (bench/static-file-server.ts)
 * on the same files, with the same client: `concurrency` keep-alive connections requesting the
 * demo movie's scale-0 chunks round-robin for `seconds`, over `rounds` alternating rounds.
 * Both send the stored gzip bytes (Plexus with Content-Encoding: gzip), so the bytes on the wire
 * are identical. Also: a small file (`info`, per-request overhead) and Plexus gunzipping chunks
 * on the fly for a client that does not accept gzip. Generates the full demo dataset first and
 * reports how long that took.
 * Run: npx tsx bench/volume-serving.ts [--seconds=4] [--rounds=3] [--concurrency=8]
 * Prints figures and writes bench/results/volume-serving.json; asserts nothing.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { writeDemoDataset } from '@plexus/server/volumes/demo/demo-dataset';
import { fmt, machine, median, printTable, repoRoot, spawnServer, summarize, tmpDir, type ChildServer, type ServerKind } from './lib.ts';

const arg = (name: string, dflt: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
const SECONDS = arg('seconds', 4);
const ROUNDS = arg('rounds', 3);
const CONCURRENCY = arg('concurrency', 8);

interface Load {
  requests: number;
  bytes: number;
  seconds: number;
  latencies: number[];
  errors: number;
}

/** `concurrency` loops over `paths` (round-robin) for `seconds` on keep-alive connections. */
async function load(base: string, paths: string[], headers: Record<string, string>, seconds: number): Promise<Load> {
  const u = new URL(base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let next = 0;
  let bytes = 0;
  let errors = 0;
  const latencies: number[] = [];
  const started = performance.now();
  const end = started + seconds * 1000;
  const one = (p: string) =>
    new Promise<void>((resolve) => {
      const t = performance.now();
      const req = http.get({ host: u.hostname, port: u.port, path: p, headers, agent }, (res) => {
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => {
          if (res.statusCode !== 200) errors++;
          latencies.push(performance.now() - t);
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
    });
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) await one(paths[next++ % paths.length]!);
    }),
  );
  agent.destroy();
  return { requests: latencies.length, bytes, seconds: (performance.now() - started) / 1000, latencies, errors };
}

interface Row {
  workload: string;
  server: string;
  reqPerS: number;
  mbPerS: number;
  p50: number;
  p99: number;
  cpuPercent: number;
  errors: number;
}

async function measure(workload: string, name: string, server: ChildServer<ServerKind>, paths: string[], headers: Record<string, string>): Promise<Row> {
  const runs: Array<Load & { cpu: number }> = [];
  await load(server.url, paths, headers, 1); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    await server.probe('reset');
    const l = await load(server.url, paths, headers, SECONDS);
    runs.push({ ...l, cpu: (await server.probe('stats')).cpuPercent });
  }
  const lat = summarize(runs.flatMap((r) => r.latencies));
  return {
    workload,
    server: name,
    reqPerS: median(runs.map((r) => r.requests / r.seconds)),
    mbPerS: median(runs.map((r) => r.bytes / r.seconds / 1024 / 1024)),
    p50: lat.p50,
    p99: lat.p99,
    cpuPercent: median(runs.map((r) => r.cpu)),
    errors: runs.reduce((a, r) => a + r.errors, 0),
  };
}

const dataDir = tmpDir('plexus-bench-volumes-');
const servers: Array<ChildServer<ServerKind>> = [];
try {
  console.log(`# Volume serving (${machine()})\n`);
  const t = performance.now();
  const gen = await writeDemoDataset(path.join(dataDir, 'volumes', 'calcium-demo'));
  const genMs = performance.now() - t;
  console.log(`demo dataset generated in ${(genMs / 1000).toFixed(2)} s (256×256×900 uint16 + 2×2 scale, projections, labels, tables; ${(gen.chunkBytes / 1024 / 1024).toFixed(1)} MiB of gzip chunks)\n`);

  const key = '1000_1000_33333333';
  const chunkDir = path.join(dataDir, 'volumes/calcium-demo/movie', key);
  const names = fs.readdirSync(chunkDir).filter((n) => n.endsWith('.gz')).sort();
  const plexus = await spawnServer('plexus', { dataDir, env: { PLEXUS_SEED_DEMO: '0' } });
  servers.push(plexus);
  const plain = await spawnServer('static', { env: { STATIC_ROOT: path.join(dataDir, 'volumes') } });
  servers.push(plain);
  const bearer = { authorization: `Bearer ${plexus.token}` };
  const viaPlexus = names.map((n) => `/volumes/calcium-demo/movie/${key}/${n.replace(/\.gz$/, '')}`);
  const viaStatic = names.map((n) => `/calcium-demo/movie/${key}/${n}`);

  const rows: Row[] = [];
  // Alternate servers per workload so slow drift of the machine affects both alike.
  rows.push(await measure(`movie chunks (${names.length}, gzip)`, 'static', plain, viaStatic, {}));
  rows.push(await measure(`movie chunks (${names.length}, gzip)`, 'plexus', plexus, viaPlexus, { ...bearer, 'accept-encoding': 'gzip' }));
  rows.push(await measure('info (small file)', 'static', plain, ['/calcium-demo/movie/info'], {}));
  rows.push(await measure('info (small file)', 'plexus', plexus, ['/volumes/calcium-demo/movie/info'], { ...bearer, 'accept-encoding': 'gzip' }));
  rows.push(await measure('movie chunks, identity', 'plexus (gunzip on the fly)', plexus, viaPlexus, bearer));

  console.log(`concurrency ${CONCURRENCY}, keep-alive, ${ROUNDS} rounds × ${SECONDS} s per row (medians; latency over all rounds)\n`);
  printTable(
    ['workload', 'server', 'req/s', 'MB/s', 'p50 ms', 'p99 ms', 'server CPU %', 'errors'],
    rows.map((r) => [r.workload, r.server, fmt(r.reqPerS, 0), fmt(r.mbPerS, 1), fmt(r.p50), fmt(r.p99), fmt(r.cpuPercent, 0), r.errors]),
  );
  const ratio = (w: string) => rows.find((r) => r.workload === w && r.server === 'plexus')!.reqPerS / rows.find((r) => r.workload === w && r.server === 'static')!.reqPerS;
  console.log(`\nPlexus / static, requests per second: chunks ${fmt(ratio(rows[0]!.workload))}, info ${fmt(ratio('info (small file)'))}`);
  const out = path.join(repoRoot, 'bench/results');
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'volume-serving.json'), JSON.stringify({ machine: machine(), seconds: SECONDS, rounds: ROUNDS, concurrency: CONCURRENCY, generationMs: genMs, rows }, null, 2));
  console.log('results: bench/results/volume-serving.json');
} finally {
  for (const s of servers) await s.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
