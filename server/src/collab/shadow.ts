/**
 * Atomic, schema-checked application of untrusted updates. `Y.applyUpdate` is not atomic, and an
 * update can decode completely (`Y.decodeUpdate`) yet still throw halfway through integration (a
 * mutated struct whose parent or origin resolves to the wrong kind of item), leaving the document
 * half-changed — and, once logged, making the workspace fail to load. An update that breaks the
 * document schema or the sender's rights (shared doc-schema), or that depends on changes the
 * server does not have (it would wait in Yjs' pending queue and be applied later, under someone
 * else's rights), must be refused before anything is stored or relayed.
 *
 * Three ways to decide, each only when the one before cannot:
 * - **The pre-check** (shared `precheckUpdate`): reads the decoded update against the live
 *   document and accepts it when it can show that Yjs integrates all of it and that what it does
 *   keeps the rules. Every update of a writer working alone takes this way (typing, cells, chat,
 *   runs, outputs): no second replica, no second apply.
 * - **Nothing new**: an update whose every struct and deletion the live document has already
 *   changes nothing when applied: accepted as it is (`update-known.ts`). Stock providers send such
 *   updates: the sync step 2 a provider answers with, computed from the server's state vector
 *   while its own last updates were still on their way, repeats them (the agent's peer did so as
 *   it joined for each run). Before, such an update went to the shadow, which had to be built for
 *   it: 50–70 ms of the event loop for a workspace with a long history, a keystroke stall for
 *   everyone on the node (speed issue, gap 1).
 * - **The shadow replica**: the update is applied to a replica identical to the live document and
 *   what it did there is checked (`checkTransaction`); only if that succeeds is it logged and
 *   applied to the live document, where it then cannot fail (same state, same update: Yjs is
 *   deterministic). It decides what the pre-check leaves to it — concurrent map writes, edits
 *   inside what someone else deleted meanwhile, anything unusual, and every refusal, so refusals
 *   read as before. The replica is built from the live document when needed, kept in step for the
 *   next `KEEP_SHADOW` accepted updates (a burst of such updates, e.g. a reconnect, builds it
 *   once), then dropped.
 *
 * With asynchronous storage (Postgres) an update is applied to the live document only after its
 * append resolves, so the next one may depend on one the live document does not have yet: there
 * the shadow is kept all the time and every update goes through it, as it holds them all. For a
 * document loaded from a snapshot stored in parts it is built from those parts, a part per turn of
 * the event loop, while updates wait for it (`attach` with `stored`).
 *
 * A shadow of a large document is never built in one turn: applying a 10,000-cell document's
 * whole state held the event loop — every workspace of the node — for 0.4–0.6 s, and it happened
 * for any update the pre-check could not decide (two people writing one map key at once) and after
 * every refusal (a hostile or broken client, reconnecting and sending its update again, could
 * stall the node once a second). It is cut from the live document into parts a step per turn
 * (split-state.mjs `cutDocInSteps`: each part written from the document as it is when it is
 * applied, so edits meanwhile lose nothing) and applied a part per turn; the update that asked for
 * it waits (`check` returns a promise: ask again), and so does every update that needs it
 * meanwhile, while updates the pre-check accepts go on and are mirrored into it. At the end it
 * must hold what the live document holds, or it is built again at once. A document of one part is
 * built at once, as before.
 * Effects: keeps replicas in memory while they are needed.
 */
import * as Y from 'yjs';
import { CloseCodes, checkTransaction, decodeForPrecheck, precheckUpdate, type DecodedUpdate, type Violation, type Writer } from '@plexus/shared';
import { ProtocolError } from './errors.ts';
import { documentHasUpdate } from './update-known.ts';
import { PART_STRUCTS, cutDocInSteps } from '../store/split-state.mjs';

/** Accepted updates after the shadow's last use during which it is kept (and mirrored) before it is dropped. */
export const KEEP_SHADOW = 256;

/** How incoming updates were decided (for /metrics). */
export interface ValidationStats {
  /** Accepted by the pre-check. */
  precheck: number;
  /** Decided on the shadow replica (accepted or refused). */
  shadow: number;
  /** Shadow replicas built (from a live document, or from the stored parts it was loaded from). */
  shadowsBuilt: number;
  /** Accepted as nothing new: the live document had all of the update already. */
  known: number;
}

/** Origin of updates already applied to the shadow (so the mirror skips them). */
const SHADOW = Symbol('shadow-validated');

interface Entry {
  live: Y.Doc;
  shadow: Y.Doc | null;
  mirror: (u: Uint8Array, origin: unknown) => void;
  /** Live-document origins whose updates were validated (and given to the shadow) already. */
  validated: (origin: unknown) => boolean;
  /** The pre-check may decide (synchronous appends). */
  precheck: boolean;
  /** Accepted updates left before an unused shadow is dropped. */
  keep: number;
  /**
   * While the shadow is built a part per turn of the event loop (from a load's stored parts,
   * `attach` with `stored`, or cut from the live document, `buildFor`): resolves once it holds
   * what the live document holds (or the build was given up: it is then built again). Null otherwise.
   */
  building: Promise<void> | null;
  /** The last build in parts was given up: the next one is built at once. */
  gaveUp: boolean;
  /**
   * Every update the live document gets is mirrored, checked here or not: from the start of a build
   * until a turn after its end. Updates accepted before or while it is built (by the pre-check, or
   * re-checked together when a build ends) may reach the live document only then; mirrored again
   * when the shadow has them already, they change nothing.
   */
  mirrorAll: boolean;
}

export class ShadowValidator {
  private readonly entries = new Map<string, Entry>();
  readonly stats: ValidationStats = { precheck: 0, shadow: 0, shadowsBuilt: 0, known: 0 };

  /**
   * Starts validating updates for a loaded document. `validated` tells which live origins need no
   * mirroring (they were checked here). `precheck` is for documents whose accepted updates reach
   * the live document in the turn they were checked (synchronous appends).
   */
  attach(name: string, live: Y.Doc, validated: (origin: unknown) => boolean, precheck: boolean, stored?: readonly Uint8Array[]): void {
    const entry: Entry = {
      live,
      shadow: null,
      validated,
      precheck,
      keep: 0,
      building: null,
      gaveUp: false,
      mirrorAll: false,
      mirror: (u, origin) => {
        if (!entry.shadow || (validated(origin) && !entry.mirrorAll)) return;
        try {
          Y.applyUpdate(entry.shadow, u, SHADOW);
        } catch {
          entry.shadow = null; // rebuilt from the live document on next use
        }
      },
    };
    live.on('update', entry.mirror);
    this.entries.set(name, entry);
    // Every update needs the shadow here, and the document was loaded from a snapshot stored in
    // parts (a large one): build the shadow from those parts, a part per turn of the event loop,
    // as the load applied them — building it from the live document is one encode and one apply
    // of the whole state in one turn (10,000 cells: about a second during which the node relays
    // nothing, speed issue gap 1). It exists from now on, so that whatever the live document gets
    // meanwhile is mirrored into it (waiting in Yjs' pending queue for the parts it builds on).
    if (!precheck && stored && stored.length > 1) this.startBuild(entry, stored);
  }

  /** Parts of this many structs when a shadow is cut from the live document (the stores' snapshot parts, split-state.mjs). */
  constructor(private readonly partStructs = PART_STRUCTS) {}

  /** Builds `e`'s shadow from `parts`, a part (or a step of cutting one, null) per turn (`building` until it is done). */
  private startBuild(e: Entry, parts: Iterable<Uint8Array | null> | Iterator<Uint8Array | null, void>): Promise<void> {
    e.shadow = new Y.Doc({ gc: e.live.gc, guid: e.live.guid });
    e.mirrorAll = true;
    const build: Promise<void> = this.buildInTurns(e, e.shadow, parts).finally(() => {
      if (e.building !== build) return;
      e.building = null;
      e.keep = KEEP_SHADOW;
      this.settle(e);
    });
    e.building = build;
    return build;
  }

  /** Mirrors every update for one more turn after a build (`mirrorAll`), unless another starts. */
  private settle(e: Entry): void {
    setImmediate(() => {
      if (!e.building) e.mirrorAll = false;
    });
  }

  /**
   * Makes sure `e` has a shadow: built at once when the live document is one part, else started a
   * part per turn from the live document cut into parts; then the promise that it is ready.
   */
  private buildFor(e: Entry): Promise<void> | null {
    if (e.shadow) return e.building;
    // After a build in parts was given up, the next is built at once (nothing can keep failing).
    const parts = e.gaveUp ? null : cutDocInSteps(e.live, this.partStructs);
    e.gaveUp = false;
    if (!parts) {
      e.shadow = this.build(e.live);
      e.mirrorAll = true;
      this.settle(e);
      return null;
    }
    return this.startBuild(e, parts);
  }

  /** Builds the shadow where every update needs it (right after load, off the first keystroke's path; a large document a part per turn). */
  prepare(name: string): void {
    const e = this.entries.get(name);
    if (e && !e.shadow && !e.precheck) void this.buildFor(e);
  }

  private async buildInTurns(e: Entry, shadow: Y.Doc, source: Iterable<Uint8Array | null> | Iterator<Uint8Array | null, void>): Promise<void> {
    this.stats.shadowsBuilt++;
    const parts = Symbol.iterator in source ? source[Symbol.iterator]() : source;
    try {
      for (;;) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (e.shadow !== shadow) return; // dropped, invalidated or detached meanwhile
        // The next part: stored, or cut from the live document now (a step of cutting it: null).
        const next = parts.next();
        if (next.done) break;
        if (next.value) Y.applyUpdate(shadow, next.value, SHADOW);
      }
      // It holds what the live document holds: the parts (stored, or cut from the live document)
      // and every change mirrored since. Anything else (a part that no longer applies here, an
      // update that reached the live document unmirrored) gives it up.
      if (shadow.store.pendingStructs || shadow.store.pendingDs || !sameStateVector(shadow, e.live)) throw new Error('the shadow built in parts differs from the live document');
    } catch {
      if (e.shadow === shadow) {
        e.shadow = null; // built from the live document on next use, at once
        e.gaveUp = true;
      }
      shadow.destroy();
    }
  }

  private build(live: Y.Doc): Y.Doc {
    this.stats.shadowsBuilt++;
    const shadow = new Y.Doc({ gc: live.gc, guid: live.guid });
    Y.applyUpdate(shadow, Y.encodeStateAsUpdate(live), SHADOW);
    return shadow;
  }

  /** Whether a shadow replica is held for `name` (tests, memory figures). */
  hasShadow(name: string): boolean {
    return !!this.entries.get(name)?.shadow;
  }

  /**
   * Decides whether `update` may be applied, by the pre-check or on the shadow; throws
   * ProtocolError (MalformedMessage, SchemaViolation) if not. Call before logging and applying it
   * to the live document. False when it brings nothing new: there is nothing to log then (and a
   * repeat whose contents differ from what the document holds under those ids, which Yjs skips,
   * is not kept either). A promise when it needs the shadow and that is being built a part per
   * turn (it started now, or `building` was not waited for): ask again once it resolves.
   */
  check(name: string, update: Uint8Array, writer: Writer): boolean | Promise<void> {
    const e = this.entries.get(name);
    if (!e) return true;
    if (e.precheck && this.prechecked(e, update, writer)) return true;
    // Nothing new to the live document — or, with synchronous appends, to a shadow that has it all
    // (it holds only accepted updates, already logged then: the same update sent twice while a build
    // made both wait is logged once).
    if (this.nothingNew(e.live, update) || (e.precheck && e.shadow && !e.building && this.nothingNew(e.shadow, update))) {
      this.stats.known++;
      return false;
    }
    const ready = this.buildFor(e);
    if (ready) return ready;
    this.stats.shadow++;
    e.keep = KEEP_SHADOW;
    const shadow = e.shadow!;
    let violations: Violation[] = [];
    const onTransaction = (tr: Y.Transaction) => {
      if (tr.origin === SHADOW) violations = violations.concat(checkTransaction(tr, writer));
    };
    shadow.on('afterTransaction', onTransaction);
    let refusal: ProtocolError | null = null;
    try {
      Y.applyUpdate(shadow, update, SHADOW);
      if (violations.length) refusal = new ProtocolError(CloseCodes.SchemaViolation, violations.slice(0, 3).map((v) => `${v.path}: ${v.problem}`).join('; '));
      else if (shadow.store.pendingStructs || shadow.store.pendingDs)
        refusal = new ProtocolError(CloseCodes.MalformedMessage, 'update depends on changes this server does not have');
    } catch (err) {
      refusal = new ProtocolError(CloseCodes.MalformedMessage, `update does not apply (${(err as Error).message})`);
    } finally {
      shadow.off('afterTransaction', onTransaction);
    }
    if (refusal) {
      shadow.destroy();
      e.shadow = null;
      throw refusal;
    }
    return true;
  }

  /** The live document has every struct and deletion of `update` (false for one that does not decode: the shadow says why). */
  private nothingNew(live: Y.Doc, update: Uint8Array): boolean {
    try {
      return documentHasUpdate(live, update);
    } catch {
      return false;
    }
  }

  /** True when the pre-check accepts `update`; keeps a shadow in step, or drops it once unused for long. */
  private prechecked(e: Entry, update: Uint8Array, writer: Writer): boolean {
    let decoded: DecodedUpdate;
    try {
      decoded = decodeForPrecheck(update);
    } catch {
      return false; // the shadow says why
    }
    if (!precheckUpdate(e.live, decoded, writer).ok) return false;
    this.stats.precheck++;
    if (e.shadow) {
      if (!e.building && --e.keep <= 0) this.drop(e);
      else {
        try {
          // The live document's copy is not mirrored (validated) — except while the shadow is
          // built, when this apply may wait in its pending queue and the mirrored one is a no-op.
          Y.applyUpdate(e.shadow, update, SHADOW);
        } catch {
          this.drop(e);
        }
      }
    }
    return true;
  }

  private drop(e: Entry): void {
    e.shadow?.destroy();
    e.shadow = null;
  }

  /**
   * The shadow may be ahead of the live document (an update validated but then not applied). Not a
   * shadow being built where nothing but the live document's own updates goes into it (no
   * pre-check: updates wait for it): the update was checked on the one before.
   */
  invalidate(name: string): void {
    const e = this.entries.get(name);
    if (e?.building && !e.precheck) return;
    if (e?.shadow) {
      e.shadow.destroy();
      e.shadow = null;
    }
  }

  detach(name: string): void {
    const e = this.entries.get(name);
    if (!e) return;
    e.live.off('update', e.mirror);
    e.shadow?.destroy();
    e.shadow = null;
    this.entries.delete(name);
  }
}

/** Whether two documents have seen the same structs (state vectors equal; Yjs writes them sorted by client). */
function sameStateVector(a: Y.Doc, b: Y.Doc): boolean {
  const x = Y.encodeStateVector(a);
  const y = Y.encodeStateVector(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}
