/**
 * Operating a node: JSON log lines with the node id, `/api/health` (liveness) and `/api/ready` (storage reachable; 503 with the
 * failed check when it is not, 503 `draining` during a drain), `/metrics` in the Prometheus text
 * format (loopback or token; counters move when clients type, on both protocols), and a graceful
 * drain: new WebSockets are closed with 1012 server-draining, requests in flight finish, open
 * sockets get the same code, and after SIGTERM of a child server a client that kept typing
 * reconnects through a load balancer to a restarted node on the same data dir with every
 * acknowledged edit there exactly once (and, once resynced, every edit it made).
 */
import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CloseCodes, cellSource, createCell, getCell, insertCellText, listCells, mulberry32, userOrigin } from '@plexus/shared';
import type { PlexusServer } from '../../src/app.ts';
import { Readiness } from '../../src/ops/readiness.ts';
import type { OpsConfig } from '../../src/ops/ops-config.ts';
import { api, checkMarkers, hocuspocusClient, markerCells, newLedger, startChildServer, startTestServer, tmpDir, typeMarkers, waitFor, ywsClient, type ChildServer, type HpClient } from '@plexus/testkit';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});
const OPS: OpsConfig = { nodeId: 'node-test-1', drainMs: 120_000, metricsToken: null };
async function server(ops: Partial<OpsConfig> = {}): Promise<PlexusServer> {
  const s = await startTestServer({ ops: { ...OPS, ...ops } });
  cleanup.push(() => s.close());
  return s;
}
function hp(...args: Parameters<typeof hocuspocusClient>): HpClient {
  const c = hocuspocusClient(...args);
  cleanup.push(() => c.destroy());
  return c;
}
const newWorkspace = async (s: { url: string; ownerToken: string }, name: string): Promise<string> =>
  (await api(s.url, s.ownerToken, 'POST', '/api/workspaces', { name })).json.workspace.id;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Parses the Prometheus text exposition format strictly: every line is a HELP or TYPE comment or a
 * sample `name{label="value",…} number`, and every sample belongs to a family whose TYPE came first.
 */
function parsePrometheus(text: string): Sample[] {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const comment = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (comment) {
      if (comment[1] === 'TYPE') {
        expect(['counter', 'gauge', 'histogram', 'summary', 'untyped']).toContain(comment[3]);
        types.set(comment[2]!, comment[3]!);
      }
      continue;
    }
    // Values as Prometheus reads them (Go's ParseFloat: NaN and Inf in any case; prom-client writes "Nan").
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.eE+-]+|nan|[+-]?inf)$/i.exec(line);
    expect(m, `a Prometheus sample line: ${line}`).not.toBeNull();
    const labels: Record<string, string> = {};
    for (const [, k, v] of m![2]?.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g) ?? []) labels[k!] = v!;
    const name = m![1]!;
    const family = name.replace(/_(bucket|sum|count)$/, '');
    expect(types.has(name) || types.get(family) === 'histogram' || types.get(family) === 'summary', `TYPE declared for ${name}`).toBe(true);
    const raw = m![3]!.toLowerCase();
    samples.push({ name, labels, value: raw === 'nan' ? NaN : raw.endsWith('inf') ? (raw.startsWith('-') ? -Infinity : Infinity) : Number(raw) });
  }
  return samples;
}

async function scrape(url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; type: string | null }> {
  const res = await fetch(`${url}/metrics`, { headers });
  return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
}

/** The value of one series (labels must match those given; 0 when absent). */
async function metric(url: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const { status, text } = await scrape(url);
  expect(status).toBe(200);
  const s = parsePrometheus(text).find((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  return s?.value ?? 0;
}

/** Opens a raw WebSocket and resolves with how the server closed it. */
function closeOf(url: string): Promise<{ code: number; reason: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
    ws.on('error', reject);
  });
}

describe('logs', () => {
  it('every line the server writes is one JSON object carrying the node id', async () => {
    const lines: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      lines.push(String(chunk));
      return write(chunk, ...rest);
    }) as typeof process.stdout.write;
    let s: PlexusServer;
    try {
      s = await startTestServer({ logLevel: 'info', ops: { ...OPS, nodeId: 'node-logs' } });
      cleanup.push(() => s.close());
    } finally {
      process.stdout.write = write;
    }
    const entries = lines.join('').split('\n').filter((l) => l.includes('"svc":"plexus"')).map((l) => JSON.parse(l));
    expect(entries.some((e) => e.msg === 'listening')).toBe(true);
    for (const e of entries) expect(e).toMatchObject({ svc: 'plexus', node: 'node-logs', level: expect.any(String), msg: expect.any(String), t: expect.any(String) });
  });
});

describe('health and readiness', () => {
  it('health is liveness with the node id; ready checks storage and names the failed check', async () => {
    const s = await server();
    const health = await api(s.url, null, 'GET', '/api/health');
    expect(health.status).toBe(200);
    expect(health.json).toMatchObject({ ok: true, node: 'node-test-1', draining: false });
    const ready = await api(s.url, null, 'GET', '/api/ready');
    expect(ready.status).toBe(200);
    expect(ready.json).toMatchObject({ ready: true, node: 'node-test-1', draining: false, checks: { storage: { ok: true } } });
    expect(typeof ready.json.checks.storage.ms).toBe('number');

    // Storage fails (fault injection on the store, as in faults.test.ts): 503, naming the check.
    const realGet = s.store.get.bind(s.store);
    s.store.get = () => {
      throw new Error('SQLITE_IOERR: disk I/O error');
    };
    const failing = await api(s.url, null, 'GET', '/api/ready');
    s.store.get = realGet;
    expect(failing.status).toBe(503);
    expect(failing.json).toMatchObject({ ready: false, node: 'node-test-1', reason: 'check-failed', failed: ['storage'], checks: { storage: { ok: false, error: 'SQLITE_IOERR: disk I/O error' } } });
    // Liveness is not readiness: the process itself is fine.
    expect((await api(s.url, null, 'GET', '/api/health')).status).toBe(200);
    expect((await api(s.url, null, 'GET', '/api/ready')).status).toBe(200);

    // Other code adds checks (a Redis, a Postgres): one failing makes the node not ready.
    let redisUp = false;
    s.readiness.add({ name: 'redis', check: () => (redisUp ? Promise.resolve() : Promise.reject(new Error('connect ECONNREFUSED'))) });
    const noRedis = await api(s.url, null, 'GET', '/api/ready');
    expect(noRedis.status).toBe(503);
    expect(noRedis.json).toMatchObject({ failed: ['redis'], checks: { storage: { ok: true }, redis: { ok: false, error: 'connect ECONNREFUSED' } } });
    redisUp = true;
    expect((await api(s.url, null, 'GET', '/api/ready')).json).toMatchObject({ ready: true, checks: { storage: { ok: true }, redis: { ok: true } } });
  });

  it('a check that never answers fails at its time limit instead of hanging the probe', async () => {
    const r = new Readiness([{ name: 'storage', check: () => 1 }, { name: 'hangs', check: () => new Promise(() => undefined) }], 50);
    const report = await r.run();
    expect(report).toMatchObject({ ready: false, failed: ['hangs'], checks: { storage: { ok: true }, hangs: { ok: false, error: 'no answer within 50 ms' } } });
    expect(() => r.add({ name: 'storage', check: () => 1 })).toThrow(/already registered/);
  });
});

describe('/metrics', () => {
  it('Prometheus text whose counters move when clients type on either protocol; process metrics; the node label', async () => {
    const s = await server();
    const id = await newWorkspace(s, 'Metrics');
    const first = await scrape(s.url);
    expect(first.status).toBe(200);
    expect(first.type).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = parsePrometheus(first.text);
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes', 'plexus_node_info', 'plexus_storage_append_seconds_count'])
      expect(samples.some((x) => x.name === name), name).toBe(true);
    expect(samples.every((x) => x.labels.node === 'node-test-1')).toBe(true);
    expect(await metric(s.url, 'plexus_ready')).toBe(1);

    const received = () => metric(s.url, 'plexus_updates_received_total', { protocol: 'collab' });
    const [recv0, relayed0, appended0, appendCount0, bytes0] = [await received(), await metric(s.url, 'plexus_updates_relayed_total'), await metric(s.url, 'plexus_updates_appended_total'), await metric(s.url, 'plexus_storage_append_seconds_count'), await metric(s.url, 'plexus_update_bytes_appended_total')];
    const a = hp(s.url, id, s.ownerToken);
    await a.synced;
    expect(await metric(s.url, 'plexus_websockets', { protocol: 'collab' })).toBe(1);
    expect(await metric(s.url, 'plexus_connections', { protocol: 'collab', kind: 'person' })).toBe(1);
    expect(await metric(s.url, 'plexus_workspaces_loaded')).toBe(1);
    const cell = createCell(a.doc, { kind: 'code', source: '', author: 'a' }, userOrigin('a'));
    for (let i = 0; i < 10; i++) {
      insertCellText(a.doc, cell, i, String(i), userOrigin('a'));
      await waitFor(() => a.provider.unsyncedChanges === 0, { message: `keystroke ${i} acknowledged` });
    }
    expect(await received()).toBeGreaterThanOrEqual(recv0 + 11);
    expect(await metric(s.url, 'plexus_update_bytes_received_total', { protocol: 'collab' })).toBeGreaterThan(0);
    // Every update goes back to the one connected socket (Hocuspocus echoes to its sender too).
    expect(await metric(s.url, 'plexus_updates_relayed_total')).toBeGreaterThanOrEqual(relayed0 + 11);
    expect(await metric(s.url, 'plexus_updates_appended_total')).toBeGreaterThanOrEqual(appended0 + 11);
    expect(await metric(s.url, 'plexus_storage_append_seconds_count')).toBeGreaterThanOrEqual(appendCount0 + 11);
    expect(await metric(s.url, 'plexus_update_bytes_appended_total')).toBeGreaterThan(bytes0);

    // A y-websocket peer: its own protocol label.
    const y = ywsClient(s.url, id, s.ownerToken);
    cleanup.push(() => y.destroy());
    await y.synced;
    expect(await metric(s.url, 'plexus_websockets', { protocol: 'yjs' })).toBe(1);
    expect(await metric(s.url, 'plexus_connections', { protocol: 'yjs', kind: 'person' })).toBe(1);
    const yws0 = await metric(s.url, 'plexus_updates_received_total', { protocol: 'yjs' });
    createCell(y.doc, { kind: 'markdown', source: 'from y-websocket', author: 'y' }, userOrigin('y'));
    await waitFor(() => listCells(a.doc).some((c) => cellSource(c) === 'from y-websocket'), { message: 'relayed to the Hocuspocus client' });
    expect(await metric(s.url, 'plexus_updates_received_total', { protocol: 'yjs' })).toBeGreaterThan(yws0);
  });

  it('open on loopback only, unless a token is set; a request relayed by a proxy is not local', async () => {
    const open = await server();
    expect((await scrape(open.url)).status).toBe(200);
    const proxied = await scrape(open.url, { 'x-forwarded-for': '203.0.113.7' });
    expect(proxied.status).toBe(403);
    expect(JSON.parse(proxied.text).error).toBe('metrics-local-only');

    const token = 'metrics-secret-0123456789';
    const guarded = await server({ nodeId: 'node-test-2', metricsToken: token });
    expect((await scrape(guarded.url)).status).toBe(401);
    expect((await scrape(guarded.url, { authorization: 'Bearer wrong-token-0123456789' })).status).toBe(401);
    const ok = await scrape(guarded.url, { authorization: `Bearer ${token}`, 'x-forwarded-for': '203.0.113.7' });
    expect(ok.status).toBe(200);
    expect(parsePrometheus(ok.text).some((x) => x.name === 'plexus_node_info' && x.labels.node === 'node-test-2')).toBe(true);
  });
});

/** Starts a request whose body is still coming: it stays in flight until `finish()`. */
function requestInFlight(url: string, token: string, body: string): { finish: () => Promise<{ status: number; json: any }> } {
  const u = new URL(url);
  let resolve!: (r: { status: number; json: any }) => void;
  const done = new Promise<{ status: number; json: any }>((r) => (resolve = r));
  const req = http.request({ host: u.hostname, port: u.port, method: 'POST', path: '/api/workspaces', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
    let text = '';
    res.on('data', (d) => (text += d));
    res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
  });
  const half = Math.floor(body.length / 2);
  req.write(body.slice(0, half));
  return {
    finish: () => {
      req.end(body.slice(half));
      return done;
    },
  };
}

describe('graceful drain', () => {
  it('during a drain: ready 503 draining, new sockets closed with 1012, open ones keep working, requests in flight finish; then every socket gets 1012', async () => {
    const s = await server();
    let stopped = false;
    const id = await newWorkspace(s, 'Drain');
    const a = hp(s.url, id, s.ownerToken);
    const y = ywsClient(s.url, id, s.ownerToken);
    cleanup.push(() => y.destroy());
    await Promise.all([a.synced, y.synced]);
    const held = requestInFlight(s.url, s.ownerToken, JSON.stringify({ name: 'Made while draining' }));
    await waitFor(async () => (await metric(s.url, 'plexus_http_requests_in_flight')) >= 2, { message: 'the held request in flight (besides the scrape)' });

    const drained = s.drain().then(() => (stopped = true));
    const ready = await waitFor(async () => {
      const r = await api(s.url, null, 'GET', '/api/ready');
      return r.status === 503 && r.json;
    }, { message: 'ready answers 503' });
    expect(ready).toMatchObject({ ready: false, node: 'node-test-1', draining: true, reason: 'draining' });
    expect((await api(s.url, null, 'GET', '/api/health')).json).toMatchObject({ ok: true, draining: true });
    expect(await metric(s.url, 'plexus_draining')).toBe(1);
    expect(await metric(s.url, 'plexus_ready')).toBe(0);
    // New clients are sent elsewhere with a code stock clients retry on.
    const wsUrl = s.url.replace(/^http/, 'ws');
    expect(await closeOf(`${wsUrl}/collab`)).toEqual({ code: 1012, reason: 'server-draining' });
    expect(await closeOf(`${wsUrl}/yjs/${id}?token=${s.ownerToken}`)).toEqual({ code: CloseCodes.ServerDraining.code, reason: CloseCodes.ServerDraining.reason });
    // The clients already here keep editing until the drain ends.
    createCell(a.doc, { kind: 'code', source: 'typed while draining', author: 'a' }, userOrigin('a'));
    await waitFor(() => a.provider.unsyncedChanges === 0, { message: 'acknowledged while draining' });
    await waitFor(() => listCells(y.doc).some((c) => cellSource(c) === 'typed while draining'), { message: 'relayed while draining' });
    expect(stopped).toBe(false);

    // The request in flight finishes normally, then the server stops and closes every socket with 1012.
    const res = await held.finish();
    expect(res.status).toBe(201);
    expect(res.json.workspace.name).toBe('Made while draining');
    await drained;
    await waitFor(() => a.closes.some((c) => c.code === 1012 && c.reason === 'server-draining'), { message: 'the Hocuspocus client told server-draining' });
    // Before its provider retries (1 s later): destroying a provider whose socket is connecting
    // makes `ws` emit an error nobody listens to any more (testkit's QuietWebSocket explains).
    a.destroy();
    await waitFor(() => y.closes.some((c) => c.code === 1012 && c.reason === 'server-draining'), { message: 'the y-websocket client told server-draining' });
  });
});

/**
 * A stand-in for a load balancer: a TCP proxy to whichever node is current (none: connections are
 * refused, as a balancer with no healthy node would).
 */
async function balancer(): Promise<{ url: string; target: number | null; close: () => Promise<void> }> {
  const conns = new Set<net.Socket>();
  const lb = { url: '', target: null as number | null, close: async () => {
    for (const c of conns) c.destroy();
    await new Promise<void>((r) => srv.close(() => r()));
  } };
  const srv = net.createServer((client) => {
    conns.add(client);
    client.on('close', () => conns.delete(client));
    if (lb.target === null) return void client.destroy();
    const upstream = net.connect(lb.target, '127.0.0.1');
    conns.add(upstream);
    upstream.on('close', () => conns.delete(upstream));
    client.pipe(upstream).pipe(client);
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', cut);
    upstream.on('error', cut);
    client.on('close', cut);
    upstream.on('close', cut);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  lb.url = `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`;
  return lb;
}

describe('SIGTERM on a node while a client types', () => {
  it('the client gets 1012, reconnects to the restarted node and every acknowledged edit is there exactly once', async () => {
    const dataDir = tmpDir('plexus-drain-');
    const children: ChildServer[] = [];
    cleanup.push(() => Promise.all(children.map((c) => c.kill('SIGKILL'))));
    const start = async () => {
      const c = await startChildServer(dataDir, { PLEXUS_NODE_ID: `node-${children.length + 1}` });
      children.push(c);
      return c;
    };
    const lb = await balancer();
    cleanup.push(() => lb.close());
    const first = await start();
    lb.target = first.port;
    const id = await newWorkspace(first, 'Typing through a restart');
    const c = hp(lb.url, id, first.ownerToken, { reconnect: true });
    await c.synced;

    // The client types bursts of markers; a burst counts as acknowledged once its provider has
    // nothing unsynced (the server's SyncStatus), as in durability.test.ts (testkit markers.ts).
    const ledger = newLedger();
    const typing = typeMarkers([c], ledger, { round: 0, rand: mulberry32(20261203) });
    await waitFor(() => ledger.acked.size >= 30, { timeout: 60_000, message: '30 acknowledged markers' });

    expect(await first.kill('SIGTERM')).toBe(0);
    await waitFor(() => c.closes.some((x) => x.code === 1012 && x.reason === 'server-draining'), { message: 'the client told server-draining' });
    const ackedAtStop = new Set(ledger.acked);
    lb.target = null; // no node behind the balancer: the client keeps retrying
    // Edits made while no node is reachable wait in the client's document.
    const [cell] = markerCells([c]);
    for (const m of ['<away0>', '<away1>', '<away2>']) {
      ledger.sent.add(m);
      insertCellText(c.doc, cell!, cellSource(getCell(c.doc, cell!)!).length, m, userOrigin('c0'));
    }

    const second = await start();
    // What the restarted node holds, before the client is back (it could otherwise re-send what
    // the first node lost): every edit the first one acknowledged, exactly once, none twice.
    const reader = hp(second.url, id, second.ownerToken);
    await reader.synced;
    expect(checkMarkers(reader.doc, { acked: ackedAtStop, sent: ledger.sent })).toEqual([]);
    reader.destroy();

    // The balancer sends the client to the restarted node: it resyncs what it typed meanwhile.
    lb.target = second.port;
    await waitFor(() => c.provider.isSynced && ledger.acked.size > ackedAtStop.size, { timeout: 60_000, message: 'reconnected and acknowledged again' });
    await typing.stop();
    await waitFor(() => c.provider.unsyncedChanges === 0, { message: 'everything acknowledged' });
    const fresh = hp(second.url, id, second.ownerToken);
    await fresh.synced;
    // Now every marker typed, the ones typed away included, is there exactly once.
    expect(checkMarkers(fresh.doc, { acked: ledger.sent, sent: ledger.sent })).toEqual([]);
    // Gone while connected: a provider destroyed while it reconnects leaves `ws` an unheard error.
    c.destroy();
    fresh.destroy();
    expect(await second.kill('SIGTERM')).toBe(0);
  }, 600_000); // a hang guard: two child servers start, tens of seconds apiece on a stressed machine
});
