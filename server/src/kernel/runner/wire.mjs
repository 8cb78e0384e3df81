/**
 * Wire format between the kernel supervisor and its child processes: frames of a 4-byte
 * big-endian length followed by UTF-8 JSON, with tagged values for what JSON lacks (BigInt, Date,
 * undefined, NaN/±Infinity). Plain JavaScript so the sandboxed children load it without a
 * TypeScript loader. Pure apart from the stream helpers, which only read and write the given streams.
 */

/** JSON replacer: tags values JSON cannot hold. */
export function replacer(key, v) {
  const raw = this[key];
  if (typeof raw === 'bigint') return { $t: 'bigint', v: raw.toString() };
  if (raw instanceof Date || Object.prototype.toString.call(raw) === '[object Date]') return { $t: 'date', v: raw.getTime() };
  if (raw === undefined && key !== '') return { $t: 'undef' };
  if (typeof raw === 'number' && !Number.isFinite(raw)) return { $t: 'num', v: String(raw) };
  return v;
}

/** JSON reviver: undoes `replacer`. */
export function reviver(_key, v) {
  if (v && typeof v === 'object' && typeof v.$t === 'string') {
    if (v.$t === 'bigint') return BigInt(v.v);
    if (v.$t === 'date') return new Date(v.v);
    if (v.$t === 'undef') return undefined;
    if (v.$t === 'num') return Number(v.v);
  }
  return v;
}

/** Encodes one message as a frame. */
export function encodeFrame(msg) {
  const json = JSON.stringify(msg, replacer);
  const length = Buffer.byteLength(json, 'utf8');
  const frame = Buffer.allocUnsafe(4 + length);
  frame.writeUInt32BE(length, 0);
  frame.write(json, 4, 'utf8');
  return frame;
}

/**
 * Splits a byte stream into messages. `onMessage` gets each decoded message; `onError` is called
 * once (and decoding stops) when a frame is larger than `maxFrame` or is not JSON.
 */
export function frameReader(onMessage, onError, maxFrame = 64 * 1024 * 1024) {
  let buf = Buffer.alloc(0);
  let failed = false;
  return (chunk) => {
    if (failed) return;
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    while (buf.length >= 4) {
      const len = buf.readUInt32BE(0);
      if (len > maxFrame) {
        failed = true;
        onError(new Error(`frame of ${len} bytes exceeds the ${maxFrame}-byte limit`));
        return;
      }
      if (buf.length < 4 + len) return;
      const body = buf.subarray(4, 4 + len);
      buf = buf.subarray(4 + len);
      let msg;
      try {
        msg = JSON.parse(body.toString('utf8'), reviver);
      } catch (e) {
        failed = true;
        onError(new Error(`malformed frame: ${e.message}`));
        return;
      }
      onMessage(msg);
    }
  };
}
