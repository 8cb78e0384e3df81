/**
 * The data types every stage of the calcium pipeline shares: images, movies read frame by frame,
 * ROIs as sparse pixel lists, and the progress / cancel plumbing of long work. Pure (types and
 * tiny constructors only).
 */

/** A 2-D image, row-major (x fastest): `data[x + y * width]`. */
export interface Image {
  width: number;
  height: number;
  data: Float32Array;
}

/** Makes a zero image. */
export function makeImage(width: number, height: number): Image {
  return { width, height, data: new Float32Array(width * height) };
}

/**
 * A movie read one frame at a time, so a recording never has to fit in memory: `read(f, out)`
 * writes frame `f` (x fastest) as float32 into `out` (length width × height).
 */
export interface FrameSource {
  width: number;
  height: number;
  frames: number;
  /** Frames per second when known (from the file's metadata or the person). */
  frameRate?: number;
  read(frame: number, out: Float32Array): void | Promise<void>;
}

/** A movie held in memory, frame after frame (x fastest within a frame). */
export interface Movie {
  width: number;
  height: number;
  frames: number;
  data: Float32Array;
}

/** A FrameSource over a movie in memory. */
export function movieSource(m: Movie, frameRate?: number): FrameSource {
  const n = m.width * m.height;
  return {
    width: m.width,
    height: m.height,
    frames: m.frames,
    frameRate,
    read(f, out) {
      out.set(m.data.subarray(f * n, (f + 1) * n));
    },
  };
}

/** A region of interest: the pixels it covers (indices into a frame, ascending) and their weights. */
export interface Roi {
  /** 1-based, stable: the ROI's id in the labels volume and every table. */
  id: number;
  pixels: Int32Array;
  /** Footprint weight per pixel (same length as `pixels`), max 1. */
  weights: Float32Array;
}

/** Reports how far a long stage is: `done` of `total` units (frames, ROIs) in stage `stage`. */
export type Progress = (p: { stage: string; done: number; total: number }) => void;

/** Options every long stage takes. */
export interface LongWork {
  onProgress?: Progress;
  /** Aborting throws an `AbortError` (DOMException name 'AbortError') between frames. */
  signal?: AbortSignal;
}

/** Throws the signal's reason when it was aborted (call between units of work). */
export function checkAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new DOMException('The analysis was interrupted', 'AbortError');
}
