/**
 * Test helpers: real Plexus servers (in-process on port 0, or as a child process that can be
 * SIGKILLed), stock Hocuspocus and y-websocket clients over real WebSockets, raw HTTP requests,
 * and polling.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http, { type IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import WebSocket from 'ws';
import { WebsocketProvider } from 'y-websocket';
import * as Y from 'yjs';
import { loadConfig, type ServerConfig } from '@plexus/server/config';
import { startServer, type PlexusServer, type ServerHooks } from '@plexus/server/app';
import { WorkspaceStore } from '@plexus/server/store/workspace-store';
import { repoRoot, tmpDir } from './dirs.ts';
import { startPostgres, type PostgresServer } from './postgres.ts';


/**
 * Starts an in-process server on a free port with a temp data dir. The kernel is off unless asked
 * for (`kernel: true`, see kernel.ts): it is a peer that writes status into every open
 * document and keeps documents loaded while idle, which suites about storage and protocol do not want.
 * `PLEXUS_TEST_DATABASE=postgres` runs it on Postgres instead of SQLite (a fresh database of one
 * cluster per test process, testkit/postgres.ts) — for suites that do not read SQLite directly.
 */
export async function startTestServer(overrides: Partial<ServerConfig> = {}, hooks: ServerHooks = {}): Promise<PlexusServer> {
  const databaseUrl = process.env.PLEXUS_TEST_DATABASE === 'postgres' && overrides.databaseUrl === undefined ? await (await testPostgres()).createDatabase() : undefined;
  const config = loadConfig({ PLEXUS_LOG_LEVEL: process.env.PLEXUS_TEST_LOG ?? 'silent' } as NodeJS.ProcessEnv, {
    port: 0,
    host: '127.0.0.1',
    dataDir: tmpDir(),
    seedDemo: false,
    clientDir: path.join(tmpDir(), 'no-client'),
    kernel: false,
    ...(databaseUrl ? { databaseUrl } : {}),
    ...overrides,
  });
  return startServer(config, hooks);
}

let postgres: Promise<PostgresServer> | null = null;
/** The Postgres cluster of this test process (started on first use, stopped when the process exits). */
const testPostgres = () => (postgres ??= startPostgres({ fsync: false }));

/** The server's store as the SQLite store it is by default (throws for another storage: tests that reach into SQLite). */
export function sqliteStore(server: PlexusServer): WorkspaceStore {
  if (!(server.store instanceof WorkspaceStore)) throw new Error(`this test reads the SQLite store directly; the server stores in ${server.store.kind}`);
  return server.store;
}

/** A fresh Y.Doc holding what the server has stored for workspace `id` (snapshot + log), read synchronously from the SQLite store. */
export function storedDoc(server: PlexusServer, id: string): Y.Doc {
  return docOf(sqliteStore(server).load(id).update);
}

/** A fresh Y.Doc holding what the server has stored for workspace `id`, from any storage. */
export async function storedDocAsync(server: PlexusServer, id: string): Promise<Y.Doc> {
  return docOf((await server.store.load(id)).update);
}

function docOf(update: Uint8Array | null): Y.Doc {
  const doc = new Y.Doc();
  if (update) Y.applyUpdate(doc, update);
  return doc;
}

/** Calls the HTTP API. */
export async function api(base: string, token: string | null, method: string, p: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(base + p, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  json(): any;
}

/**
 * An HTTP request with the path sent exactly as given (no normalisation of `..`, no percent
 * decoding) and the body as received (no automatic decompression) — unlike fetch.
 */
export function rawRequest(base: string, rawPath: string, opts: { method?: string; headers?: Record<string, string> } = {}): Promise<RawResponse> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method: opts.method ?? 'GET', path: rawPath, headers: opts.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body.toString('utf8')) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

export interface HpClient {
  doc: Y.Doc;
  provider: HocuspocusProvider;
  socket: HocuspocusProviderWebsocket;
  closes: Array<{ code?: number; reason: string }>;
  authFailures: string[];
  synced: Promise<void>;
  destroy(): void;
}

/** A stock @hocuspocus/provider client (ws as its WebSocket). */
export function hocuspocusClient(baseUrl: string, name: string, token: string, opts: { epoch?: string; doc?: Y.Doc; reconnect?: boolean } = {}): HpClient {
  const doc = opts.doc ?? new Y.Doc();
  const wsUrl = baseUrl.replace(/^http/, 'ws') + '/collab' + (opts.epoch ? `?epoch=${opts.epoch}` : '');
  const socket = new HocuspocusProviderWebsocket({
    url: wsUrl,
    WebSocketPolyfill: WebSocket,
    ...(opts.reconnect ? { delay: 50, minDelay: 50, maxDelay: 200, factor: 1.5 } : { maxAttempts: 1 }),
  } as never);
  const closes: HpClient['closes'] = [];
  const authFailures: string[] = [];
  let resolveSynced!: () => void;
  const synced = new Promise<void>((r) => (resolveSynced = r));
  socket.on('close', ({ event }: { event: { code?: number; reason: string } }) => closes.push({ code: event.code, reason: String(event.reason) }));
  const provider = new HocuspocusProvider({
    websocketProvider: socket,
    name,
    document: doc,
    token,
    onSynced: () => resolveSynced(),
    onAuthenticationFailed: ({ reason }) => authFailures.push(reason),
    onClose: ({ event }) => closes.push({ code: event.code, reason: String(event.reason) }),
  });
  provider.attach();
  return {
    doc, provider, socket, closes, authFailures, synced,
    destroy() {
      provider.destroy();
      socket.destroy();
    },
  };
}

export interface YwsClient {
  doc: Y.Doc;
  provider: WebsocketProvider;
  closes: Array<{ code: number; reason: string }>;
  synced: Promise<void>;
  destroy(): void;
}

/** A stock y-websocket WebsocketProvider client with the token in the query string. */
export function ywsClient(baseUrl: string, name: string, token: string, opts: { connect?: boolean } = {}): YwsClient {
  const doc = new Y.Doc();
  const closes: YwsClient['closes'] = [];
  const provider = new WebsocketProvider(baseUrl.replace(/^http/, 'ws') + '/yjs', name, doc, {
    WebSocketPolyfill: WebSocket as never,
    params: { token },
    connect: opts.connect ?? true,
    maxBackoffTime: 200,
    // y-websocket also syncs same-room providers of one process over BroadcastChannel: off, so
    // every byte a test client sees came through the server.
    disableBc: true,
  });
  provider.on('connection-close', (e: { code: number; reason: string } | null) => {
    if (e) closes.push({ code: e.code, reason: e.reason });
  });
  const synced = new Promise<void>((r) => {
    if (provider.synced) r();
    provider.on('sync', (s: boolean) => s && r());
  });
  return { doc, provider, closes, synced, destroy: () => provider.destroy() };
}

export interface ChildServer {
  proc: ChildProcess;
  port: number;
  url: string;
  ownerToken: string;
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Longest a child server may take to say it is ready. */
const CHILD_START_LIMIT_MS = 180_000;

/** Starts `server/src/main.ts` as a child process (so it can be SIGKILLed) on `dataDir`. */
export async function startChildServer(dataDir: string, env: Record<string, string> = {}): Promise<ChildServer> {
  // Run node itself (tsx as an import hook), not the tsx CLI: the CLI forks a second process, so a
  // SIGKILL would hit only the wrapper and leave the real server running.
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'server/src/main.ts')], {
    cwd: repoRoot,
    env: { ...process.env, PORT: '0', PLEXUS_DATA_DIR: dataDir, PLEXUS_READY_JSON: '1', PLEXUS_LOG_LEVEL: 'warn', PLEXUS_SEED_DEMO: '0', PLEXUS_KERNEL: '0', PLEXUS_SECRET: 'test-secret-0123456789abcdef', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  const ready = await new Promise<{ port: number; url: string; ownerToken: string }>((resolve, reject) => {
    let buf = '';
    proc.stdout!.on('data', (d) => {
      buf += d;
      const line = buf.split('\n').find((l) => l.startsWith('{"ready"'));
      if (line) resolve(JSON.parse(line));
    });
    exited.then((code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
    // A hang guard, not a speed check: loading the server through tsx on a machine under
    // stress-ng took longer than 30 s in a stressed run of the suite.
    setTimeout(() => reject(new Error(`server did not start in ${CHILD_START_LIMIT_MS / 1000} s: ${stderr}`)), CHILD_START_LIMIT_MS).unref();
  });
  return {
    proc, ...ready, exited,
    kill: (signal = 'SIGKILL') => {
      proc.kill(signal);
      return exited;
    },
  };
}
