/**
 * Raw protocol clients for tests that must send hand-crafted frames: a Hocuspocus-protocol client
 * that authenticates and then sends arbitrary bytes, and a y-websocket one.
 */
import * as encoding from 'lib0/encoding';
import * as decoding from 'lib0/decoding';
import WebSocket from 'ws';

export interface RawClient {
  ws: WebSocket;
  closed: Promise<{ code: number; reason: string }>;
  /** Per-document close messages (Hocuspocus) and auth refusals. */
  docCloses: string[];
  send(bytes: Uint8Array): void;
  /**
   * Sends a sync step 1 and resolves when the server has answered it (sync step 2). Frames from one
   * connection are handled in order, so once it resolves every frame sent before was processed.
   */
  roundTrip(): Promise<void>;
}

/** Counts sync step 2 answers so `roundTrip` can wait for the answer to its own step 1. */
function roundTrips(ws: WebSocket, step1: () => Uint8Array, isStep2: (data: Uint8Array) => boolean) {
  let sent = 0;
  let got = 0;
  const waiting: Array<{ n: number; resolve: () => void }> = [];
  ws.on('message', (data: Buffer) => {
    if (!isStep2(new Uint8Array(data))) return;
    got++;
    for (let i = waiting.length - 1; i >= 0; i--) if (got >= waiting[i]!.n) waiting.splice(i, 1)[0]!.resolve();
  });
  return {
    /** A step 1 sent outside `roundTrip` (the initial request) is answered too: count it. */
    counted(): void {
      sent++;
    },
    roundTrip(): Promise<void> {
      const n = ++sent;
      ws.send(step1());
      return got >= n ? Promise.resolve() : new Promise((resolve) => waiting.push({ n, resolve }));
    },
  };
}

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.binaryType = 'nodebuffer';
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

const closedPromise = (ws: WebSocket) =>
  new Promise<{ code: number; reason: string }>((r) => ws.once('close', (code, reason) => r({ code, reason: reason.toString() })));

/** Hocuspocus frame: address, type, body. */
export function hpFrame(doc: string, type: number, body: (e: encoding.Encoder) => void): Uint8Array {
  const e = encoding.createEncoder();
  encoding.writeVarString(e, doc);
  encoding.writeVarUint(e, type);
  body(e);
  return encoding.toUint8Array(e);
}

/** Hocuspocus sync "update" frame carrying `update`. */
export const hpUpdate = (doc: string, update: Uint8Array) =>
  hpFrame(doc, 0, (e) => {
    encoding.writeVarUint(e, 2);
    encoding.writeVarUint8Array(e, update);
  });

/** Connects to /collab, authenticates for `doc` and resolves once the server says authenticated. */
export async function rawHocuspocus(baseUrl: string, doc: string, token: string, opts: { stateVector?: Uint8Array } = {}): Promise<RawClient> {
  // The sync step 1 it sends: an empty state vector (the server answers with the whole document) unless given one.
  const stateVector = opts.stateVector ?? new Uint8Array([0]);
  const ws = await open(baseUrl.replace(/^http/, 'ws') + '/collab');
  const closed = closedPromise(ws);
  const docCloses: string[] = [];
  const authenticated = new Promise<void>((resolve, reject) => {
    ws.on('message', (data: Buffer) => {
      const d = decoding.createDecoder(new Uint8Array(data));
      decoding.readVarString(d);
      const type = decoding.readVarUint(d);
      if (type === 2) {
        const authType = decoding.readVarUint(d);
        if (authType === 2) resolve(); // Authenticated
        else if (authType === 1) {
          const reason = decoding.readVarString(d);
          docCloses.push(reason);
          reject(new Error(`permission denied: ${reason}`));
        }
      } else if (type === 7) {
        docCloses.push(decoding.readVarString(d));
      }
    });
  });
  ws.send(
    hpFrame(doc, 2, (e) => {
      encoding.writeVarUint(e, 0);
      encoding.writeVarString(e, token);
    }),
  );
  // Ask for the document so the connection is fully established before crafted frames arrive.
  ws.send(hpFrame(doc, 0, (e) => {
    encoding.writeVarUint(e, 0);
    encoding.writeVarUint8Array(e, stateVector);
  }));
  const rt = roundTrips(ws, () => hpFrame(doc, 0, (e) => {
    encoding.writeVarUint(e, 0);
    encoding.writeVarUint8Array(e, stateVector);
  }), (data) => {
    const d = decoding.createDecoder(data);
    decoding.readVarString(d);
    return decoding.readVarUint(d) === 0 && decoding.readVarUint(d) === 1;
  });
  rt.counted();
  await authenticated;
  return { ws, closed, docCloses, send: (b) => ws.send(b), roundTrip: rt.roundTrip };
}

/** Connects to /yjs/<doc>?token=… and resolves once open. */
export async function rawYws(baseUrl: string, doc: string, token: string): Promise<RawClient> {
  const ws = await open(`${baseUrl.replace(/^http/, 'ws')}/yjs/${doc}?token=${encodeURIComponent(token)}`);
  const rt = roundTrips(ws, () => new Uint8Array([0, 0, 1, 0]), (data) => data[0] === 0 && data[1] === 1);
  return { ws, closed: closedPromise(ws), docCloses: [], send: (b) => ws.send(b), roundTrip: rt.roundTrip };
}

/** y-websocket sync "update" message. */
export function ywsUpdate(update: Uint8Array): Uint8Array {
  const e = encoding.createEncoder();
  encoding.writeVarUint(e, 0);
  encoding.writeVarUint(e, 2);
  encoding.writeVarUint8Array(e, update);
  return encoding.toUint8Array(e);
}
