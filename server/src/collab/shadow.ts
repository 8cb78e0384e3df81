/**
 * Atomic, schema-checked application of untrusted updates. `Y.applyUpdate` is not atomic, and an update can decode
 * completely (`Y.decodeUpdate`) yet still throw halfway through integration (a mutated struct whose
 * parent or origin resolves to the wrong kind of item), leaving the document half-changed — and,
 * once logged, making the workspace fail to load. So every incoming update is first applied to a
 * shadow replica kept identical to the live document; only if that succeeds is it logged and
 * applied to the live document, where it then cannot fail (same state, same update: Yjs is
 * deterministic). A failed shadow is rebuilt from the live document.
 * The shadow is also where the document schema is enforced: what the update did there (the items
 * it added and deleted) is checked against the schema and the sender's rights (shared
 * doc-schema); an update that breaks a rule, or that depends on changes the server does not have
 * (it would wait in Yjs' pending queue and be applied later, under someone else's rights), is
 * refused, and the shadow rebuilt, before anything is stored or relayed.
 * Costs: one more replica per loaded workspace (memory about x2) and one more apply per update.
 * Effects: keeps replicas in memory.
 */
import * as Y from 'yjs';
import { CloseCodes, checkTransaction, type Violation, type Writer } from '@plexus/shared';
import { ProtocolError } from './errors.ts';

/** Origin of updates already applied to the shadow (so the mirror skips them). */
const SHADOW = Symbol('shadow-validated');

interface Entry {
  live: Y.Doc;
  shadow: Y.Doc | null;
  mirror: (u: Uint8Array, origin: unknown) => void;
  /** Live-document origins whose updates were validated on the shadow already. */
  validated: (origin: unknown) => boolean;
}

export class ShadowValidator {
  private readonly entries = new Map<string, Entry>();

  /** Starts shadowing a loaded document. `validated` tells which live origins need no mirroring. */
  attach(name: string, live: Y.Doc, validated: (origin: unknown) => boolean): void {
    const entry: Entry = {
      live,
      shadow: null,
      validated,
      mirror: (u, origin) => {
        if (!entry.shadow || validated(origin)) return;
        try {
          Y.applyUpdate(entry.shadow, u, SHADOW);
        } catch {
          entry.shadow = null; // rebuilt from the live document on next use
        }
      },
    };
    live.on('update', entry.mirror);
    this.entries.set(name, entry);
  }

  /** Builds the shadow now (e.g. right after load, off the first keystroke's path). */
  prepare(name: string): void {
    const e = this.entries.get(name);
    if (e && !e.shadow) e.shadow = this.build(e.live);
  }

  private build(live: Y.Doc): Y.Doc {
    const shadow = new Y.Doc({ gc: live.gc, guid: live.guid });
    Y.applyUpdate(shadow, Y.encodeStateAsUpdate(live), SHADOW);
    return shadow;
  }

  /**
   * Applies `update` to the shadow; throws ProtocolError(MalformedMessage) if it cannot be applied
   * atomically there. Call before logging and applying it to the live document.
   */
  check(name: string, update: Uint8Array, writer: Writer): void {
    const e = this.entries.get(name);
    if (!e) return;
    if (!e.shadow) e.shadow = this.build(e.live);
    const shadow = e.shadow;
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
  }

  /** The shadow may be ahead of the live document (an update validated but then not applied). */
  invalidate(name: string): void {
    const e = this.entries.get(name);
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
    this.entries.delete(name);
  }
}
