/**
 * Recovery of a workspace whose stored state no longer loads as a valid document (data from
 * before the schema was enforced, a bug, a newer Plexus, disk corruption). Such a workspace is
 * never served half-broken and never locks its owner out: connections are refused with
 * 4424 workspace-needs-recovery, and the owner is offered, over HTTP, either the last good version
 * (the snapshot and the longest run of log entries that keeps the document valid) or a repair
 * (everything that breaks the schema removed). Either way the stored bytes are first copied to
 * `<dataDir>/quarantine/`, so nothing is lost.
 * Effects: reads and writes the store and the quarantine folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as Y from 'yjs';
import { SCHEMA_VERSION, checkDocument, checkDocumentSteps, repairDocument, schemaVersion, serverOrigin, type Violation } from '@plexus/shared';
import type { StoredParts, WorkspaceStorage } from '../store/storage.ts';

export interface Diagnosis {
  problem: string;
  details: string[];
}

/** Why a loaded document cannot be served, or null when it can. */
export function diagnose(doc: Y.Doc): Diagnosis | null {
  return tooNew(doc) ?? verdict(checkDocument(doc));
}

/**
 * `diagnose`, with `turn` awaited between shares of the schema check (`checkDocumentSteps`): a
 * load of a large stored document checks it without holding the event loop (10,000 cells: ~0.1 s
 * in one turn). `perStep` entries of the document's roots per share; 0: all in one. The document
 * must not change meanwhile (nobody is served before its load ends).
 */
export async function diagnoseInTurns(doc: Y.Doc, turn: () => Promise<void>, perStep = CHECK_STEP): Promise<Diagnosis | null> {
  const early = tooNew(doc);
  if (early || perStep <= 0) return early ?? verdict(checkDocument(doc));
  const steps = checkDocumentSteps(doc, undefined, undefined, perStep);
  for (let step = steps.next(); ; step = steps.next()) {
    if (step.done) return verdict(step.value);
    await turn();
  }
}

/** Entries of the document's roots (cells, mostly) checked per turn by a load: ~2 ms of checking on a 2 GHz core. */
export const CHECK_STEP = 200;

function tooNew(doc: Y.Doc): Diagnosis | null {
  const version = schemaVersion(doc);
  return version > SCHEMA_VERSION ? { problem: `it was written by a newer Plexus (document schema version ${version}; this server reads up to ${SCHEMA_VERSION})`, details: [] } : null;
}

function verdict(violations: Violation[]): Diagnosis | null {
  return violations.length ? { problem: 'parts of it do not match the workspace document schema', details: violations.map((v) => `${v.path}: ${v.problem}`) } : null;
}

export interface RecoveryOptions {
  diagnosis: Diagnosis;
  /** The last good version: how many log entries on top of the snapshot it keeps and drops. */
  lastGood: { state: Uint8Array; kept: number; dropped: number } | null;
  /** The whole state with what breaks the schema removed (null when that cannot be done). */
  repaired: { state: Uint8Array; removed: number } | null;
}

function tryApply(doc: Y.Doc, u: Uint8Array): boolean {
  try {
    Y.decodeUpdate(u);
    const probe = new Y.Doc({ gc: false });
    Y.applyUpdate(probe, Y.encodeStateAsUpdate(doc));
    Y.applyUpdate(probe, u);
    if (probe.store.pendingStructs || probe.store.pendingDs) return false;
    Y.applyUpdate(doc, u);
    return true;
  } catch {
    return false;
  }
}

/**
 * The snapshot as one update (one stored in parts merged: each part alone may need the ones before
 * it), null for none, 'corrupt' when its parts do not merge.
 */
function wholeSnapshot(parts: StoredParts): Uint8Array | null | 'corrupt' {
  if (!parts.snapshot) return null;
  if (parts.snapshot.length === 1) return parts.snapshot[0]!;
  try {
    return Y.mergeUpdates(parts.snapshot);
  } catch {
    return 'corrupt';
  }
}

/** What the owner can do with a workspace's stored parts (null: nothing is wrong). */
export function recoveryOptions(parts: StoredParts): RecoveryOptions | null {
  // The whole state as stored, as far as it applies.
  const whole = new Y.Doc();
  const snapshot = wholeSnapshot(parts);
  let corrupt = snapshot === 'corrupt' ? 1 : 0;
  for (const u of snapshot && snapshot !== 'corrupt' ? [snapshot, ...parts.entries] : parts.entries) if (!tryApply(whole, u)) corrupt++;
  const diagnosis = corrupt
    ? { problem: `${corrupt} stored change${corrupt === 1 ? '' : 's'} cannot be read (corrupt or out of order)`, details: [] }
    : diagnose(whole);
  if (!diagnosis) return null;

  // Last good: the snapshot, then log entries while the document stays valid.
  let lastGood: RecoveryOptions['lastGood'] = null;
  const prefix = new Y.Doc();
  if (!snapshot || (snapshot !== 'corrupt' && tryApply(prefix, snapshot) && !diagnose(prefix))) {
    let kept = 0;
    for (const u of parts.entries) {
      const next = new Y.Doc();
      Y.applyUpdate(next, Y.encodeStateAsUpdate(prefix));
      if (!tryApply(next, u) || diagnose(next)) break;
      Y.applyUpdate(prefix, u);
      kept++;
    }
    lastGood = { state: Y.encodeStateAsUpdate(prefix), kept, dropped: parts.entries.length - kept };
  }

  let repaired: RecoveryOptions['repaired'] = null;
  if (schemaVersion(whole) <= SCHEMA_VERSION) {
    try {
      const removed = repairDocument(whole, serverOrigin('recovery'));
      repaired = { state: Y.encodeStateAsUpdate(whole), removed };
    } catch {
      repaired = null;
    }
  }
  return { diagnosis, lastGood, repaired };
}

/** Copies a workspace's stored parts aside (base64 JSON), before recovery replaces them. */
export function quarantine(dataDir: string, ws: string, parts: StoredParts): string {
  const dir = path.join(dataDir, 'quarantine');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${ws}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  const b64 = (u: Uint8Array) => Buffer.from(u).toString('base64');
  // A snapshot stored in parts: each part (in the order they apply).
  const snapshot = parts.snapshot && parts.snapshot.length > 1 ? { snapshotParts: parts.snapshot.map(b64) } : { snapshot: parts.snapshot ? b64(parts.snapshot[0]!) : null };
  fs.writeFileSync(file, JSON.stringify({ workspace: ws, ...snapshot, entries: parts.entries.map(b64), upto: parts.upto }));
  return path.basename(file);
}

/** Replaces a workspace's stored state by `state` (after quarantining the old one). */
export async function recover(store: WorkspaceStorage, dataDir: string, ws: string, choice: 'last-good' | 'repair'): Promise<{ kept?: number; dropped?: number; removed?: number; quarantined: string }> {
  const parts = await store.loadParts(ws);
  const options = recoveryOptions(parts);
  if (!options) throw new RecoveryError(409, 'not-needed', 'this workspace loads normally: nothing to recover');
  const pick = choice === 'last-good' ? options.lastGood : options.repaired;
  if (!pick) throw new RecoveryError(409, 'not-available', choice === 'last-good' ? 'no earlier version of this workspace is valid' : 'this workspace cannot be repaired by removing invalid parts');
  const quarantined = quarantine(dataDir, ws, parts);
  await store.compact(ws, pick.state, Math.max(parts.upto, await store.maxLogId(ws)));
  // Browsers keep an offline copy of the broken state: a new epoch makes them drop it.
  await store.renewEpoch(ws);
  return 'removed' in pick ? { removed: pick.removed, quarantined } : { kept: pick.kept, dropped: pick.dropped, quarantined };
}

export class RecoveryError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}
