/**
 * Atomic application of untrusted updates. `Y.applyUpdate` is not atomic, and an update can decode
 * completely (`Y.decodeUpdate`) yet still throw halfway through integration (a mutated struct whose
 * parent or origin resolves to the wrong kind of item), leaving the document half-changed — and,
 * once logged, making the workspace fail to load. So every incoming update is first applied to a
 * shadow replica kept identical to the live document; only if that succeeds is it logged and
 * applied to the live document, where it then cannot fail (same state, same update: Yjs is
 * deterministic). A failed shadow is rebuilt from the live document.
 * Costs: one more replica per loaded workspace (memory about x2) and one more apply per update.
 * Effects: keeps replicas in memory.
 */
import * as Y from 'yjs';
import { CloseCodes } from '@plexus/shared';
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
  check(name: string, update: Uint8Array): void {
    const e = this.entries.get(name);
    if (!e) return;
    if (!e.shadow) e.shadow = this.build(e.live);
    try {
      Y.applyUpdate(e.shadow, update, SHADOW);
    } catch (err) {
      e.shadow.destroy();
      e.shadow = null;
      throw new ProtocolError(CloseCodes.MalformedMessage, `update does not apply (${(err as Error).message})`);
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
