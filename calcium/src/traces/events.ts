/**
 * Discrete events from deconvolved activity: runs of consecutive non-zero frames of `s` become one
 * event at the run's first frame, with the run's summed activity as amplitude. Pure (no I/O).
 */
import { assertPositive } from './util.ts';

/** One inferred event. */
export interface CalciumEvent {
  /** First frame of the run of non-zero activity. */
  frame: number;
  /** `frame / frameRate`, seconds from the first frame. */
  time: number;
  /** Sum of the activity over the run (in the trace's units: ΔF/F when s came from a ΔF/F trace). */
  amplitude: number;
  /** Number of consecutive non-zero frames merged into the event. */
  frames: number;
  /** Highest denoised calcium from the event's first frame to the next event (only when `c` is given). */
  peak?: number;
}

/** Options of `detectEvents`. */
export interface EventOptions {
  frameRate: number;
  /** Events whose summed amplitude is below this are dropped (default 0: every positive run). */
  minAmplitude?: number;
}

/** Events from deconvolved activity `s` (runs of frames with s > 0 merged at their first frame, amplitude = sum); `c` adds each event's calcium peak. */
export function detectEvents(s: ArrayLike<number>, c: ArrayLike<number> | undefined, opts: EventOptions): CalciumEvent[] {
  assertPositive(opts.frameRate, 'frameRate');
  const minAmplitude = opts.minAmplitude ?? 0;
  if (!(minAmplitude >= 0)) throw new Error(`minAmplitude must be ≥ 0 (got ${minAmplitude})`);
  if (c && c.length !== s.length) throw new Error(`detectEvents: s has ${s.length} frames but c has ${c.length}`);
  const n = s.length;
  const events: CalciumEvent[] = [];
  let t = 0;
  while (t < n) {
    const v = s[t]!;
    if (Number.isNaN(v)) throw new Error(`detectEvents: s is NaN at frame ${t}`);
    if (!(v > 0)) {
      t++;
      continue;
    }
    const start = t;
    let sum = 0;
    while (t < n && s[t]! > 0) sum += s[t++]!;
    if (sum >= minAmplitude && sum > 0) events.push({ frame: start, time: start / opts.frameRate, amplitude: sum, frames: t - start });
  }
  if (c) {
    for (let k = 0; k < events.length; k++) {
      const end = k + 1 < events.length ? events[k + 1]!.frame : n;
      let peak = -Infinity;
      for (let f = events[k]!.frame; f < end; f++) if (c[f]! > peak) peak = c[f]!;
      events[k]!.peak = peak;
    }
  }
  return events;
}
