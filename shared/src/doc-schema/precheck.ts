/**
 * Checks a decoded update against a live document *before* it is applied: that Yjs will integrate
 * it completely, without throwing halfway and without leaving anything pending, and that what it
 * does keeps to the document schema with the writer's rights (the same rules as `checkTransaction`,
 * rules.ts).
 *
 * It never refuses on its own: `ok: false` means "decide the slow way". It handles the shapes
 * real clients send — one section per client, whose new items are appended after the document's
 * state for that client, each placed next to items the document has (or next to earlier items of
 * the same update), with the kinds of content the schema knows; map writes that win; deletions of
 * items the document has, or of whole new items — and answers `{ ok: false, reason }` for anything
 * else: a gap or an overlap with the document's state, a client in several sections, a reference
 * across clients inside the update, neighbours in different places, a map write that might lose
 * to a concurrent one (or is itself deleted), part of a new item deleted, a broken rule. The
 * caller then decides the slow way (server/src/collab/shadow.ts applies the update to a scratch
 * replica and runs `checkTransaction` there), so a refusal's wording and every borderline case
 * stay exactly as they were; this module only saves that replica and the second apply for the
 * common case. Where being exact would be complex it is stricter than the replica and lets the
 * slow way decide (e.g. it checks items added to a container the same update deletes, which end
 * up invisible). Neighbours that are garbage, and parents that hold no type, are followed exactly:
 * Yjs turns such an item into garbage.
 *
 * Why each condition keeps integration from throwing is written where it is checked (Yjs 13.6:
 * `Item.getMissing`, `Item.integrate`, `addStruct`, `readAndApplyDeleteSet`). Reads Yjs internals
 * (struct store, `_item`, `_map`). Pure module.
 */
import * as decoding from 'lib0/decoding';
import * as Y from 'yjs';
import type { DocSchema, Writer } from './spec.ts';
import { WORKSPACE_SCHEMA } from './workspace-schema.ts';
import { PlaceResolver, asType, type Reporter, checkAddition, checkRemoval, checkRequired, childPlace, richDepth, type AnyType, type NewRecord, type Place } from './rules.ts';

export type Precheck = { ok: true } | { ok: false; reason: string };

/** What `Y.decodeUpdate` returns (its delete set: client → deleted ranges), and how many client sections the update has. */
export interface DecodedUpdate {
  structs: Array<Y.Item | Y.GC | Y.Skip>;
  ds: { clients: Map<number, Array<{ clock: number; len: number }>> };
  /**
   * Client sections in the encoding (its first number). `Y.decodeUpdate` flattens them, but Yjs
   * integrates a client's last section only: a client in two sections (or an empty one) would be
   * integrated otherwise than it reads.
   */
  sections: number;
}

/** Decodes a Yjs v1 update for `precheckUpdate`; throws where `Y.decodeUpdate` does. */
export function decodeForPrecheck(update: Uint8Array): DecodedUpdate {
  const { structs, ds } = Y.decodeUpdate(update) as Omit<DecodedUpdate, 'sections'>;
  return { structs, ds, sections: decoding.readVarUint(decoding.createDecoder(update)) };
}

/** Content classes the schema can accept somewhere (anything else is refused by the slow check). */
const CONTENT = new Set<unknown>([Y.ContentString, Y.ContentAny, Y.ContentType, Y.ContentDeleted, Y.ContentFormat]);
const TYPES = new Set<unknown>([Y.Map, Y.Array, Y.Text, Y.XmlFragment, Y.XmlElement, Y.XmlText]);

/** An item of the update, once placed. */
interface NewItem {
  item: Y.Item;
  parent: Parent;
  key: string | null;
  /** Its place when it is a type (where its own children go); 'dead' when invisible. */
  place?: Place | 'dead';
  /** Depth below its rich-text fragment, for types in rich text. */
  depth?: number;
  /** Carries deleted content, or the update's own delete set covers all of it (a partial cover goes the slow way). */
  gone: boolean;
  /** Integrated as garbage: Yjs turns an item whose neighbour is garbage, or whose parent is not a type, into a GC struct. */
  gc: boolean;
}
/** Where an item goes: a type the document has, a type this update creates, or a root of the schema the document has not created yet. */
type Parent = { live: AnyType } | { fresh: NewItem } | { root: string };
/** A referenced struct: an item the document has, an item of this update, or garbage (collected, or becoming so). */
type Ref = { live: Y.Item } | { fresh: NewItem } | { gc: true };

const no = (reason: string): Precheck => ({ ok: false, reason });
const OK: Precheck = { ok: true };

export function precheckUpdate(doc: Y.Doc, update: DecodedUpdate, writer: Writer, schema: DocSchema = WORKSPACE_SCHEMA): Precheck {
  return new UpdateReading(doc, update, writer, schema).decide();
}

/**
 * One update read against one document. A class rather than closures: the server runs under tsx,
 * whose name-keeping wraps each closure created, which would cost more than the reading itself.
 */
class UpdateReading implements Reporter {
  private readonly store: Y.Doc['store'];
  /** Each client's new structs, in order. */
  private readonly runs = new Map<number, { start: number; end: number; items: NewItem[] }>();
  private readonly all: NewItem[] = [];
  /** Map entries the update writes: parent (live type, new item or `root:<name>`) → key → entries. */
  private readonly entries = new Map<unknown, Map<string, NewItem[]>>();
  private readonly problems: string[] = [];
  private readonly places: PlaceResolver;

  constructor(
    private readonly doc: Y.Doc,
    private readonly update: DecodedUpdate,
    private readonly writer: Writer,
    private readonly schema: DocSchema,
  ) {
    this.store = doc.store;
    this.places = new PlaceResolver(schema, null); // nothing in the document is new to this update
  }

  report(path: string, problem: string): void {
    this.problems.push(`${path}: ${problem}`);
  }

  decide(): Precheck {
    // Pending changes would be retried inside this update's transaction, under its writer.
    if (this.store.pendingStructs || this.store.pendingDs) return no('the document has pending changes');
    return this.readStructs() ?? this.placeItems() ?? this.checkDeletions() ?? this.checkMapWrites() ?? this.checkAdditions() ?? this.checkRemovals() ?? OK;
  }

  /**
   * 1. Items only, each client's run starting exactly at the document's state for that client and
   * contiguous. `addStruct` throws unless a struct starts where the client's last one ends; an
   * earlier start would be integrated partly (offset), a later one left pending.
   */
  private readStructs(): Precheck | null {
    let previous = -1;
    for (const s of this.update.structs) {
      if (!(s instanceof Y.Item)) return no('garbage-collected or skipped structs');
      if (s.length < 1) return no('an empty struct');
      if (!CONTENT.has(s.content.constructor)) return no('content the schema does not know');
      if (s.content instanceof Y.ContentType && !TYPES.has(s.content.type.constructor)) return no('a type the schema does not know');
      const client = s.id.client;
      let run = this.runs.get(client);
      if (!run) {
        const state = Y.getState(this.store, client);
        if (s.id.clock !== state) return no(s.id.clock < state ? 'overlaps what the document has' : 'depends on changes the document does not have');
        run = { start: state, end: state, items: [] };
        this.runs.set(client, run);
      } else if (client !== previous) return no('a client appears twice');
      else if (s.id.clock !== run.end) return no('structs are not contiguous');
      run.end += s.length;
      const n: NewItem = { item: s, parent: NO_PARENT, key: null, gone: s.content instanceof Y.ContentDeleted, gc: false };
      run.items.push(n);
      this.all.push(n);
      previous = client;
    }
    if (this.update.sections !== this.runs.size) return no('a client in several sections, or an empty one');
    return null;
  }

  /**
   * A referenced id: an item the document has (clock below its state), or an earlier item of the
   * same client in this update. Yjs looks the first kind up in the store (`getItemCleanEnd`,
   * `getItem`: present, since below the state) and trusts the second kind to be integrated
   * already (it skips the missing check for its own client): a later or foreign one would throw.
   */
  private lookup(id: Y.ID, self: Y.Item): Ref | null {
    const structs = this.store.clients.get(id.client);
    if (structs && id.clock < Y.getState(this.store, id.client)) {
      const s = structs[Y.findIndexSS(structs, id.clock)]!;
      return s instanceof Y.Item ? { live: s } : GC_REF;
    }
    if (id.client !== self.id.client || id.clock >= self.id.clock) return null;
    for (const n of this.runs.get(id.client)!.items) if (id.clock >= n.item.id.clock && id.clock < n.item.id.clock + n.item.length) return n.gc ? GC_REF : { fresh: n };
    return null;
  }

  /** 2. Every new item's parent and key, as `getMissing` derives them (left neighbour, else right one, else the explicit parent). */
  private placeItems(): Precheck | null {
    for (const n of this.all) {
      const it = n.item;
      if (it.origin || it.rightOrigin) {
        const left = it.origin ? this.lookup(it.origin, it) : null;
        const right = it.rightOrigin ? this.lookup(it.rightOrigin, it) : null;
        if ((it.origin && !left) || (it.rightOrigin && !right)) return no('a neighbour the document does not have');
        if (left === GC_REF || right === GC_REF) {
          n.gc = true; // `getMissing`: a garbage neighbour leaves the item without a parent
          continue;
        }
        const l = left as ItemRef | null;
        const r = right as ItemRef | null;
        if ((l && 'live' in l && !l.live.parent) || (r && 'live' in r && !r.live.parent)) return no('a neighbour without a parent');
        const ref = (l ?? r)!;
        n.parent = parentOf(ref);
        n.key = keyOf(ref);
        if (l && r && !(ownerOf(parentOf(l)) === ownerOf(parentOf(r)) && keyOf(l) === keyOf(r))) return no('neighbours in different places');
      } else if (typeof it.parent === 'string') {
        // Yjs creates a root it does not have (`doc.get`) while decoding: only roots of the schema.
        if (!Object.hasOwn(this.schema.roots, it.parent)) return no('an unknown root');
        const root = this.doc.share.get(it.parent);
        n.parent = root ? { live: asType(root) } : { root: it.parent };
        n.key = it.parentSub;
      } else if (it.parent instanceof Y.ID) {
        // `getMissing` reads `parentItem.content.type`: an item holding no type (or garbage) is no
        // parent, and the item becomes garbage.
        const p = this.lookup(it.parent, it);
        if (!p) return no('a parent the document does not have');
        if (p === GC_REF || !(('live' in p ? p.live : (p as { fresh: NewItem }).fresh.item).content instanceof Y.ContentType)) {
          n.gc = true;
          continue;
        }
        n.parent = 'live' in p ? { live: asType((p.live.content as Y.ContentType).type) } : { fresh: (p as { fresh: NewItem }).fresh };
        n.key = it.parentSub;
      } else return no('an item with no parent');
      if (n.key !== null) {
        const owner = ownerOf(n.parent);
        let byKey = this.entries.get(owner);
        if (!byKey) this.entries.set(owner, (byKey = new Map()));
        const list = byKey.get(n.key);
        if (list) list.push(n);
        else byKey.set(n.key, [n]);
      }
    }
    return null;
  }

  private deletes(client: number, clock: number): boolean {
    const dels = this.update.ds.clients.get(client);
    if (dels) for (const d of dels) if (clock >= d.clock && clock < d.clock + d.len) return true;
    return false;
  }

  /**
   * 3. Deletions only of what the document (or this update, every section of which is integrated:
   * step 1) has — anything else stays pending. A new item the update deletes must be deleted
   * whole: Yjs splits a partly deleted one and the rest stays visible (or a key's value becomes
   * its deleted tail), which only the slow check follows.
   */
  private checkDeletions(): Precheck | null {
    for (const [client, dels] of this.update.ds.clients) {
      const end = this.runs.get(client)?.end ?? Y.getState(this.store, client);
      for (const d of dels) if (d.clock >= end || d.clock + d.len > end) return no('deletes what the document does not have');
    }
    if (!this.update.ds.clients.size) return null;
    for (const n of this.all) {
      const covered = this.covered(n.item.id.client, n.item.id.clock, n.item.id.clock + n.item.length);
      if (covered === n.item.length) n.gone = true;
      else if (covered > 0) return no('deletes part of a new item');
    }
    return null;
  }

  /** How much of [from, to) of a client the delete set covers (its ranges may overlap). */
  private covered(client: number, from: number, to: number): number {
    const parts: Array<[number, number]> = [];
    for (const d of this.update.ds.clients.get(client) ?? []) {
      const a = Math.max(from, d.clock);
      const b = Math.min(to, d.clock + d.len);
      if (a < b) parts.push([a, b]);
    }
    parts.sort((x, y) => x[0] - y[0]);
    let total = 0;
    let reach = from;
    for (const [a, b] of parts) {
      if (b <= reach) continue;
      total += b - Math.max(a, reach);
      reach = b;
    }
    return total;
  }

  /**
   * 4. Map writes must win: a new entry placed after the key's current value (or the first value
   * of a key with none) ends up its value; otherwise conflict resolution may leave another value
   * (or none) in place, and only the slow check sees which. One new entry per key.
   */
  private checkMapWrites(): Precheck | null {
    for (const [owner, byKey] of this.entries) {
      for (const [key, list] of byKey) {
        if (list.length > 1) return no('a key written twice');
        // A deleted write still takes the key and deletes its old value (`integrate`), a removal
        // outside the delete set that the removal check reads.
        if (list[0]!.gone) return no('a deleted map write');
        const it = list[0]!.item;
        if (it.rightOrigin) return no('a map write with a right neighbour');
        if (owner instanceof Y.AbstractType) {
          const current = asType(owner)._map.get(key);
          const left = it.origin ? this.lookup(it.origin, it) : null;
          if (current ? !(left && 'live' in left && left.live === current && it.origin!.clock === current.id.clock + current.length - 1) : left) return no('a map write that may lose');
        } else if (it.origin) return no('a map write that may lose');
      }
    }
    return null;
  }

  /**
   * 5. The schema, with the writer's rights, for every new item where it lands. A live container
   * this update deletes hides what is added to it: `checkTransaction` skips those, this check is
   * stricter and checks them (a violation then goes the slow way).
   */
  private checkAdditions(): Precheck | null {
    let records: Array<{ owner: NewItem; record: NewRecord }> | null = null;
    for (const n of this.all) {
      if (n.gc) continue; // garbage: nothing of it is visible
      let at: Place | 'dead' | { unknownRoot: string };
      let parentClass: unknown;
      let depth: number | AnyType;
      const parent = n.parent;
      if ('live' in parent) {
        at = this.places.resolve(parent.live);
        parentClass = parent.live.constructor;
        depth = parent.live;
      } else if ('root' in parent) {
        at = { node: this.schema.roots[parent.root]!, rule: [], path: parent.root, fresh: false };
        parentClass = Y.AbstractType;
        depth = 0;
      } else {
        const p = parent.fresh;
        at = p.place ?? 'dead';
        parentClass = (p.item.content as Y.ContentType).type.constructor;
        depth = p.depth ?? 0;
      }
      if (at === 'dead') {
        n.place = 'dead';
        continue; // invisible (inside something deleted, or under a key the schema has no place for)
      }
      if ('unknownRoot' in at) return no('an unknown root');
      const content = n.item.content;
      if (!n.gone) {
        const record = checkAddition({ at, parentClass, richDepth: depth, parentFresh: at.fresh, key: n.key, content }, this.writer, this);
        if (this.problems.length) return no(`breaks the schema (${this.problems[0]})`);
        if (record) (records ??= []).push({ owner: n, record });
      }
      if (content instanceof Y.ContentType) {
        n.place = n.gone ? 'dead' : childPlace(at, n.key, content.type, true);
        n.depth = at.node.kind === 'richtext' ? (typeof depth === 'number' ? depth : richDepth(depth)) + 1 : 0;
      }
    }
    for (const { owner, record } of records ?? []) {
      const byKey = this.entries.get(owner);
      checkRequired(record, (k) => !!byKey?.get(k)?.some((e) => !e.gone), this);
      if (this.problems.length) return no(`breaks the schema (${this.problems[0]})`);
    }
    return null;
  }

  /**
   * 6. Every removal the delete set makes of what the document had, with the writer's rights. (A
   * value a map write replaces is removed by the write, which was checked in 5 and wins: step 4.)
   */
  private checkRemovals(): Precheck | null {
    for (const [client, dels] of this.update.ds.clients) {
      const structs = this.store.clients.get(client);
      const state = Y.getState(this.store, client);
      for (const d of dels) {
        const end = Math.min(d.clock + d.len, state);
        if (!structs || d.clock >= end) continue; // only this update's own items: fresh, no rights needed
        for (let i = Y.findIndexSS(structs, d.clock); i < structs.length && structs[i]!.id.clock < end; i++) {
          const s = structs[i]!;
          if (!(s instanceof Y.Item) || s.deleted) continue;
          const container = asType(s.parent);
          const own = container._item;
          if (own && (own.deleted || this.deletes(own.id.client, own.id.clock))) continue; // removed with its container
          const at = this.places.resolve(container);
          if (at === 'dead') continue;
          if ('unknownRoot' in at) return no('an unknown root');
          const key = s.parentSub;
          const replaced = key !== null && !!this.entries.get(container)?.get(key)?.some((e) => !e.gone);
          checkRemoval(at, key, replaced, this.writer, this);
          if (this.problems.length) return no(`breaks the schema (${this.problems[0]})`);
        }
      }
    }
    return null;
  }
}

type ItemRef = { live: Y.Item } | { fresh: NewItem };
const GC_REF: Ref = { gc: true };
const NO_PARENT: Parent = { root: '' };
const parentOf = (r: ItemRef): Parent => ('live' in r ? { live: asType(r.live.parent) } : r.fresh.parent);
const keyOf = (r: ItemRef): string | null => ('live' in r ? r.live.parentSub : r.fresh.key);
const ownerOf = (p: Parent): unknown => ('live' in p ? p.live : 'fresh' in p ? p.fresh : `root:${p.root}`);
