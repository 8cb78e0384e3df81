/**
 * Picks one channel and one plane out of an interleaved recording (ScanImage saves channel 1,
 * channel 2, … of plane 1, then of plane 2, …, then the next volume) as a FrameSource. Pure.
 */

import type { FrameSource } from '../types.ts';
import type { PageOrder, RecordingMetadata } from './metadata.ts';
import { TiffError } from './tiff-error.ts';

/** The part of a TiffStack that `selectPages` needs. */
export interface PagedStack {
  width: number;
  height: number;
  pages: number;
  metadata: RecordingMetadata;
  readPage(i: number, out: Float32Array): Promise<void>;
}

/** Which pages to take; counts and order default to the stack's metadata. */
export interface PageSelectionOptions {
  /** 0-based channel (default 0). */
  channel?: number;
  /** 0-based plane (default 0). */
  plane?: number;
  channels?: number;
  planes?: number;
  order?: PageOrder;
  /**
   * When the pages do not fill whole time points (an interrupted acquisition): 'error' (default)
   * refuses, 'drop' leaves the incomplete last time point out. Only possible when time is slowest.
   */
  partial?: 'error' | 'drop';
  /** Overrides the metadata's frame rate. */
  frameRate?: number;
}

/** The frames of one channel and plane, read from the stack on demand. */
export interface PageSelection extends FrameSource {
  readonly channel: number;
  readonly plane: number;
  /** Trailing pages left out because they do not make a whole time point. */
  readonly droppedPages: number;
  /** The 0-based page holding frame `f`. */
  pageOf(f: number): number;
  read(frame: number, out: Float32Array): Promise<void>;
}

/** A FrameSource over the pages of one channel and one plane (0-based), checking the choice against the page count. */
export function selectPages(stack: PagedStack, opts: PageSelectionOptions = {}): PageSelection {
  const m = stack.metadata;
  const channels = opts.channels ?? m.channels;
  const planes = opts.planes ?? m.planes;
  const channel = opts.channel ?? 0;
  const plane = opts.plane ?? 0;
  const order = opts.order ?? m.order;
  const count = (v: number, what: string) => {
    if (!Number.isInteger(v) || v < 1) throw new TiffError(`the number of ${what} must be a whole number of at least 1, not ${v}`);
  };
  count(channels, 'channels');
  count(planes, 'planes');
  if (!Number.isInteger(channel) || channel < 0 || channel >= channels) {
    throw new TiffError(`there is no channel ${channel + 1}: the recording has ${channels} channel${channels === 1 ? '' : 's'}`);
  }
  if (!Number.isInteger(plane) || plane < 0 || plane >= planes) {
    throw new TiffError(`there is no plane ${plane + 1}: the recording has ${planes} plane${planes === 1 ? '' : 's'}`);
  }
  const per = channels * planes;
  const layout = `${channels} channel${channels === 1 ? '' : 's'} × ${planes} plane${planes === 1 ? '' : 's'}`;
  if (stack.pages < per) throw new TiffError(`the recording has ${stack.pages} pages, fewer than one time point of ${layout} needs`);
  const frames = Math.floor(stack.pages / per);
  const extra = stack.pages - frames * per;
  if (extra > 0) {
    const why = `the recording has ${stack.pages} pages, not a multiple of ${layout} = ${per}: the last ${extra} page${extra === 1 ? '' : 's'} would make an incomplete time point (an interrupted acquisition, or wrong channel or plane counts?)`;
    if (order[2] !== 't') throw new TiffError(`${why}; with pages in ${order} order they cannot be told apart`);
    if ((opts.partial ?? 'error') === 'error') throw new TiffError(`${why}. Check the counts, or drop those pages`);
  }
  // Strides of c, z and t through the pages, fastest dimension first.
  const size = { c: channels, z: planes, t: frames };
  const stride = { c: 0, z: 0, t: 0 };
  let step = 1;
  for (const d of order as Iterable<'c' | 'z' | 't'>) {
    stride[d] = step;
    step *= size[d];
  }
  const base = channel * stride.c + plane * stride.z;
  const pageOf = (f: number): number => {
    if (!Number.isInteger(f) || f < 0 || f >= frames) throw new RangeError(`frame ${f} is outside 0…${frames - 1}`);
    return base + f * stride.t;
  };
  return {
    width: stack.width,
    height: stack.height,
    frames,
    frameRate: opts.frameRate ?? m.frameRate,
    channel,
    plane,
    droppedPages: extra,
    pageOf,
    read: async (f, out) => stack.readPage(pageOf(f), out),
  };
}
