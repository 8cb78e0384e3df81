/**
 * A minimal PNG encoder for 8-bit greyscale images (what a figure of a mean image needs): one
 * IHDR, one zlib-deflated IDAT of rows filtered None, Sub or Up, IEND. Why not a library: the three chunks
 * and a CRC-32 are 30 lines, and node:zlib does the compression. Pure apart from CPU.
 */
import zlib from 'node:zlib';

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (ISO-HDLC, as PNG uses it) of `bytes`. */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  Buffer.from(data.buffer, data.byteOffset, data.byteLength).copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/** PNG bytes of a greyscale image (`grey`: width × height values 0–255, x fastest). */
export function encodeGreyPng(grey: Uint8Array, width: number, height: number): Buffer {
  if (!(width > 0 && height > 0) || grey.length !== width * height) throw new Error(`a ${width}×${height} image needs ${width * height} values, got ${grey.length}`);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // colour type: greyscale
  // Each row filtered as None, Sub or Up, whichever leaves the smallest sum of |bytes| (the usual
  // heuristic): smooth images then deflate to a fraction of their unfiltered size.
  const raw = Buffer.alloc((width + 1) * height);
  const sub = new Uint8Array(width);
  const up = new Uint8Array(width);
  const cost = (r: Uint8Array) => r.reduce((a, v) => a + (v < 128 ? v : 256 - v), 0);
  for (let y = 0; y < height; y++) {
    const row = grey.subarray(y * width, (y + 1) * width);
    const prev = y ? grey.subarray((y - 1) * width, y * width) : null;
    for (let x = 0; x < width; x++) {
      sub[x] = (row[x]! - (x ? row[x - 1]! : 0)) & 0xff;
      up[x] = (row[x]! - (prev ? prev[x]! : 0)) & 0xff;
    }
    const options: Array<[number, Uint8Array]> = [[0, row], [1, sub], [2, up]];
    const [type, bytes] = options.reduce((best, o) => (cost(o[1]) < cost(best[1]) ? o : best));
    raw[y * (width + 1)] = type;
    raw.set(bytes, y * (width + 1) + 1);
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', new Uint8Array())]);
}
