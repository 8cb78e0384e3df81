/**
 * Validation of incoming frames before anything touches a live document. `Y.applyUpdate` is not
 * atomic (a malformed update can integrate structs and then throw while reading its delete set),
 * so every update is fully decoded first; awareness payloads are decoded and bounded too.
 * Pure module.
 */
import * as decoding from 'lib0/decoding';
import * as Y from 'yjs';
import { CloseCodes } from '@plexus/shared';
import { ProtocolError } from './errors.ts';

/** Hocuspocus message types a client may send (see @hocuspocus/server MessageType). */
export const HP = { Sync: 0, Awareness: 1, Auth: 2, QueryAwareness: 3, SyncReply: 4, Stateless: 5, BroadcastStateless: 6, Close: 7, SyncStatus: 8, Ping: 9, Pong: 10 } as const;
/** y-protocols sync sub-types. */
export const SYNC = { Step1: 0, Step2: 1, Update: 2 } as const;

export const MAX_AWARENESS_STATE_BYTES = 64 * 1024;
export const MAX_AWARENESS_ENTRIES = 64;

/** Throws ProtocolError(MalformedMessage) unless `update` decodes completely as a Yjs v1 update. */
export function assertValidUpdate(update: Uint8Array): void {
  try {
    Y.decodeUpdate(update);
  } catch (e) {
    throw new ProtocolError(CloseCodes.MalformedMessage, `update does not decode (${(e as Error).message})`);
  }
}

/** Throws unless `sv` decodes as a state vector. */
export function assertValidStateVector(sv: Uint8Array): void {
  try {
    const d = decoding.createDecoder(sv);
    const n = decoding.readVarUint(d);
    for (let i = 0; i < n; i++) {
      decoding.readVarUint(d);
      decoding.readVarUint(d);
    }
  } catch (e) {
    throw new ProtocolError(CloseCodes.MalformedMessage, `state vector does not decode (${(e as Error).message})`);
  }
}

export interface AwarenessEntry {
  clientId: number;
  clock: number;
  state: Record<string, unknown> | null;
}

/** Decodes an awareness update (y-protocols format) into entries, or throws. */
export function decodeAwarenessUpdate(update: Uint8Array): AwarenessEntry[] {
  try {
    const d = decoding.createDecoder(update);
    const n = decoding.readVarUint(d);
    if (n > MAX_AWARENESS_ENTRIES) throw new Error(`${n} entries (max ${MAX_AWARENESS_ENTRIES})`);
    const out: AwarenessEntry[] = [];
    for (let i = 0; i < n; i++) {
      const clientId = decoding.readVarUint(d);
      const clock = decoding.readVarUint(d);
      const json = decoding.readVarString(d);
      if (json.length > MAX_AWARENESS_STATE_BYTES) throw new Error('awareness state too large');
      const state = JSON.parse(json) as unknown;
      if (state !== null && (typeof state !== 'object' || Array.isArray(state))) throw new Error('awareness state is not an object');
      out.push({ clientId, clock, state: state as Record<string, unknown> | null });
    }
    return out;
  } catch (e) {
    if (e instanceof ProtocolError) throw e;
    throw new ProtocolError(CloseCodes.MalformedMessage, `awareness update does not decode (${(e as Error).message})`);
  }
}

/** What a sync message carries, once validated. */
export type SyncPayload = { kind: 'step1'; stateVector: Uint8Array } | { kind: 'step2' | 'update'; update: Uint8Array };

/** Reads and validates one y-protocols sync message body from `d`. */
export function readSyncPayload(d: decoding.Decoder): SyncPayload {
  const t = decoding.readVarUint(d);
  const payload = decoding.readVarUint8Array(d);
  switch (t) {
    case SYNC.Step1:
      assertValidStateVector(payload);
      return { kind: 'step1', stateVector: payload };
    case SYNC.Step2:
    case SYNC.Update:
      assertValidUpdate(payload);
      return { kind: t === SYNC.Step2 ? 'step2' : 'update', update: payload };
    default:
      throw new ProtocolError(CloseCodes.MalformedMessage, `unknown sync message type ${t}`);
  }
}

/**
 * Validates one Hocuspocus frame (document address, type, body). Returns the document name it is
 * addressed to. Throws ProtocolError for anything malformed.
 */
export interface HocuspocusFrame {
  documentName: string;
  type: number;
  /** Auth frames: the token presented. */
  token?: string;
  /** Awareness frames: the decoded entries. */
  awareness?: AwarenessEntry[];
}

export function validateHocuspocusFrame(frame: Uint8Array): HocuspocusFrame {
  try {
    const d = decoding.createDecoder(frame);
    const address = decoding.readVarString(d);
    const sep = address.indexOf('\0');
    const documentName = sep === -1 ? address : address.slice(0, sep);
    const type = decoding.readVarUint(d);
    const out: HocuspocusFrame = { documentName, type };
    switch (type) {
      case HP.Sync:
      case HP.SyncReply:
        readSyncPayload(d);
        break;
      case HP.Awareness:
        out.awareness = decodeAwarenessUpdate(decoding.readVarUint8Array(d));
        break;
      case HP.Auth:
        if (decoding.readVarUint(d) === 0) out.token = decoding.readVarString(d);
        break;
      case HP.Stateless:
        decoding.readVarString(d);
        break;
      case HP.QueryAwareness:
      case HP.Close:
      case HP.Ping:
      case HP.Pong:
      case HP.SyncStatus:
        break;
      default:
        throw new ProtocolError(CloseCodes.MalformedMessage, `message type ${type} is not accepted from clients`);
    }
    return out;
  } catch (e) {
    if (e instanceof ProtocolError) throw e;
    throw new ProtocolError(CloseCodes.MalformedMessage, (e as Error).message);
  }
}
