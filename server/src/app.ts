/**
 * Assembles the Plexus server — wiring only: one HTTP server on one port carrying the API, the
 * volumes (/volumes, Neuroglancer precomputed), the built client (http/request-handler.ts), the
 * Hocuspocus endpoint (/collab) and the plain y-websocket endpoint (/yjs/<id>) (http/upgrade.ts),
 * the durable store, the kernels, the demo (demo-setup.ts), the operator's side of a node (ops/:
 * readiness, metrics, drain) and an orderly shutdown.
 * Effects: network, files, timers.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import path from 'node:path';
import fs from 'node:fs';
import { Hocuspocus, type Extension } from '@hocuspocus/server';
import { WebSocketServer } from 'ws';
import * as Y from 'yjs';
import { CloseCodes, type Requester } from '@plexus/shared';
import type { ServerConfig } from './config.ts';
import { createLogger, type Logger } from './log.ts';
import { TokenSigner } from './auth/tokens.ts';
import type { WorkspaceStorage } from './store/storage.ts';
import { openStorage } from './store/open-storage.ts';
import { DurablePersistence } from './collab/persistence.ts';
import { AccessControl, type ConnectionContext } from './collab/access.ts';
import { revokedBy } from './auth/link-revocation.ts';
import { AwarenessGuard } from './collab/awareness-guard.ts';
import { YwsBridge } from './collab/yws-bridge.ts';
import { PlexusSocket } from './collab/socket.ts';
import { pushedDebouncer } from './collab/pushed-timers.ts';
import { Workspaces } from './workspaces.ts';
import { requestHandler } from './http/request-handler.ts';
import { upgradeHandler } from './http/upgrade.ts';
import { OpeningReads } from './http/opening-reads.ts';
import { sampleVolume } from './http/volume-api.ts';
import { Volumes } from './volumes/volume-store.ts';
import { registerServerDir } from './http/respond.ts';
import { staticFiles } from './http/static-files.ts';
import { fillDemo } from './demo.ts';
import { setUpDemo } from './demo-setup.ts';
import { demoAtlasSeeder } from './demo-atlas.ts';
import { calciumJobs, curatedRois, tiffImports } from './analysis/wiring.ts';
import type { CuratedRois } from './analysis/curated-rois.ts';
import type { TiffImports } from './analysis/tiff-jobs.ts';
import type { TiffImportSpec } from './analysis/tiff-import-main.ts';
import { cellJobCaller } from './analysis/cell-jobs.ts';
import type { CalciumJobs } from './analysis/calcium-jobs.ts';
import type { CalciumJobSpec } from './analysis/calcium-job-main.ts';
import { KernelManager } from './kernel/manager.ts';
import type { VolumeSampler } from './kernel/js-runtime.ts';
import { ProtocolError } from './collab/errors.ts';
import { AGENT_SUB, KERNEL_TOKEN_FILE, agentLeaseToken, kernelLeaseToken, writeAgentToken, writeKernelToken } from './auth/agent-token.ts';
import { occupiedWorkspaces } from './collab/people.ts';
import { AgentLeases, type AgentLeaseStore } from './collab/agent-leases.ts';
import { RedisAgentLeases } from './cluster/agent-leases-redis.ts';
import { Library } from './library/library-service.ts';
import { forksWiring } from './forks/wiring.ts';
import type { Forks } from './forks/forks.ts';
import type { Roster, RosterTimer } from './forks/roster.ts';
import { atlasMaps } from './atlas/wiring.ts';
import { historyWiring, type History } from './history/wiring.ts';
import { requester } from './http/history-api.ts';
import type { AtlasMaps } from './atlas/atlas-maps.ts';
import { Readiness } from './ops/readiness.ts';
import { NodeMetrics, timeAppends } from './ops/metrics.ts';
import { Drain, closeSockets } from './ops/drain.ts';
import type { NodeState } from './http/ops-api.ts';
import { clusterWiring, type Cluster } from './cluster/wiring.ts';
import { defaultNodeUrl } from './cluster/cluster-config.ts';

export const VERSION = '0.1.0';
/** DuckDB's memory limit for one read-only data query, description or histogram over HTTP (MB). */
const DATA_READ_MEMORY_MB = 256;
/** Longest a stopping server waits for its WebSocket peers to answer the close frame before cutting them. */
const SOCKET_CLOSE_MS = 2000;
/** A workspace id that never exists: the storage readiness check looks it up (a trivial query). */
const READY_PROBE_ID = '_plexus_ready_probe';

export interface PlexusServer {
  config: ServerConfig;
  url: string;
  port: number;
  /** Workspaces, update log, snapshots, forks: SQLite, or Postgres with `PLEXUS_DATABASE_URL` (store/open-storage.ts). */
  store: WorkspaceStorage;
  hocuspocus: Hocuspocus;
  signer: TokenSigner;
  workspaces: Workspaces;
  persistence: DurablePersistence;
  /** What browsers read while they open a workspace (first screen, state) and the states kept for them. */
  openingReads: OpeningReads;
  /** The volumes directory (`<dataDir>/volumes`) and the datasets being generated. */
  volumes: Volumes;
  /** Kernel supervision (null when PLEXUS_KERNEL=0). */
  kernels: KernelManager | null;
  log: Logger;
  /** An owner token for every workspace (the local user's). */
  ownerToken: string;
  /** `<dataDir>/agent.token`, the agent's service token, rewritten at each start (null when PLEXUS_AGENT=0). */
  agentTokenFile: string | null;
  /** Analysis jobs (null without the kernel). */
  jobs: CalciumJobs | null;
  /** Writes people's ROI edits into calcium result tables (null without a kernel). */
  curated: CuratedRois | null;
  /** Imports of uploaded TIFF recordings as served datasets (jobs of kind `tiff-import`). */
  recordings: TiffImports;
  /** Which agent process runs each workspace's agent runs (in memory; in Redis with several nodes). */
  agentLeases: AgentLeaseStore;
  /** Kernel processes' leases (PLEXUS_KERNEL=external). */
  kernelLeases: AgentLeaseStore;
  /** Where the kernel processes' token is written (PLEXUS_KERNEL=external), else null. */
  kernelTokenFile: string | null;
  /** The method library of every workspace. */
  library: Library;
  /** Forks and hand-outs (forks/forks.ts), and the rosters of hand-outs (forks/roster.ts). */
  forks: Forks;
  roster: Roster;
  /** The atlas's maps: coordinates and selection tables (null without a kernel). */
  atlas: AtlasMaps | null;
  /** Checkpoints and the attribution journal (history/). */
  history: History;
  /** This node's id (`PLEXUS_NODE_ID`): in every log line, health, readiness and metric. */
  nodeId: string;
  /** The checks of `GET /api/ready` (storage; add e.g. Redis where it is wired). */
  readiness: Readiness;
  /** What `GET /metrics` exposes. */
  metrics: NodeMetrics;
  /** One of several nodes (`PLEXUS_REDIS_URL`): leases, routing, relays (cluster/); null: the only node. */
  cluster: Cluster | null;
  /** Flushes everything to storage and stops; open WebSockets are closed with 1012 server-draining. */
  close(): Promise<void>;
  /**
   * Graceful stop (SIGTERM): refuses new clients (`/api/ready` 503 draining, new WebSockets closed
   * with 1012), waits for the HTTP requests in flight (at most `PLEXUS_DRAIN_MS`), then `close()`.
   */
  drain(): Promise<void>;
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
  /** Adjusts an analysis job's spec before it runs: tests hold a job at a frame until they stop it. */
  wrapJobSpec?: (spec: CalciumJobSpec) => CalciumJobSpec;
  /** Adjusts a TIFF import's spec before it runs: tests hold an import at a frame until they stop it. */
  wrapImportSpec?: (spec: TiffImportSpec) => TiffImportSpec;
  /** Schedules the roster's pushes (tests see the delay a fork's change waits before it reaches the roster). */
  rosterTimer?: RosterTimer;
}

/** Starts a server; resolves once it listens. */
export async function startServer(config: ServerConfig, hooks: ServerHooks = {}): Promise<PlexusServer> {
  const log = createLogger(config.logLevel, { svc: 'plexus', node: config.ops.nodeId });
  fs.mkdirSync(config.dataDir, { recursive: true });
  const storage = await openStorage(config, log);
  const store = storage.store;
  const secret = config.secret ? Buffer.from(config.secret, 'utf8') : await storage.tokenSecret();
  const signer = new TokenSigner(secret);
  const guard = new AwarenessGuard();
  const persistence = new DurablePersistence(store, log, { compactEvery: config.compactEvery, compactIdleMs: config.compactIdleMs, precheck: config.updatePrecheck, replicaPartStructs: config.replicaPartStructs ?? config.snapshotPartStructs, ...(config.loadCheckStep === undefined ? {} : { checkStep: config.loadCheckStep }) });
  // The operator's side: readiness checks, metrics (the store's appends timed), the drain state.
  const readiness = new Readiness([{ name: 'storage', check: () => store.get(READY_PROBE_ID) }]);
  const drainState = new Drain();
  const metrics = new NodeMetrics(config.ops.nodeId, {
    version: VERSION,
    hocuspocus: (): Hocuspocus => hocuspocus,
    sockets: () => wss.clients,
    ywsPeers: (id) => bridge.peerCount(id),
    ywsKinds: () => bridge.kinds(),
    kernelsRunning: () => kernels?.running ?? 0,
    validation: () => persistence.validation,
    httpInFlight: () => drainState.requestsInFlight,
    accepting: () => nodeState() === 'accepting',
    draining: () => drainState.draining,
    cluster: () => cluster?.stats() ?? null,
  });
  timeAppends(store, metrics.onAppend);
  /** Workspaces loaded here with people in them (both protocols). */
  const localOccupied = () => occupiedWorkspaces(hocuspocus, (id) => bridge.people(id));
  // Several nodes: this one serves the workspaces whose lease it holds and relays the others' clients.
  const cluster = config.cluster
    ? clusterWiring({
        config: config.cluster,
        nodeId: config.ops.nodeId,
        signer,
        fencing: store.fencing,
        hocuspocus: (): Hocuspocus => hocuspocus,
        log,
        occupied: () => localOccupied(),
        stopServing: (ws) => {
          persistence.stopStoring(ws);
          bridge.closeAll(ws, CloseCodes.WorkspaceMoved);
          void kernels?.stop(ws);
        },
      })
    : null;
  if (cluster) {
    readiness.add({ name: 'redis', check: () => cluster.redis.ping() });
    persistence.onFenced = (ws) => cluster.ownership.drop(ws, 'fenced off by the store');
  }
  // What cells ask of the server while they run, called directly by kernels inside this server and
  // over HTTP by kernel processes of their own (http/service-api.ts).
  const kernelCalls = {
    // Cells sample the served volumes through the server (they cannot read files themselves).
    sample: (hooks.wrapSample ?? ((f: VolumeSampler) => f))((op, dataset, layer, params) =>
      sampleVolume({ volumes, maxSampleVoxels: config.maxSampleVoxels }, dataset, layer, op, (n) => params[n] ?? null)),
    // Cells start and read analysis jobs through the server (bound once both exist).
    jobs: (ws: string, op: string, args: Record<string, unknown>, by: Requester | null) => cellJobs(ws, op, args, by),
  };
  const kernels = config.kernel
    ? new KernelManager({
        dataDir: config.dataDir,
        sharedDataDir: config.cluster !== null,
        log,
        idleMs: config.kernelIdleMs,
        // In place only where appends are synchronous (SQLite): a kernel write then reaches the log
        // in the turn it is made, before anyone is sent it. With Postgres (asynchronous appends,
        // every cluster) a server-side change is sent before it is stored, and a client that saw a
        // kernel write the store never got (a crash, a stale holder fenced off) would re-send it as
        // its own — refused by the schema; the kernel then stays a peer whose writes are stored first.
        ...(config.kernelInPlace && store.syncAppends ? {} : { socketPeers: { signer } }),
        limits: { timeoutMs: config.cellTimeoutMs, memoryMb: config.cellMemoryMb, sqlMemoryMb: config.sqlMemoryMb, sqlThreads: config.sqlThreads, sqlChunkHops: config.sqlChunkHops, sqlAdaptiveThreads: config.sqlAdaptiveThreads, sqlRowsToJs: config.sqlRowsToJs, maxFrameBytes: 64 * 1024 * 1024 },
        runAhead: config.kernelRunAhead,
        plainRuns: config.kernelPlainRuns,
        external: config.externalKernels,
        ...kernelCalls,
      })
    : null;
  // People's ROI edits reach the result tables (set once the jobs exist, below).
  let curated: CuratedRois | null = null;
  const detachCurated = new Map<string, () => void>();
  const roiTables: Extension = {
    async afterLoadDocument({ documentName, document }) {
      const detach = curated?.attach(documentName, document);
      if (detach) detachCurated.set(documentName, detach);
    },
    async afterUnloadDocument({ documentName }) {
      detachCurated.get(documentName)?.();
      detachCurated.delete(documentName);
    },
  };
  // The method library: the shipped notes join each workspace when it loads (library-service.ts).
  const library: Library = new Library({ hocuspocus: (): Hocuspocus => hocuspocus, dataDir: config.dataDir, log });
  // Forks and hand-outs; the roster follows loaded hand-out forks into their sources (forks/).
  const forking = forksWiring({ config, store, hocuspocus: (): Hocuspocus => hocuspocus, signer, log, kernels, copyFiles: (from, to) => library.copyWorkspace(from, to), timer: hooks.rosterTimer, remote: cluster?.roster });
  // History: who changed what in each loaded document, and its checkpoints (history/).
  const history = historyWiring({ config, store: storage.history, hocuspocus: (): Hocuspocus => hocuspocus, log });
  // The atlas: maps' coordinates and selection tables follow each loaded document (atlas/atlas-maps.ts).
  const atlas = kernels ? atlasMaps({ config, hocuspocus: (): Hocuspocus => hocuspocus, kernels, log }) : null;
  // What browsers read while they open a workspace; it keeps encoded states and, on one node, the
  // first screens of unloaded documents (http/opening-reads.ts).
  const openingReads = new OpeningReads(() => hocuspocus, log, {
    storedHead: cluster ? null : (ws) => store.logHead(ws),
    storedState: cluster ? null : (ws) => persistence.collectedSnapshot(ws),
    partStructs: config.openingPartStructs ?? config.snapshotPartStructs,
  });
  persistence.onLoadedState = (ws, doc, state) => openingReads.keepLoaded(ws, doc, state);
  const hocuspocus: Hocuspocus = new Hocuspocus({
    name: 'plexus',
    quiet: true,
    timeout: config.connectionTimeoutMs,
    // Storage is our write-ahead log, not Hocuspocus' debounced store: no extension stores on its
    // schedule, so its store hooks only decide when an unloaded-to-be document goes. With a debounce
    // of 0 they ran on every update (a mutex, two hook chains and an unload check per keystroke);
    // debounced, they cost a timer reset. Unloads still happen at once: `unloadImmediately` runs
    // the pending store when the last socket leaves, and a direct connection (or the kernel's
    // hold, kernel/manager.ts) stores at once when it lets go. Only with synchronous storage: there
    // no unload hook waits for I/O, so no update can land while a document unloads; with Postgres
    // one can (persistence awaits appends in flight), which aborts the unload until the pending
    // store runs — at once with a debounce of 0, 10 s later otherwise, during which a client
    // joining would reuse a document whose unload hooks already ran.
    debounce: store.syncAppends ? 10_000 : 0,
    unloadImmediately: true,
    extensions: [...(cluster ? [cluster.ownership] : []), new AccessControl(signer, store, log), persistence, ...(kernels ? [kernels, roiTables] : []), ...(atlas ? [atlas.extension] : []), library.extension, forking.roster.extension, history.attribution.extension, history.checkpoints.extension, metrics.extension, openingReads],
  });
  // Its store hooks are debounced on every update: pushed back without a timer reset per update.
  hocuspocus.debouncer = pushedDebouncer();
  // Error bodies never name these (http/respond.ts redacts them; any other absolute path too).
  registerServerDir(config.dataDir, '<data dir>');
  if (kernels) registerServerDir(kernels.kernelDir, '<kernel dir>');
  // After the kernel manager, whose start narrows file modes in the data dir (this file stays 0600).
  const agentTokenFile = config.agent ? writeAgentToken(config.dataDir, signer, config.agentName) : null;
  const workspaces = new Workspaces(store, hocuspocus, persistence);
  const agentLeases: AgentLeaseStore = cluster ? new RedisAgentLeases(cluster.redis) : new AgentLeases();
  const kernelLeases: AgentLeaseStore = cluster ? new RedisAgentLeases(cluster.redis, Date.now, 'kernel') : new AgentLeases();
  const kernelTokenFile = kernels && config.externalKernels ? writeKernelToken(config.dataDir, signer) : null;
  // Kernels inside the server: a kernel token left from a run with external kernels must not work.
  if (!kernelTokenFile) fs.rmSync(path.join(config.dataDir, KERNEL_TOKEN_FILE), { force: true });
  // The lease fence: a service process joined with its lease token (a kernel process, the agent)
  // cannot write while another runner holds that lease — one paused past it and resumed, or cut
  // off, is refused. A lease nobody holds (it lapsed; a restarted server with leases in memory)
  // refuses nothing: the holder renews it on its next round, and nobody else wrote meanwhile.
  persistence.writeFence = async (ws, claims) => {
    if (claims.runner === undefined) return;
    const leases = claims.sub === AGENT_SUB ? agentLeases : kernelLeases;
    const holder = await leases.holder(ws);
    if (holder !== null && holder !== claims.runner) throw new ProtocolError(CloseCodes.LeaseLost, 'this process no longer holds the workspace\'s lease');
  };
  const bridge = new YwsBridge(hocuspocus, persistence, guard, log);
  workspaces.onDelete = async (id) => {
    bridge.closeAll(id, CloseCodes.NotFound);
    void kernels?.stop(id);
    library.deleteWorkspace(id);
    await forking.deleted(id);
    await history.deleted(id);
  };
  workspaces.seed = (doc) => library.seed(doc);
  workspaces.onDuplicate = (from, to) => library.copyWorkspace(from, to);

  warmUp();
  // The demo workspace (first start) and its dataset, generated on a worker thread: the server
  // listens at once and /volumes/calcium-demo answers 503 "generating" until it is ready.
  const volumes = new Volumes(path.join(config.dataDir, 'volumes'));
  const jobs = kernels ? calciumJobs({ config, hocuspocus, kernels, volumes, log, wrapSpec: hooks.wrapJobSpec }) : null;
  curated = kernels ? curatedRois({ config, hocuspocus, kernels, volumes, log }) : null;
  // After the calcium jobs, which empty `<dataDir>/jobs` (its uploads folder included) when they start.
  const recordings = tiffImports({ config, hocuspocus, volumes, log, wrapSpec: hooks.wrapImportSpec });
  const cellJobs = cellJobCaller(() => jobs, hocuspocus, volumes);
  const stopGenerating = new AbortController();
  const demoSeeding = (await setUpDemo({ config, store, workspaces, volumes, log, signal: stopGenerating.signal, atlas: kernels ? demoAtlasSeeder({ config, hocuspocus, kernels }) : null })).settled;

  let ready = false;
  let closing: Promise<void> | null = null;
  const nodeState = (): NodeState => (closing ? 'stopping' : !ready ? 'starting' : drainState.draining ? 'draining' : 'accepting');
  const started = Date.now();
  const serveClient = staticFiles(config.clientDir);
  const publicUrl = (req: IncomingMessage) => config.publicUrl ?? `http://${req.headers.host ?? `localhost:${config.port}`}`;
  const volumeRoute = { volumes, signer, log, store, public: config.publicVolumes, corsOrigins: config.volumesCorsOrigins, publicUrl };
  const volumeApi = { volumes, maxSampleVoxels: config.maxSampleVoxels, publicUrl };
  const handle = requestHandler({
      api: {
        signer, workspaces, log, store, volumeApi, library, version: VERSION, started, publicUrl, nodeId: config.ops.nodeId, isDraining: () => drainState.draining,
        forks: {
          forks: forking.forks, publicUrl,
          checkpoint: async (ws, cid) => {
            const state = await history.checkpoints.state(ws, cid);
            return state && { state };
          },
        },
        history: { hocuspocus, store: history.store, checkpoints: history.checkpoints, attribution: history.attribution },
        dataDir: config.dataDir,
        // Embeddings maps need the service and the kernel (a map's tables are kernel tables).
        atlas: { embeddings: config.embeddings && kernels ? { model: config.embeddings.model } : null },
        shareLinkDays: config.shareLinkDays,
        openDocuments: () => hocuspocus.getDocumentsCount(),
        foldsRunning: () => persistence.unloadFoldsRunning,
        isReady: () => ready,
        revokeLinks: (id, generation) => {
          // Several nodes: this is the node serving the workspace (the request was relayed here),
          // and relayed clients' connections are here too.
          const { code, reason } = CloseCodes.TokenRevoked;
          let n = 0;
          for (const c of hocuspocus.documents.get(id)?.getConnections() ?? []) {
            const claims = (c.context as ConnectionContext | undefined)?.claims;
            if (claims && revokedBy(claims, id, generation)) {
              c.webSocket.close(code, reason);
              n++;
            }
          }
          return n + bridge.closeWhere(id, (claims) => revokedBy(claims, id, generation), CloseCodes.TokenRevoked);
        },
        services: {
          agentLeases,
          agentLeaseToken: (ws, runner) => agentLeaseToken(signer, ws, runner, config.agentName),
          kernelLeases,
          occupiedWorkspaces: () => (cluster ? cluster.occupancy.all() : localOccupied()),
          kernelProcesses: kernels && kernelTokenFile ? { calls: kernelCalls, leaseToken: (ws, runner) => kernelLeaseToken(signer, ws, runner), kernelDir: kernels.kernelDir } : null,
        },
        openingReads,
        notebook: {
          hocuspocus, kernels, jobs, recordings,
          upload: { maxBytes: config.uploadMaxBytes, timeoutMs: config.uploadTimeoutMs, memoryMb: config.sqlMemoryMb },
          dataReads: { timeoutMs: config.dataQueryTimeoutMs, memoryMb: DATA_READ_MEMORY_MB },
          beforeImport: (ws, claims, file) => history.checkpoints.create(ws, { kind: 'import', by: requester(claims, undefined), label: `Before importing ${file}`.slice(0, 200) }),
        },
      },
      ops: { nodeId: config.ops.nodeId, state: nodeState, readiness, metrics, metricsToken: config.ops.metricsToken, log },
      volumes: volumeRoute,
      serveClient,
      log,
    });
  // Several nodes: requests about a workspace served elsewhere are forwarded to its node.
  const http: Server = createServer(
    drainState.track(
      cluster
        ? (req, res) =>
            void cluster.relayHttp(req, res).then(
              (relayed) => relayed || handle(req, res),
              (e) => {
                log.error('relaying a request failed', { err: e });
                if (!res.headersSent) res.writeHead(500).end();
              },
            )
        : handle,
    ),
  );

  // PlexusSocket: an oversized message closes with 4413 message-too-large (ws itself says 1009).
  const wss = new WebSocketServer({ noServer: true, maxPayload: config.maxMessageBytes, perMessageDeflate: false, WebSocket: PlexusSocket });

  const collabCluster = cluster && { relay: cluster.relay, route: (ws: string) => cluster.router.route(ws), localOnly: (ws: string) => cluster.localOnly(ws), fromNode: cluster.fromNode };
  http.on('upgrade', upgradeHandler({ hocuspocus, signer, guard, log, wss, store, bridge, cluster: collabCluster, isReady: () => ready, isDraining: () => drainState.draining }));

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(config.port, config.host, () => resolve());
  });
  ready = true;
  const addr = http.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const url = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${port}`;
  kernels?.listening(`http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`, hocuspocus);
  await cluster?.listening(config.cluster?.nodeUrl ?? defaultNodeUrl(config.host, port));
  const ownerToken = signer.sign({ ws: '*', role: 'owner', sub: 'local-owner', ttlSeconds: config.ownerTokenDays * 86400 });
  log.info('listening', { url, dataDir: config.dataDir, clientBuilt: serveClient !== null });

  const close = () =>
    (closing ??= (async () => {
      ready = false;
      log.info('shutting down: flushing documents');
      await openingReads.close();
      stopGenerating.abort();
      await demoSeeding;
      await jobs?.close().catch((e) => log.error('stopping analysis jobs failed', { err: e }));
      await curated?.closeAll();
      await atlas?.close().catch((e) => log.error('stopping atlas maps failed', { err: e }));
      await recordings.close().catch((e) => log.error('stopping TIFF imports failed', { err: e }));
      forking.roster.close();
      await kernels?.closeAll().catch((e) => log.error('stopping kernels failed', { err: e }));
      http.close();
      // Every WebSocket (both endpoints) is told to reconnect: frames arriving after the close
      // frame are not applied, and their senders send them again wherever they reconnect.
      const socketsClosed = closeSockets(wss.clients, CloseCodes.ServerDraining, SOCKET_CLOSE_MS);
      const failed = await persistence.flushAll();
      if (failed.length) log.error('could not flush some workspaces; their last changes are in the update log', { failed });
      await history.close().catch((e) => log.error('closing the history store failed', { err: e }));
      // After the flush: the next node to take a lease loads everything stored here.
      await cluster?.close().catch((e) => log.error('leaving the cluster failed', { err: e }));
      await store.close();
      await socketsClosed;
      log.info('stopped');
    })());
  let draining: Promise<void> | null = null;
  const drain = () =>
    (draining ??= (async () => {
      log.info('draining: refusing new clients', { inFlight: drainState.requestsInFlight, limitMs: config.ops.drainMs });
      const finishing = drainState.start(config.ops.drainMs);
      // Documents held for a socket that may never come: let them unload with the rest.
      await openingReads.close();
      // Several nodes: clients move now (their workspaces unload here, their leases go back, and
      // the node they reconnect to takes them), not after the HTTP requests in flight.
      if (cluster) void closeSockets(wss.clients, CloseCodes.ServerDraining, SOCKET_CLOSE_MS);
      const unfinished = await finishing;
      if (unfinished > 0) log.warn('drain limit reached: stopping with HTTP requests in flight', { unfinished, limitMs: config.ops.drainMs });
      await close();
    })());

  return { config, url, port, store, hocuspocus, signer, workspaces, persistence, openingReads, volumes, kernels, jobs, curated, recordings, log, ownerToken, agentTokenFile, kernelTokenFile, agentLeases, kernelLeases, library, atlas, forks: forking.forks, roster: forking.roster, history, nodeId: config.ops.nodeId, readiness, metrics, cluster, close, drain };
}
