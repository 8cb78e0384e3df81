/**
 * Sample types of TIFF pixel data and the conversion of file bytes to typed arrays in the host's
 * byte order. Pure.
 */

/** The numeric type of one pixel sample as stored in the file. */
export type SampleType = 'uint8' | 'int8' | 'uint16' | 'int16' | 'uint32' | 'int32' | 'float32' | 'float64';

/** A typed array holding samples of one of the supported types. */
export type SampleArray = Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | Float32Array | Float64Array;

const CTORS = {
  uint8: Uint8Array,
  int8: Int8Array,
  uint16: Uint16Array,
  int16: Int16Array,
  uint32: Uint32Array,
  int32: Int32Array,
  float32: Float32Array,
  float64: Float64Array,
} as const;

/** Bytes per sample of a sample type. */
export function bytesPerSample(t: SampleType): number {
  return CTORS[t].BYTES_PER_ELEMENT;
}

/** Allocates a zeroed typed array of `n` samples of type `t`. */
export function allocSamples(t: SampleType, n: number): SampleArray {
  return new CTORS[t](n);
}

/** The sample type for TIFF BitsPerSample and SampleFormat (1 unsigned, 2 signed, 3 float), or undefined when unsupported. */
export function sampleTypeOf(bits: number, format: number): SampleType | undefined {
  if (format === 1 || format === 4) return bits === 8 ? 'uint8' : bits === 16 ? 'uint16' : bits === 32 ? 'uint32' : undefined;
  if (format === 2) return bits === 8 ? 'int8' : bits === 16 ? 'int16' : bits === 32 ? 'int32' : undefined;
  if (format === 3) return bits === 32 ? 'float32' : bits === 64 ? 'float64' : undefined;
  return undefined;
}

const HOST_LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Copies `bytes` (samples of type `t` in the file's byte order) into a new typed array in the
 * host's byte order; `bytes.length` must be a multiple of the sample size.
 */
export function toNative(bytes: Uint8Array, t: SampleType, littleEndian: boolean): SampleArray {
  const size = bytesPerSample(t);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  if (size > 1 && littleEndian !== HOST_LITTLE) swapInPlace(copy, size);
  return new CTORS[t](copy.buffer, 0, bytes.length / size);
}

function swapInPlace(b: Uint8Array, size: number): void {
  const n = b.length - (b.length % size);
  for (let i = 0; i < n; i += size) {
    for (let lo = i, hi = i + size - 1; lo < hi; lo++, hi--) {
      const t = b[lo]!;
      b[lo] = b[hi]!;
      b[hi] = t;
    }
  }
}
