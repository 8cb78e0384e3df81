/**
 * Decoders for the compressions and predictors microscopes use in TIFF: PackBits, LZW, the
 * horizontal-differencing predictor (2) and the floating-point predictor (3). Pure; each decoder
 * stops at the number of bytes the strip needs, so corrupt data cannot make it allocate more.
 */

import type { SampleArray } from './samples.ts';
import { TiffError } from './tiff-error.ts';

/** Unpacks PackBits (compression 32773) data into at most `expected` bytes (fewer when the data ends early). */
export function unpackBits(src: Uint8Array, expected: number): Uint8Array {
  const out = new Uint8Array(expected);
  let ip = 0;
  let op = 0;
  while (op < expected && ip < src.length) {
    const n = src[ip++]!;
    if (n < 128) {
      // A literal run of n + 1 bytes.
      const len = Math.min(n + 1, expected - op, src.length - ip);
      out.set(src.subarray(ip, ip + len), op);
      ip += n + 1;
      op += len;
    } else if (n > 128) {
      // One byte repeated 257 - n times.
      if (ip >= src.length) break;
      const len = Math.min(257 - n, expected - op);
      out.fill(src[ip++]!, op, op + len);
      op += len;
    } // n === 128 is a no-op.
  }
  return op < expected ? out.subarray(0, op) : out;
}

const CLEAR = 256;
const EOI = 257;

/**
 * Decodes TIFF LZW (compression 5: MSB-first codes of 9–12 bits with the "early change" of
 * libtiff) into at most `expected` bytes (fewer when the data ends early).
 */
export function lzwDecode(src: Uint8Array, expected: number): Uint8Array {
  if (src.length >= 2 && src[0] === 0 && (src[1]! & 1) === 1) {
    throw new TiffError('it uses the pre-1992 "old-style" LZW variant, which this reader does not support');
  }
  const out = new Uint8Array(expected);
  // The string of code c is the string of prefix[c] followed by suffix[c]; first[c] is its first byte.
  const prefix = new Uint16Array(4096);
  const suffix = new Uint8Array(4096);
  const first = new Uint8Array(4096);
  const length = new Uint16Array(4096);
  for (let i = 0; i < 256; i++) {
    suffix[i] = i;
    first[i] = i;
    length[i] = 1;
  }
  const totalBits = src.length * 8;
  let bitPos = 0;
  let width = 9;
  let next = 258;
  let old = -1;
  let op = 0;
  while (op < expected && bitPos + width <= totalBits) {
    const byte = bitPos >>> 3;
    const window = (src[byte]! << 16) | ((src[byte + 1] ?? 0) << 8) | (src[byte + 2] ?? 0);
    const code = (window >>> (24 - (bitPos & 7) - width)) & ((1 << width) - 1);
    bitPos += width;
    if (code === EOI) break;
    if (code === CLEAR) {
      width = 9;
      next = 258;
      old = -1;
      continue;
    }
    if (old === -1) {
      if (code > 255) throw new TiffError('its LZW data is corrupt (a code refers to a string not yet defined)');
      out[op++] = code;
      old = code;
      continue;
    }
    if (code > next || (code === next && next >= 4096)) {
      throw new TiffError('its LZW data is corrupt (a code refers to a string not yet defined)');
    }
    if (next < 4096) {
      // The new string is old's string plus the first byte of code's (which, when code is the
      // string being defined right now, is old's first byte).
      prefix[next] = old;
      suffix[next] = code === next ? first[old]! : first[code]!;
      first[next] = first[old]!;
      length[next] = length[old]! + 1;
      next++;
    }
    // Write code's string backwards from its end, clipped to the output.
    const len = length[code]!;
    let c = code;
    for (let k = len - 1; k >= 0; k--) {
      if (op + k < expected) out[op + k] = suffix[c]!;
      c = prefix[c]!;
    }
    op = Math.min(expected, op + len);
    old = code;
    if (next >= (1 << width) - 1 && width < 12) width++;
  }
  return op < expected ? out.subarray(0, op) : out;
}

/**
 * Undoes horizontal differencing (Predictor 2) in place: within each of `rows` rows of `rowLength`
 * samples, sample i is stored as its difference to sample i − `stride` (stride = samples per pixel).
 * Integer typed arrays wrap on assignment, which is the modular arithmetic TIFF specifies.
 */
export function undoHorizontalPredictor(a: SampleArray, rowLength: number, rows: number, stride: number): void {
  for (let r = 0; r < rows; r++) {
    const base = r * rowLength;
    for (let i = base + stride, end = base + rowLength; i < end; i++) a[i] = a[i]! + a[i - stride]!;
  }
}

/**
 * Undoes the floating-point predictor (Predictor 3) of `rows` rows of `rowLength` samples of
 * `size` bytes: bytes were differenced (with stride = samples per pixel) after each row's samples
 * were split into byte planes, most significant first. Returns the samples as big-endian bytes,
 * whatever the file's byte order (that is how libtiff defines this predictor).
 */
export function undoFloatPredictor(bytes: Uint8Array, rowLength: number, rows: number, size: number, stride: number): Uint8Array {
  const rowBytes = rowLength * size;
  const out = new Uint8Array(rowBytes * rows);
  const row = new Uint8Array(rowBytes);
  for (let r = 0; r < rows; r++) {
    row.set(bytes.subarray(r * rowBytes, (r + 1) * rowBytes));
    for (let i = stride; i < rowBytes; i++) row[i] = (row[i]! + row[i - stride]!) & 0xff;
    const base = r * rowBytes;
    for (let k = 0; k < rowLength; k++) {
      for (let b = 0; b < size; b++) out[base + k * size + b] = row[b * rowLength + k]!;
    }
  }
  return out;
}
