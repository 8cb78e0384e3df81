/**
 * Assembles the Plexus server: one HTTP server on one port carrying the API, the volumes
 * (/volumes, Neuroglancer precomputed), the built client, the Hocuspocus endpoint (/collab) and the
 * plain y-websocket endpoint (/yjs/<id>).
 * Effects: network, files, timers.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import path from 'node:path';
import fs from 'node:fs';
import { Hocuspocus } from '@hocuspocus/server';
import { WebSocketServer, type WebSocket } from 'ws';
import * as Y from 'yjs';
import { randomUUID } from 'node:crypto';
import { CloseCodes, HOCUSPOCUS_PATH, YWS_PATH_PREFIX, type TokenClaims } from '@plexus/shared';
import type { ServerConfig } from './config.ts';
import { createLogger, type Logger } from './log.ts';
import { TokenSigner, loadOrCreateSecret } from './auth/tokens.ts';
import { WorkspaceStore } from './store/workspace-store.ts';
import { DurablePersistence } from './collab/persistence.ts';
import { AccessControl, authorize } from './collab/access.ts';
import { AwarenessGuard, encodeAwarenessEntries, reframeAwareness } from './collab/awareness-guard.ts';
import { YwsBridge } from './collab/yws-bridge.ts';
import { PlexusSocket } from './collab/socket.ts';
import { ProtocolError } from './collab/errors.ts';
import { validateHocuspocusFrame } from './collab/validate.ts';
import { Workspaces } from './workspaces.ts';
import { handleApi } from './http/api.ts';
import { handleVolumes, isVolumePath } from './http/volumes.ts';
import { sampleVolume } from './http/volume-api.ts';
import { Volumes } from './volumes/volume-store.ts';
import { DEMO_DATASET } from './volumes/demo/demo-dataset.ts';
import { demoDatasetDir, ensureDemoDataset, isDemoDatasetCurrent } from './volumes/demo/ensure-demo.ts';
import { registerServerDir, sendError } from './http/respond.ts';
import { staticFiles } from './http/static-files.ts';
import { DEMO_WORKSPACE_ID, fillDemo } from './demo.ts';
import { addDemoRois } from './demo-viewer.ts';
import { KernelManager } from './kernel/manager.ts';
import type { VolumeSampler } from './kernel/js-runtime.ts';
import { writeAgentToken } from './auth/agent-token.ts';
import { occupiedWorkspaces } from './collab/people.ts';
import { AgentLeases } from './collab/agent-leases.ts';

export const VERSION = '0.1.0';
/** DuckDB's memory limit for one read-only data query, description or histogram over HTTP (MB). */
const DATA_READ_MEMORY_MB = 256;

export interface PlexusServer {
  config: ServerConfig;
  url: string;
  port: number;
  store: WorkspaceStore;
  hocuspocus: Hocuspocus;
  signer: TokenSigner;
  workspaces: Workspaces;
  persistence: DurablePersistence;
  /** The volumes directory (`<dataDir>/volumes`) and the datasets being generated. */
  volumes: Volumes;
  /** Kernel supervision (null when PLEXUS_KERNEL=0). */
  kernels: KernelManager | null;
  log: Logger;
  /** An owner token for every workspace (the local user's). */
  ownerToken: string;
  /** `<dataDir>/agent.token`, the agent's service token, rewritten at each start (null when PLEXUS_AGENT=0). */
  agentTokenFile: string | null;
  /** Which agent process runs each workspace's agent runs. */
  agentLeases: AgentLeases;
  /** Flushes everything to storage and stops. */
  close(): Promise<void>;
}

function toRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
    else if (v !== undefined) headers.set(k, v);
  }
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { headers });
}

function refuseUpgrade(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/**
 * Runs the Yjs paths a document load takes (apply, encode) once on a small workspace, so the first
 * real load after a start does not also pay for V8's compilation of them (1.5-2x slower otherwise).
 */
function warmUp(): void {
  const doc = new Y.Doc();
  for (let i = 0; i < 20; i++) fillDemo(doc);
  const copy = new Y.Doc();
  copy.transact(() => Y.applyUpdate(copy, Y.encodeStateAsUpdate(doc)));
  Y.encodeStateAsUpdate(copy, Y.encodeStateVector(new Y.Doc()));
  doc.destroy();
  copy.destroy();
}

/** In-process seams for tests and benchmarks (never set by `main.ts`). */
export interface ServerHooks {
  /**
   * Wraps the volume sampler cells call (`volumes.histogram/trace`): tests use it to hold a cell at
   * a known point until they release it (see the test kit's `Gates`), instead of sleeping.
   */
  wrapSample?: (sample: VolumeSampler) => VolumeSampler;
}

/** Starts a server; resolves once it listens. */
export async function startServer(config: ServerConfig, hooks: ServerHooks = {}): Promise<PlexusServer> {
  const log = createLogger(config.logLevel, { svc: 'plexus' });
  fs.mkdirSync(config.dataDir, { recursive: true });
  const secret = config.secret ? Buffer.from(config.secret, 'utf8') : loadOrCreateSecret(config.dataDir);
  const signer = new TokenSigner(secret);
  const store = new WorkspaceStore(path.join(config.dataDir, 'plexus.db'), { background: true });
  const guard = new AwarenessGuard();
  const persistence = new DurablePersistence(store, log, { compactEvery: config.compactEvery, compactIdleMs: config.compactIdleMs });
  const kernels = config.kernel
    ? new KernelManager({
        dataDir: config.dataDir,
        signer,
        log,
        idleMs: config.kernelIdleMs,
        limits: { timeoutMs: config.cellTimeoutMs, memoryMb: config.cellMemoryMb, sqlMemoryMb: config.sqlMemoryMb, sqlRowsToJs: config.sqlRowsToJs, maxFrameBytes: 64 * 1024 * 1024 },
        // Cells sample the served volumes through the server (they cannot read files themselves).
        sample: (hooks.wrapSample ?? ((f: VolumeSampler) => f))((op, dataset, layer, params) =>
          sampleVolume({ volumes, maxSampleVoxels: config.maxSampleVoxels }, dataset, layer, op, (n) => params[n] ?? null)),
      })
    : null;
  const hocuspocus = new Hocuspocus({
    name: 'plexus',
    quiet: true,
    timeout: 30_000,
    // Storage is our write-ahead log, not Hocuspocus' debounced store: unload as soon as possible.
    debounce: 0,
    unloadImmediately: true,
    extensions: [new AccessControl(signer, store, log), persistence, ...(kernels ? [kernels] : [])],
  });
  // Error bodies never name these (http/respond.ts redacts them; any other absolute path too).
  registerServerDir(config.dataDir, '<data dir>');
  if (kernels) registerServerDir(kernels.kernelDir, '<kernel dir>');
  // After the kernel manager, whose start narrows file modes in the data dir (this file stays 0600).
  const agentTokenFile = config.agent ? writeAgentToken(config.dataDir, signer, config.agentName) : null;
  const workspaces = new Workspaces(store, hocuspocus, persistence);
  const agentLeases = new AgentLeases();
  const bridge = new YwsBridge(hocuspocus, persistence, guard, log);
  workspaces.onDelete = (id) => {
    bridge.closeAll(id, CloseCodes.NotFound);
    void kernels?.stop(id);
  };

  warmUp();
  const seededDemo = config.seedDemo && store.list().length === 0;
  if (seededDemo) {
    workspaces.create({ id: DEMO_WORKSPACE_ID, name: 'Demo workspace', fill: fillDemo });
    log.info('seeded the demo workspace', { ws: DEMO_WORKSPACE_ID });
  }

  // The demo dataset is generated on a worker thread (~5 s of CPU on 2 cores): the server listens
  // at once and /volumes/calcium-demo answers 503 "generating" until it is ready.
  const volumes = new Volumes(path.join(config.dataDir, 'volumes'));
  const stopGenerating = new AbortController();
  let demoData: Promise<unknown> = Promise.resolve();
  if (config.seedDemo && !isDemoDatasetCurrent(config.dataDir, config.demoData)) {
    const work = ensureDemoDataset(config.dataDir, log, { ...config.demoData, worker: true, signal: stopGenerating.signal });
    work.catch((e) => {
      if (!stopGenerating.signal.aborted) log.error('could not generate the demo dataset', { err: e });
    });
    volumes.track(DEMO_DATASET, work);
    demoData = work;
  }
  if (seededDemo) {
    // The demo's ROI markers come from the dataset's ground truth, once it exists.
    void demoData
      .then(() => fs.promises.readFile(path.join(demoDatasetDir(config.dataDir), 'tables', 'rois.csv'), 'utf8'))
      .then((csv) => workspaces.change(DEMO_WORKSPACE_ID, (doc) => addDemoRois(doc, csv)))
      .catch((e) => log.warn('could not add the demo ROIs', { err: e }));
  }

  let ready = false;
  const started = Date.now();
  const serveClient = staticFiles(config.clientDir);
  const publicUrl = (req: IncomingMessage) => config.publicUrl ?? `http://${req.headers.host ?? `localhost:${config.port}`}`;
  const volumeRoute = { volumes, signer, log, public: config.publicVolumes, corsOrigins: config.volumesCorsOrigins, publicUrl };
  const volumeApi = { volumes, maxSampleVoxels: config.maxSampleVoxels, publicUrl };
  const http: Server = createServer((req, res) => {
    // Raw path, before URL normalisation: /volumes/../x must be refused, not re-routed.
    if (isVolumePath(req.url)) {
      handleVolumes(volumeRoute, req, res).catch((e) => {
        log.error('volume request failed', { err: e });
        if (!res.headersSent) sendError(res, 500, 'internal', 'internal error');
      });
      return;
    }
    handleApi(
      { signer, workspaces, log, version: VERSION, started, openDocuments: () => hocuspocus.getDocumentsCount(), isReady: () => ready, publicUrl, shareLinkDays: config.shareLinkDays, volumeApi,
        store,
        dataDir: config.dataDir,
        agentLeases,
        occupiedWorkspaces: () => occupiedWorkspaces(hocuspocus, (id) => bridge.people(id)),
        notebook: { hocuspocus, kernels, upload: { maxBytes: config.uploadMaxBytes, timeoutMs: config.uploadTimeoutMs, memoryMb: config.sqlMemoryMb },
          dataReads: { timeoutMs: config.dataQueryTimeoutMs, memoryMb: DATA_READ_MEMORY_MB } } },
      req,
      res,
    )
      .then((handled) => {
        if (handled) return;
        if (serveClient && (req.method === 'GET' || req.method === 'HEAD')) return serveClient(req, res);
        sendError(res, 404, 'not-found', serveClient ? 'not found' : 'the client is not built: run `npm run build -w client` (npm start does it for you)');
      })
      .catch((e) => {
        log.error('request failed', { err: e });
        if (!res.headersSent) sendError(res, 500, 'internal', 'internal error');
      });
  });

  // PlexusSocket: an oversized message closes with 4413 message-too-large (ws itself says 1009).
  const wss = new WebSocketServer({ noServer: true, maxPayload: config.maxMessageBytes, perMessageDeflate: false, WebSocket: PlexusSocket });

  const serveHocuspocus = (ws: WebSocket, req: IncomingMessage) => {
    const conn = hocuspocus.handleConnection(ws as unknown as import('@hocuspocus/server').WebSocketLike, toRequest(req));
    // Identity per socket for the awareness checks: one owner key, and the claims of the token each
    // document was authenticated with (role checked, sub and name stamped; Hocuspocus itself
    // refuses bad tokens).
    const ownerKey = `hp:${randomUUID()}`;
    const roles = new Map<string, TokenClaims>();
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      let frame = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      try {
        if (!isBinary) throw new ProtocolError(CloseCodes.MalformedMessage, 'text frames are not part of the protocol');
        const f = validateHocuspocusFrame(frame);
        if (f.token !== undefined) {
          try {
            roles.set(f.documentName, signer.verify(f.token));
          } catch {
            roles.delete(f.documentName);
          }
        }
        if (f.awareness) {
          const claims = roles.get(f.documentName);
          // Not (or not validly) authenticated for this document: Hocuspocus would queue the frame
          // and apply it unchecked after authentication, or refuse the document; drop it instead.
          if (!claims) return;
          const live = hocuspocus.documents.get(f.documentName);
          const who = { ownerKey, role: claims.role, sub: claims.sub, ...(claims.name !== undefined ? { name: claims.name } : {}) };
          const checked = guard.check(f.documentName, who, f.awareness, (id) => live?.awareness.meta.get(id)?.clock);
          // Identity stamped from the token: Hocuspocus applies and relays the stamped states.
          if (checked.stamped) frame = reframeAwareness(frame, encodeAwarenessEntries(checked.entries));
        }
      } catch (e) {
        const err = e as ProtocolError;
        log.warn('frame refused; connection closed', { code: err.code, reason: err.reason, detail: err.message, protocol: 'hocuspocus' });
        ws.close(err.code, err.reason);
        return;
      }
      conn.handleMessage(frame);
    });
    ws.on('close', (code: number, reason: Buffer) => {
      for (const doc of roles.keys()) guard.release(doc, ownerKey);
      conn.handleClose({ code, reason: reason.toString() });
    });
    ws.on('error', (e) => log.warn('websocket error', { err: e }));
  };

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (!ready) return refuseUpgrade(socket, 503, 'Service Unavailable');
    if (url.pathname === HOCUSPOCUS_PATH || url.pathname === HOCUSPOCUS_PATH + '/') {
      wss.handleUpgrade(req, socket, head, (ws) => serveHocuspocus(ws, req));
      return;
    }
    if (url.pathname.startsWith(YWS_PATH_PREFIX)) {
      const id = decodeURIComponent(url.pathname.slice(YWS_PATH_PREFIX.length));
      wss.handleUpgrade(req, socket, head, (ws) => {
        // Accept, then close with a clear code: clients see the reason, not a bare HTTP error.
        let claims;
        try {
          claims = authorize(signer, store, url.searchParams.get('token'), id, url.searchParams.get('epoch'));
        } catch (e) {
          const err = e as ProtocolError;
          log.warn('connection refused', { ws: id, reason: err.reason, detail: err.message, protocol: 'y-websocket' });
          ws.close(err.code, err.reason);
          return;
        }
        log.info('connection authorized', { ws: id, role: claims.role, sub: claims.sub, protocol: 'y-websocket' });
        bridge.serve(ws, id, claims).catch((e) => {
          log.error('y-websocket peer failed', { ws: id, err: e });
          ws.close(CloseCodes.LoadFailed.code, CloseCodes.LoadFailed.reason);
        });
      });
      return;
    }
    refuseUpgrade(socket, 404, 'Not Found');
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(config.port, config.host, () => resolve());
  });
  ready = true;
  const addr = http.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const url = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${port}`;
  kernels?.listening(`http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`, hocuspocus);
  const ownerToken = signer.sign({ ws: '*', role: 'owner', sub: 'local-owner', ttlSeconds: config.ownerTokenDays * 86400 });
  log.info('listening', { url, dataDir: config.dataDir, clientBuilt: serveClient !== null });

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      ready = false;
      log.info('shutting down: flushing documents');
      stopGenerating.abort();
      await kernels?.closeAll().catch((e) => log.error('stopping kernels failed', { err: e }));
      http.close();
      bridge.closeAll(null, { code: 1001, reason: 'server-shutting-down' });
      hocuspocus.closeConnections();
      for (const ws of wss.clients) ws.terminate();
      const failed = persistence.flushAll();
      if (failed.length) log.error('could not flush some workspaces; their last changes are in the update log', { failed });
      store.close();
      log.info('stopped');
    })());

  return { config, url, port, store, hocuspocus, signer, workspaces, persistence, volumes, kernels, log, ownerToken, agentTokenFile, agentLeases, close };
}
