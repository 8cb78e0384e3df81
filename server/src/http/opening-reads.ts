/**
 * What a browser reads over HTTP while it opens a workspace, before its socket has synced (speed
 * issue, gap 3); index.html asks for both before the bundle has even loaded:
 * - `GET /api/workspaces/:id/first-screen?cells=N`: the notebook's first cells as plain JSON
 *   (`readFirstScreen`), which the page shows at once;
 * - `GET /api/workspaces/:id/state`: the whole document as one Yjs update, which the session applies
 *   as soon as it exists, so the notebook is there without waiting for the socket's sync.
 * Both read the live document (loading it when nobody has it open; a first screen may come from
 * memory instead, see below) and keep it loaded a few seconds afterwards, so the socket that
 * follows joins it instead of loading it again.
 *
 * The encoded state of a large document is kept a while and sent again to the next people who
 * open it (a class opening the same workspace): encoding 15 MiB takes 200–300 ms. It is encoded in
 * parts a step per turn of the event loop (split-state.mjs `cutDocInSteps`, sent as the parts in
 * one byte string, `packStateParts`, which browsers unpack as they do stored parts), so nobody
 * else on the node waits for it; a document that changes meanwhile is sent as the parts were
 * written (every change after that comes with the socket's sync, which starts from the state
 * vector of what was applied), and the people asking at the same time share one encoding. It is
 * sent as it is while the document has not changed, and for `reuseMs` after it changed: what the
 * browser applies is then a moment old, and its socket's sync brings what changed
 * since (as it always did for changes made while the state was on its way). The state is sent
 * compressed when the browser accepts it (Brotli at its fastest: 15 MiB → ~2.3 MiB), which on a
 * real network is most of its time; a kept state keeps its compressed form too. A document loaded
 * from a stored snapshot alone starts with that snapshot as its kept state (`keepLoaded`): the first
 * person to open an idle workspace does not wait for it to be encoded again either.
 *
 * As a Hocuspocus extension it also remembers the first screen of each document as it unloads, with
 * the number of the last change stored then (bounded in size, oldest first), and forgets it once
 * the document has loaded again. The next first screen asked for while the document is not loaded
 * is answered from memory, at once, while nothing was stored after that change (changes are
 * numbered in order, and folding the log into the snapshot keeps the number): it no longer waits
 * for the whole document to load (about 1 s for 10,000 cells). A read that must load the document
 * first lets the event loop turn once, so that a first screen asked for at the same moment is
 * answered before the load holds the loop. Only on one node (`storedHead` null with several:
 * another node may write a workspace this one does not hold).
 *
 * Likewise the state of a large document nobody has open is sent straight from storage when what
 * is stored is one collected snapshot this process has checked (`storedState`: no log on top), and
 * the document loads once it is sent: the browser applies the state while the server loads, instead
 * of after (10,000 cells: the socket synced in 0.62–0.88× the time, bench/state-from-idle.ts).
 * Effects: loads documents (reads only), timers, storage reads (the number of the last change, a
 * stored snapshot).
 */
import type { Extension, Hocuspocus, afterLoadDocumentPayload, beforeUnloadDocumentPayload } from '@hocuspocus/server';
import * as Y from 'yjs';
import { FIRST_SCREEN_DEFAULTS, FIRST_SCREEN_MAX_CELLS, readFirstScreen, type FirstScreen } from '@plexus/shared';
import { packStateParts } from '@plexus/shared/state-parts';
import { PART_STRUCTS, cutDocInSteps } from '../store/split-state.mjs';
import type { Awaitable } from '../store/storage.ts';
import type { Logger } from '../log.ts';
import { bestCoding, compress, type Coding } from './content-coding.ts';

/** States smaller than this are sent as they are (compressing them saves nothing noticeable). */
const COMPRESS_MIN_BYTES = 1024;

type Direct = Awaited<ReturnType<Hocuspocus['openDirectConnection']>>;

/** How long a document read while opening stays loaded for the socket that follows. */
export const OPENING_LINGER_MS = 5000;

/** How encoded states are kept (see the header). */
export interface StateReuse {
  /** After the document changed, the kept state is still sent for this long (ms). */
  reuseMs: number;
  /** A kept state is dropped this long after it was encoded (ms). */
  keepMs: number;
  /** States smaller than this are encoded for every request (cheap), not kept (bytes). */
  minBytes: number;
  /** All kept states together stay under this; the oldest go first (bytes). */
  maxBytes: number;
  now: () => number;
}

export const STATE_REUSE: StateReuse = { reuseMs: 10_000, keepMs: 60_000, minBytes: 256 * 1024, maxBytes: 256 * 1024 * 1024, now: () => Date.now() };

/** All remembered first screens together stay under this many characters of JSON (the oldest go first). */
export const REMEMBERED_SCREENS_MAX_CHARS = 32 * 1024 * 1024;

export interface OpeningReadsOptions {
  /** How long a document read while opening stays loaded (ms). */
  lingerMs?: number;
  reuse?: StateReuse;
  /**
   * The number of the last change stored for a workspace, in its log or folded into its snapshot
   * (storage.ts `logHead`): a remembered first screen is sent while it is what it was at the
   * unload. Null: first screens are not remembered (several nodes).
   */
  storedHead?: ((ws: string) => Awaitable<number>) | null;
  rememberedMaxChars?: number;
  /**
   * The whole stored state of a workspace when it can be sent without loading the document
   * (persistence `collectedSnapshot`), or null. Null: states are always read from the loaded
   * document (several nodes).
   */
  storedState?: ((ws: string) => Awaitable<Uint8Array | null>) | null;
  /** Structs per part when a large document's state is encoded a step per turn (default PART_STRUCTS; 0: in one turn). */
  partStructs?: number;
}

interface KeptState {
  doc: Y.Doc;
  bytes: Uint8Array;
  /** The same, compressed, once asked for (per coding). */
  compressed: Map<Coding, Promise<Buffer>>;
  changedAt: number | null;
  drop: () => void;
}

/** Whether a transaction changed the document (a type, or a deletion). */
const changes = (tr: Y.Transaction): boolean => tr.changed.size > 0 || tr.deleteSet.clients.size > 0;

export class OpeningReads implements Extension {
  extensionName = 'plexus-opening-reads';
  private readonly held = new Map<Direct, ReturnType<typeof setTimeout>>();
  private readonly kept = new Map<string, KeptState>();
  private keptBytes = 0;
  /** First screens of unloaded documents (as many cells as one may hold), with their size in characters of JSON. */
  private readonly screens = new Map<string, { screen: FirstScreen; chars: number; head: number }>();
  private screenChars = 0;
  /** States being encoded in parts now, by workspace: people opening one workspace at once share them. */
  private readonly encoding = new Map<string, { doc: Y.Doc; bytes: Promise<Uint8Array> }>();
  /** Stored states being read and compressed now, by workspace and coding: people opening one idle workspace at once share them. */
  private readonly storedSends = new Map<string, Promise<{ body: Uint8Array; coding: Coding | null } | null>>();
  private closed = false;
  private readonly lingerMs: number;
  private readonly reuse: StateReuse;
  /** States encoded and sent again, first screens answered from memory (tests, metrics). */
  readonly stats = { stateEncoded: 0, stateReused: 0, stateFromStorage: 0, stateStored: 0, screensRemembered: 0 };

  constructor(
    private readonly hocuspocus: () => Hocuspocus,
    private readonly log: Logger,
    private readonly opts: OpeningReadsOptions = {},
  ) {
    this.lingerMs = opts.lingerMs ?? OPENING_LINGER_MS;
    this.reuse = opts.reuse ?? STATE_REUSE;
  }

  /** The first screen of workspace `id`, or null when its document cannot be loaded (the socket says why) or the server is closing. */
  async firstScreen(id: string, cells: number): Promise<FirstScreen | null> {
    const n = Math.max(1, Math.min(FIRST_SCREEN_MAX_CELLS, cells || FIRST_SCREEN_DEFAULTS.cells));
    const remembered = await this.rememberedScreen(id);
    if (remembered) return { total: remembered.total, cells: remembered.cells.slice(0, n) };
    return this.read(id, (doc) => readFirstScreen(doc, { cells: n }));
  }

  /** The first screen remembered at the unload of `id`, while nothing was written since (see the header). */
  private async rememberedScreen(id: string): Promise<FirstScreen | null> {
    const entry = this.screens.get(id);
    if (!entry || this.closed || !this.opts.storedHead || this.hocuspocus().documents.has(id)) return null;
    let head: number;
    try {
      head = await this.opts.storedHead(id);
    } catch {
      return null; // unknown or unreadable: the document's load decides
    }
    // Written since, or loaded meanwhile (the entry is gone then): the live document answers.
    if (head !== entry.head || this.screens.get(id) !== entry || this.hocuspocus().documents.has(id)) return null;
    this.stats.screensRemembered++;
    return entry.screen;
  }

  /**
   * Hocuspocus: a document has loaded; from now on it answers (and will change). While it loaded,
   * its stored state was what the remembered screen shows: that is still sent meanwhile.
   */
  async afterLoadDocument({ documentName }: afterLoadDocumentPayload): Promise<void> {
    this.forget(documentName);
  }

  /** Hocuspocus: a document unloads (every hook before this one agreed): its first screen is remembered. */
  async beforeUnloadDocument({ documentName, document, instance }: beforeUnloadDocumentPayload): Promise<void> {
    // (A late unload of a copy already replaced by a new load: persistence refuses it.)
    if (!this.opts.storedHead || this.closed || instance.documents.get(documentName) !== document) return;
    this.forget(documentName);
    // Only an optimisation: whatever goes wrong here must not keep the document from unloading.
    try {
      const head = await this.opts.storedHead(documentName); // everything up to it is in `document`
      // Through JSON: flat strings (a cut source would otherwise keep the whole source alive).
      const json = JSON.stringify(readFirstScreen(document, { cells: FIRST_SCREEN_MAX_CELLS }));
      const max = this.opts.rememberedMaxChars ?? REMEMBERED_SCREENS_MAX_CHARS;
      if (json.length > max) return;
      for (const old of [...this.screens.keys()]) {
        if (this.screenChars + json.length <= max) break;
        this.forget(old);
      }
      this.screens.set(documentName, { screen: JSON.parse(json) as FirstScreen, chars: json.length, head });
      this.screenChars += json.length;
    } catch (e) {
      this.log.debug('opening read: the first screen was not remembered', { ws: documentName, error: (e as Error).message });
    }
  }

  /** Forgets the remembered first screen of `id` (its stored state changed without a load: recovery). */
  forget(id: string): void {
    const entry = this.screens.get(id);
    if (!entry) return;
    this.screens.delete(id);
    this.screenChars -= entry.chars;
  }

  /** The whole document of workspace `id` as one update (a large one in parts: `packStateParts`), or null as for `firstScreen`. */
  state(id: string): Promise<Uint8Array | null> {
    return this.read(id, (doc) => this.encoded(id, doc));
  }

  /**
   * The state as the response body for a request accepting `accepted` codings: compressed with
   * the best of them (on zlib's thread pool; kept with a kept state), or as it is. A large document
   * that nobody has open is sent straight from storage when its stored state is one collected
   * snapshot (`storedState`), without waiting for its load: `sent`, called once the body has been
   * handed over, then loads it for the socket that follows (the browser applies the state
   * meanwhile, instead of after it).
   */
  async stateFor(id: string, accepted: ReadonlySet<string>): Promise<{ body: Uint8Array; coding: Coding | null; sent?: () => void } | null> {
    const key = `${id} ${bestCoding(accepted) ?? ''}`;
    let sending = this.storedSends.get(key);
    if (!sending) {
      sending = this.storedState(id).then((stored) => stored && this.packed(id, stored, accepted, undefined));
      this.storedSends.set(key, sending);
      // Only while in flight: a request after it reads storage (or the loaded document) itself.
      const done = () => void this.storedSends.delete(key);
      sending.then(done, done);
    }
    const stored = await sending;
    if (stored) return { ...stored, sent: () => void this.read(id, () => null) };
    let kept: KeptState | undefined;
    const raw = await this.read(id, async (doc) => {
      const bytes = await this.encoded(id, doc);
      kept = this.kept.get(id)?.bytes === bytes ? this.kept.get(id) : undefined;
      return bytes;
    });
    return raw && this.packed(id, raw, accepted, kept);
  }

  /** `raw`, compressed as `accepted` allows (remembered with `kept`), or as it is. */
  private async packed(id: string, raw: Uint8Array, accepted: ReadonlySet<string>, kept: KeptState | undefined): Promise<{ body: Uint8Array; coding: Coding | null }> {
    const coding = raw.byteLength >= COMPRESS_MIN_BYTES ? bestCoding(accepted) : null;
    if (!coding) return { body: raw, coding: null };
    let packed = kept?.compressed.get(coding);
    if (!packed) {
      packed = compress(raw, coding);
      kept?.compressed.set(coding, packed);
    }
    try {
      return { body: await packed, coding };
    } catch (e) {
      this.log.warn('opening read: the state could not be compressed; sent as it is', { ws: id, error: (e as Error).message });
      kept?.compressed.delete(coding);
      return { body: raw, coding: null };
    }
  }

  /** The stored state of `id` when it may be sent without a load (see `stateFor`), else null. */
  private async storedState(id: string): Promise<Uint8Array | null> {
    if (this.closed || !this.opts.storedState || this.hocuspocus().documents.has(id)) return null;
    try {
      const bytes = await this.opts.storedState(id);
      // A small document loads fast; one loaded meanwhile answers itself (it may have changed).
      if (!bytes || bytes.byteLength < this.reuse.minBytes || this.hocuspocus().documents.has(id)) return null;
      this.stats.stateStored++;
      return bytes;
    } catch (e) {
      this.log.debug('opening read: the stored state was not read; the document loads', { ws: id, error: (e as Error).message });
      return null;
    }
  }

  private async encoded(id: string, doc: Y.Doc): Promise<Uint8Array> {
    const k = this.kept.get(id);
    const now = this.reuse.now();
    if (k && k.doc === doc && (k.changedAt === null || now - k.changedAt <= this.reuse.reuseMs)) {
      this.stats.stateReused++;
      return k.bytes;
    }
    const running = this.encoding.get(id);
    if (running?.doc === doc) return running.bytes;
    k?.drop();
    const cut = cutDocInSteps(doc, this.opts.partStructs ?? PART_STRUCTS);
    if (!cut) {
      const bytes = Y.encodeStateAsUpdate(doc);
      this.stats.stateEncoded++;
      this.keep(id, doc, bytes, null);
      return bytes;
    }
    // A large document: a step per turn. What changes meanwhile makes the kept state a moment old from then on.
    let changedAt: number | null = null;
    const onChange = (tr: Y.Transaction) => {
      if (changedAt === null && changes(tr)) changedAt = this.reuse.now();
    };
    doc.on('afterTransaction', onChange);
    // Registered before it starts, so that its end (even a failure in its first step) removes it.
    const job: { doc: Y.Doc; bytes: Promise<Uint8Array> } = { doc, bytes: Promise.resolve(new Uint8Array()) };
    this.encoding.set(id, job);
    job.bytes = (async () => {
      try {
        const parts: Uint8Array[] = [];
        for (let step = cut.next(); !step.done; step = cut.next()) {
          if (step.value) parts.push(step.value);
          await new Promise<void>((resolve) => setImmediate(resolve));
          if (this.closed) throw new Error('the server is closing');
        }
        const packed = packStateParts(parts);
        this.stats.stateEncoded++;
        // Not kept when it could not be sent again anyway (changed longer ago than reuseMs).
        if (changedAt === null || this.reuse.now() - changedAt <= this.reuse.reuseMs) this.keep(id, doc, packed, changedAt);
        return packed;
      } finally {
        doc.off('afterTransaction', onChange);
        if (this.encoding.get(id) === job) this.encoding.delete(id);
      }
    })();
    return job.bytes;
  }

  /**
   * `state` encodes `doc` as it was just loaded (the stored snapshot it was loaded from): kept as if
   * it had been encoded now, when it is of a size worth keeping.
   */
  keepLoaded(id: string, doc: Y.Doc, state: Uint8Array): void {
    if (!this.worthKeeping(state)) return;
    this.kept.get(id)?.drop();
    this.keep(id, doc, state, null);
    this.stats.stateFromStorage++;
  }

  /** A state of a size worth keeping, while not closing. */
  private worthKeeping(bytes: Uint8Array): boolean {
    return !this.closed && bytes.byteLength >= this.reuse.minBytes && bytes.byteLength <= this.reuse.maxBytes;
  }

  /** Keeps `bytes` as the state of `doc` when worth it; `changedAt`: the document changed since they were written (then). */
  private keep(id: string, doc: Y.Doc, bytes: Uint8Array, changedAt: number | null): void {
    if (!this.worthKeeping(bytes)) return;
    // The oldest first (a Map keeps insertion order) until this one fits.
    for (const old of this.kept.values()) {
      if (this.keptBytes + bytes.byteLength <= this.reuse.maxBytes) break;
      old.drop();
    }
    const entry: KeptState = { doc, bytes, compressed: new Map(), changedAt, drop: () => {} };
    const onChange = (tr: Y.Transaction) => {
      if (entry.changedAt === null && changes(tr)) entry.changedAt = this.reuse.now();
    };
    const expiry = setTimeout(() => entry.drop(), this.reuse.keepMs);
    expiry.unref();
    entry.drop = () => {
      if (this.kept.get(id) !== entry) return;
      this.kept.delete(id);
      this.keptBytes -= bytes.byteLength;
      clearTimeout(expiry);
      doc.off('afterTransaction', onChange);
      doc.off('destroy', entry.drop);
    };
    doc.on('afterTransaction', onChange);
    // Unloaded: a later load is a new document (and nothing should keep this one alive).
    doc.on('destroy', entry.drop);
    this.kept.set(id, entry);
    this.keptBytes += bytes.byteLength;
  }

  private async read<T>(id: string, f: (doc: Y.Doc) => T | Promise<T>): Promise<T | null> {
    if (this.closed) return null;
    // A load holds the event loop (about 1 s for 10,000 cells): a first screen asked for at the
    // same moment, which may be answered from memory, goes first.
    if (!this.hocuspocus().documents.has(id)) await new Promise((resolve) => setImmediate(resolve));
    let conn: Direct;
    try {
      conn = await this.hocuspocus().openDirectConnection(id, { openingRead: true });
    } catch (e) {
      this.log.debug('opening read: the document did not load', { ws: id, error: (e as Error).message });
      return null;
    }
    try {
      return conn.document ? await f(conn.document) : null;
    } catch (e) {
      if (this.closed) return null; // an encode stopped by `close`
      throw e;
    } finally {
      this.linger(conn);
    }
  }

  private linger(conn: Direct): void {
    if (this.closed) {
      const gone = conn.disconnect().finally(() => this.disconnecting.delete(gone));
      this.disconnecting.add(gone);
      return;
    }
    const t = setTimeout(() => {
      this.held.delete(conn);
      void conn.disconnect();
    }, this.lingerMs);
    t.unref();
    this.held.set(conn, t);
  }

  /** Direct connections let go after `close` began (reads that ended since): `close` waits for them. */
  private readonly disconnecting = new Set<Promise<unknown>>();

  /** Lets every held document go (drain, shutdown: before documents are flushed). */
  async close(): Promise<void> {
    this.closed = true;
    // Encodes in progress stop at their next step; their reads then let their documents go.
    await Promise.allSettled([...this.encoding.values()].map((j) => j.bytes));
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (const k of [...this.kept.values()]) k.drop();
    this.screens.clear();
    this.screenChars = 0;
    const conns = [...this.held.keys()];
    for (const t of this.held.values()) clearTimeout(t);
    this.held.clear();
    await Promise.all(conns.map((c) => c.disconnect()));
    await Promise.all([...this.disconnecting]);
  }
}
