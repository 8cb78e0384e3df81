/**
 * What a person scrapes from one node (`GET /metrics`, Prometheus text format, prom-client):
 * open WebSockets and document connections by protocol (people vs services), loaded workspaces,
 * running kernels, document updates received / relayed / appended (and their bytes) and how they
 * were validated, the storage append latency, in-flight HTTP requests, readiness, and
 * prom-client's process metrics (CPU, memory, event-loop lag, GC). Every series carries the node
 * id as the label `node`.
 *
 * Low overhead on the typing path: an update costs a few integer additions (plain fields, read
 * into the counters only when scraped) and one histogram observation of the append's duration;
 * gauges are computed at scrape time from live server state. Each server has its own registry (a
 * test process runs many servers). Effects: reads live state at scrape time.
 */
import type { Document, Extension, Hocuspocus, afterLoadDocumentPayload, afterUnloadDocumentPayload } from '@hocuspocus/server';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { isPersonConnection } from '../collab/people.ts';

export type WsProtocol = 'collab' | 'yjs';
const PROTOCOLS: readonly WsProtocol[] = ['collab', 'yjs'];

/** Live state read at scrape time. */
export interface MetricSources {
  version: string;
  hocuspocus: () => Hocuspocus;
  /** Open WebSockets, each tagged with its endpoint once upgraded. */
  sockets: () => Iterable<{ endpoint?: WsProtocol }>;
  /** y-websocket peers: of one workspace (relay count), and of all by kind. */
  ywsPeers: (workspace: string) => number;
  ywsKinds: () => { person: number; service: number };
  kernelsRunning: () => number;
  httpInFlight: () => number;
  /** 1 while the node takes new clients (started, not draining, not stopping). */
  accepting: () => boolean;
  draining: () => boolean;
  /** How incoming updates were validated (collab/shadow.ts). */
  validation?: () => { precheck: number; shadow: number; shadowsBuilt: number; known: number };
  /** Several nodes (cluster/): what this node serves and relays; null for a single server. */
  cluster?: () => ClusterStats | null;
}

export interface ClusterStats {
  leasesHeld: number;
  /** WebSocket frames relayed to (up) and from (down) the nodes serving other workspaces. */
  relayedUp: number;
  relayedDown: number;
  /** Relays ended because their workspace moved; workspaces this node dropped (lease lost, fenced off). */
  relaysMoved: number;
  dropped: number;
}

/** Upper bounds of the append-latency histogram (seconds): an append is tens of µs, a WAL stall ms. */
const APPEND_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

const sourceOf = (origin: unknown): unknown => (typeof origin === 'object' && origin !== null ? (origin as { source?: unknown }).source : undefined);

export class NodeMetrics {
  readonly registry = new Registry();
  // Plain counts on the hot path; the counters read them when scraped.
  private readonly received = { collab: 0, yjs: 0 };
  private readonly receivedBytes = { collab: 0, yjs: 0 };
  private relayed = 0;
  private relayedBytes = 0;
  private appended = 0;
  private appendedBytes = 0;
  private readonly appendSeconds: Histogram;
  private readonly detach = new Map<string, () => void>();

  /** Counts the updates of every loaded document (add it to Hocuspocus' extensions). */
  readonly extension: Extension;

  constructor(nodeId: string, private readonly src: MetricSources) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ node: nodeId });
    collectDefaultMetrics({ register: this.registry });
    const gauge = (name: string, help: string, labelNames: string[], collect: (g: Gauge) => void) =>
      new Gauge({ name, help, labelNames, registers, collect(this: Gauge) { collect(this); } });
    /** A counter whose value is `read()`'s, set when scraped. */
    const counter = (name: string, help: string, labelNames: string[], read: () => Array<[Record<string, string>, number]>) =>
      new Counter({
        name, help, labelNames, registers,
        collect(this: Counter) {
          this.reset();
          for (const [labels, v] of read()) this.inc(labels, v);
        },
      });

    gauge('plexus_node_info', 'This node: its id (label node) and version; always 1.', ['version'], (g) => g.set({ version: src.version }, 1));
    gauge('plexus_ready', '1 while this node takes new clients (not starting, draining or stopping).', [], (g) => g.set(src.accepting() ? 1 : 0));
    gauge('plexus_draining', '1 while this node drains (SIGTERM): it refuses new WebSockets and /api/ready answers 503.', [], (g) => g.set(src.draining() ? 1 : 0));
    gauge('plexus_websockets', 'Open WebSockets by endpoint (/collab: Hocuspocus, /yjs: y-websocket).', ['protocol'], (g) => {
      const n = { collab: 0, yjs: 0 };
      for (const s of src.sockets()) if (s.endpoint) n[s.endpoint]++;
      for (const p of PROTOCOLS) g.set({ protocol: p }, n[p]);
    });
    gauge('plexus_connections', 'Document connections by protocol and kind (person, or service: the kernel, the agent); a /collab socket counts once per workspace it opened.', ['protocol', 'kind'], (g) => {
      let person = 0;
      let service = 0;
      for (const doc of src.hocuspocus().documents.values()) {
        for (const c of doc.connections.keys()) {
          if (isPersonConnection(c)) person++;
          else service++;
        }
      }
      const yws = src.ywsKinds();
      g.set({ protocol: 'collab', kind: 'person' }, person);
      g.set({ protocol: 'collab', kind: 'service' }, service);
      g.set({ protocol: 'yjs', kind: 'person' }, yws.person);
      g.set({ protocol: 'yjs', kind: 'service' }, yws.service);
    });
    gauge('plexus_workspaces_loaded', 'Workspaces loaded in memory (being edited or held by a peer).', [], (g) => g.set(src.hocuspocus().getDocumentsCount()));
    gauge('plexus_kernels_running', 'Workspace kernels running (one per workspace with a kernel).', [], (g) => g.set(src.kernelsRunning()));
    gauge('plexus_http_requests_in_flight', 'HTTP requests being answered.', [], (g) => g.set(src.httpInFlight()));
    counter('plexus_updates_received_total', 'Document updates received from clients and accepted (validated, logged, applied), by protocol.', ['protocol'], () =>
      PROTOCOLS.map((p) => [{ protocol: p }, this.received[p]]));
    counter('plexus_update_bytes_received_total', 'Bytes of the document updates received from clients and accepted, by protocol.', ['protocol'], () =>
      PROTOCOLS.map((p) => [{ protocol: p }, this.receivedBytes[p]]));
    counter('plexus_updates_relayed_total', 'Document updates sent to connected peers (one per recipient; Hocuspocus may merge one event-loop turn\'s updates into one message).', [], () => [[{}, this.relayed]]);
    counter('plexus_update_bytes_relayed_total', 'Bytes of the document updates sent to connected peers (update size times recipients).', [], () => [[{}, this.relayedBytes]]);
    counter('plexus_updates_appended_total', 'Document updates appended to the write-ahead log (from clients and from the server).', [], () => [[{}, this.appended]]);
    counter('plexus_update_bytes_appended_total', 'Bytes appended to the write-ahead log.', [], () => [[{}, this.appendedBytes]]);
    counter('plexus_update_checks_total', 'Incoming updates by how they were validated: accepted by the pre-check against the live document (way="precheck"), accepted as nothing new because the document had all of it (way="known"), or decided on a shadow replica (way="shadow": concurrent map writes, unusual updates, every refusal).', ['way'], () => {
      const v = src.validation?.();
      return [[{ way: 'precheck' }, v?.precheck ?? 0], [{ way: 'known' }, v?.known ?? 0], [{ way: 'shadow' }, v?.shadow ?? 0]];
    });
    counter('plexus_shadow_replicas_built_total', 'Shadow replicas built from a live document to validate an update the pre-check left to them.', [], () => [[{}, src.validation?.().shadowsBuilt ?? 0]]);
    const cluster = () => src.cluster?.() ?? null;
    gauge('plexus_leases_held', 'Workspaces this node serves (holds the lease of); 0 for a single server.', [], (g) => g.set(cluster()?.leasesHeld ?? 0));
    counter('plexus_relayed_frames_total', 'WebSocket frames relayed for clients of workspaces another node serves (up: to that node, down: back to the client).', ['direction'], () => {
      const c = cluster();
      return [[{ direction: 'up' }, c?.relayedUp ?? 0], [{ direction: 'down' }, c?.relayedDown ?? 0]];
    });
    counter('plexus_relays_moved_total', 'Relays ended because their workspace moved to another node (clients reconnect).', [], () => [[{}, cluster()?.relaysMoved ?? 0]]);
    counter('plexus_workspaces_dropped_total', 'Workspaces this node stopped serving because another node took them (lease lost or fenced off by the store).', [], () => [[{}, cluster()?.dropped ?? 0]]);
    const batched = (): void => this.observeAppends();
    this.appendSeconds = new Histogram({ name: 'plexus_storage_append_seconds', help: 'Time to append one update to the write-ahead log (synchronous, before the update is acknowledged).', buckets: APPEND_BUCKETS, registers, collect: batched });

    this.extension = {
      extensionName: 'plexus-metrics',
      afterLoadDocument: async ({ documentName, document }: afterLoadDocumentPayload) => this.follow(documentName, document),
      afterUnloadDocument: async ({ documentName }: afterUnloadDocumentPayload) => {
        this.detach.get(documentName)?.();
        this.detach.delete(documentName);
      },
    };
  }

  /**
   * Append durations (s) not yet in the histogram. They go in together when scraped (its `collect`)
   * or when this is full: one observation per keystroke, made on the typing path, cost the server
   * more than the few integer additions of the counters (prom-client finds the labels' series and
   * the bucket per call, cold between keystrokes; docs/performance.md §37).
   */
  private readonly appendBatch = new Float64Array(512);
  private appendBatched = 0;

  /** Counts one append to the write-ahead log (persistence's `onAppend`). */
  readonly onAppend = (ms: number, bytes: number): void => {
    this.appended++;
    this.appendedBytes += bytes;
    this.appendBatch[this.appendBatched++] = ms / 1000;
    if (this.appendBatched === this.appendBatch.length) this.observeAppends();
  };

  private observeAppends(): void {
    for (let i = 0; i < this.appendBatched; i++) this.appendSeconds.observe(this.appendBatch[i]!);
    this.appendBatched = 0;
  }

  private follow(name: string, doc: Document): void {
    this.detach.get(name)?.();
    const onUpdate = (update: Uint8Array, origin: unknown) => {
      const bytes = update.byteLength;
      const source = sourceOf(origin);
      const protocol: WsProtocol | null = source === 'connection' ? 'collab' : source === 'yws' ? 'yjs' : null;
      if (protocol) {
        this.received[protocol]++;
        this.receivedBytes[protocol] += bytes;
      }
      // Hocuspocus sends every update to each socket connection of the document (its sender
      // too); the bridge to each y-websocket peer but the sender.
      const recipients = doc.connections.size + this.src.ywsPeers(name) - (protocol === 'yjs' ? 1 : 0);
      this.relayed += recipients;
      this.relayedBytes += recipients * bytes;
    };
    doc.on('update', onUpdate);
    this.detach.set(name, () => doc.off('update', onUpdate));
  }

  /** The Prometheus text exposition of every metric. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * Times every append of `store` (the write-ahead log's, on the path of every acknowledged update)
 * into `observe`: the method is wrapped once, at wiring, so the store and persistence stay as they
 * are. A synchronous append stays synchronous; a promise is timed until it settles. Failed appends
 * are not counted (persistence logs them and the update is refused).
 */
export function timeAppends<S extends { append(ws: string, update: Uint8Array): unknown }>(store: S, observe: (ms: number, bytes: number) => void): void {
  const append = store.append.bind(store);
  store.append = ((ws: string, update: Uint8Array) => {
    const started = performance.now();
    const result = append(ws, update);
    if (result instanceof Promise) {
      return result.then((v: unknown) => {
        observe(performance.now() - started, update.byteLength);
        return v;
      });
    }
    observe(performance.now() - started, update.byteLength);
    return result;
  }) as S['append'];
}
