/**
 * Ground truth of the synthetic two-photon calcium-imaging recording (in the spirit of the NAOMi
 * and CaImAn simulators, much simplified): soma-shaped neurons with soft elliptical footprints
 * and a dimmer nucleus, bursty Poisson spiking, a GCaMP6f-like double-exponential kernel,
 * a neuropil field with its own slow fluctuation, a blood vessel shadow, slow baseline drift
 * (bleaching + wander) and rigid integer motion jitter. `calcium-render.ts` turns it into noisy
 * frames. Everything is drawn from `mulberry32(seed)`: same parameters → same truth.
 * Pure module (CPU only).
 */
import { Rand, subSeed } from './rand.ts';

export interface CalciumParams {
  seed: number;
  width: number;
  height: number;
  frames: number;
  /** Hz. */
  frameRate: number;
  neurons: number;
  /** Fraction of neurons that never spike (rounded; at least one when there are 4 or more). */
  silentFraction: number;
  /** Calcium kernel time constants, seconds. */
  tauRise: number;
  tauDecay: number;
  /** Detector: ADU per photon, ADU offset, read noise (ADU rms). */
  gain: number;
  offset: number;
  readNoise: number;
  /** Largest rigid shift, pixels (integer shifts). */
  maxShift: number;
  /** Range of a soma's long semi-axis, pixels (the short one is 0.7–1 of it). */
  cellRadius: readonly [number, number];
}

export const DEFAULT_CALCIUM_PARAMS: Readonly<CalciumParams> = Object.freeze({
  seed: 1,
  width: 256,
  height: 256,
  frames: 900,
  frameRate: 30,
  neurons: 60,
  silentFraction: 0.15,
  tauRise: 0.05,
  tauDecay: 0.7,
  gain: 2,
  offset: 100,
  readNoise: 2,
  maxShift: 3,
  cellRadius: [4.5, 7] as const,
});

/** A neuron's footprint: weights in [0, 1] over a bounding box of the image (x fastest). */
export interface Footprint {
  x0: number;
  y0: number;
  width: number;
  height: number;
  weights: Float32Array;
}

export interface Neuron {
  /** 1-based; the neuron's id in the labels layer and the tables. */
  id: number;
  /** Ellipse centre (pixel units, pixel centres at integers), semi-axes (px) and orientation (rad). */
  cx: number;
  cy: number;
  a: number;
  b: number;
  theta: number;
  /** Resting brightness at the footprint's peak, photons per pixel per frame. */
  f0: number;
  /** ΔF/F added by one spike at the kernel's peak. */
  amplitude: number;
  silent: boolean;
  /** Burst onsets per second (0 when silent). */
  burstRate: number;
  footprint: Footprint;
  /** Spike times, seconds, ascending. */
  spikeTimes: number[];
  /** Noise-free ΔF/F of the neuron's own fluorescence, per frame. */
  dff: Float32Array;
  /** Pixels where the footprint weight is ≥ 0.5 (inside the image). */
  area: number;
  /** Mean position of those pixels. */
  centroid: [number, number];
  /** Single-spike SNR: peak ΔF of the mean over `area` pixels / noise SD of that mean at rest. */
  snr: number;
}

export interface CalciumTruth {
  params: CalciumParams;
  neurons: Neuron[];
  /** Per pixel: id of the neuron whose footprint (weight ≥ 0.5) is brightest there, 0 elsewhere. */
  labels: Uint32Array;
  /** Neuropil brightness at rest, photons per pixel per frame (vessel shadow not applied). */
  neuropil: Float32Array;
  /** Light transmission per pixel in (0, 1]: the blood vessel's shadow. */
  transmission: Float32Array;
  /** Relative neuropil fluctuation per frame (multiplies `neuropil` as 1 + value). */
  neuropilActivity: Float32Array;
  /** Multiplicative baseline per frame (bleaching and slow wander). */
  drift: Float32Array;
  /** Rigid shift per frame: [dx0, dy0, dx1, dy1, …] pixels; frame pixel (x, y) shows (x − dx, y − dy). */
  shifts: Int8Array;
}

/** Time of the peak of the kernel exp(−t/τd) − exp(−t/τr), seconds. */
export function kernelPeakTime(tauRise: number, tauDecay: number): number {
  return ((tauRise * tauDecay) / (tauDecay - tauRise)) * Math.log(tauDecay / tauRise);
}

/** The calcium kernel normalised to a peak of 1 (0 before the spike). */
export function calciumKernel(t: number, tauRise: number, tauDecay: number): number {
  if (t <= 0) return 0;
  const tp = kernelPeakTime(tauRise, tauDecay);
  const peak = Math.exp(-tp / tauDecay) - Math.exp(-tp / tauRise);
  return (Math.exp(-t / tauDecay) - Math.exp(-t / tauRise)) / peak;
}

/**
 * Noise-free ΔF/F sampled at frame centres (t = (f + 0.5) / frameRate): the sum of
 * `amplitude · kernel(t − spike)` over earlier spikes, computed exactly with two decaying states.
 */
export function dffFromSpikes(spikeTimes: readonly number[], frames: number, frameRate: number, amplitude: number, tauRise: number, tauDecay: number): Float32Array {
  const out = new Float32Array(frames);
  const tp = kernelPeakTime(tauRise, tauDecay);
  const norm = amplitude / (Math.exp(-tp / tauDecay) - Math.exp(-tp / tauRise));
  const dt = 1 / frameRate;
  const kd = Math.exp(-dt / tauDecay);
  const kr = Math.exp(-dt / tauRise);
  let d = 0;
  let r = 0;
  let s = 0;
  for (let f = 0; f < frames; f++) {
    const t = (f + 0.5) * dt;
    d *= kd;
    r *= kr;
    while (s < spikeTimes.length && spikeTimes[s]! < t) {
      const age = t - spikeTimes[s]!;
      d += Math.exp(-age / tauDecay);
      r += Math.exp(-age / tauRise);
      s++;
    }
    out[f] = norm * (d - r);
  }
  return out;
}

/** Bursty Poisson spikes: burst onsets at `burstRate`, 1 + Poisson(meanExtra) spikes per burst ~15 ms apart. */
function burstySpikes(rand: Rand, duration: number, burstRate: number, meanExtra: number): number[] {
  const out: number[] = [];
  if (burstRate <= 0) return out;
  let t = rand.exponential(1 / burstRate);
  while (t < duration) {
    const n = 1 + rand.poisson(meanExtra);
    let s = t;
    for (let i = 0; i < n && s < duration; i++) {
      out.push(s);
      s += 0.004 + rand.exponential(0.012);
    }
    t = s + rand.exponential(1 / burstRate);
  }
  return out;
}

function footprintOf(n: Pick<Neuron, 'cx' | 'cy' | 'a' | 'b' | 'theta'>, width: number, height: number): Footprint {
  const reach = Math.ceil(n.a * 1.6) + 1;
  const x0 = Math.max(0, Math.floor(n.cx) - reach);
  const y0 = Math.max(0, Math.floor(n.cy) - reach);
  const x1 = Math.min(width, Math.floor(n.cx) + reach + 1);
  const y1 = Math.min(height, Math.floor(n.cy) + reach + 1);
  const w = Math.max(0, x1 - x0);
  const h = Math.max(0, y1 - y0);
  const weights = new Float32Array(w * h);
  const c = Math.cos(n.theta);
  const s = Math.sin(n.theta);
  let max = 0;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const dx = x0 + x - n.cx;
      const dy = y0 + y - n.cy;
      const u = (dx * c + dy * s) / n.a;
      const v = (-dx * s + dy * c) / n.b;
      const rho = Math.sqrt(u * u + v * v);
      if (rho > 1.6) continue;
      // Soft membrane edge, and GCaMP excluded from the nucleus: a dimmer centre.
      const val = (1 / (1 + Math.exp((rho - 1) * 7))) * (1 - 0.45 * Math.exp(-((rho / 0.5) ** 2)));
      weights[x + y * w] = val;
      if (val > max) max = val;
    }
  if (max > 0) for (let i = 0; i < weights.length; i++) weights[i]! /= max;
  return { x0, y0, width: w, height: h, weights };
}

/** Smooth random field in [0, 1]: a sum of broad Gaussian blobs, normalised. */
function smoothField(rand: Rand, width: number, height: number): Float32Array {
  const blobs = Array.from({ length: 10 }, () => ({ x: rand.range(0, width), y: rand.range(0, height), s: rand.range(0.12, 0.35) * Math.max(width, height), w: rand.range(0.4, 1) }));
  const out = new Float32Array(width * height);
  let lo = Infinity;
  let hi = -Infinity;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      let v = 0;
      for (const b of blobs) v += b.w * Math.exp(-((x - b.x) ** 2 + (y - b.y) ** 2) / (2 * b.s * b.s));
      out[x + y * width] = v;
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
  for (let i = 0; i < out.length; i++) out[i] = hi > lo ? (out[i]! - lo) / (hi - lo) : 0.5;
  return out;
}

/** Ornstein–Uhlenbeck process sampled per frame (SD `sigma`, correlation time `tau` s). */
function ou(rand: Rand, frames: number, frameRate: number, tau: number, sigma: number): Float32Array {
  const out = new Float32Array(frames);
  const k = Math.exp(-1 / (frameRate * tau));
  const step = sigma * Math.sqrt(1 - k * k);
  let v = sigma * rand.normal();
  for (let f = 0; f < frames; f++) {
    v = v * k + step * rand.normal();
    out[f] = v;
  }
  return out;
}

/** Distance from (x, y) to the line through (px, py) with direction angle `angle`. */
const lineDistance = (x: number, y: number, px: number, py: number, angle: number) => Math.abs(-(x - px) * Math.sin(angle) + (y - py) * Math.cos(angle));

/** Draws the complete ground truth for `params`. */
export function simulateCalcium(input: Partial<CalciumParams> = {}): CalciumTruth {
  const params: CalciumParams = { ...DEFAULT_CALCIUM_PARAMS, ...input };
  const { width: W, height: H, frames: F, frameRate: fps } = params;
  if (!(W >= 8 && H >= 8 && F >= 1 && fps > 0 && params.neurons >= 0)) throw new Error('calcium simulation needs width, height ≥ 8, frames ≥ 1, frameRate > 0');
  if (!(params.tauDecay > params.tauRise && params.tauRise > 0)) throw new Error('tauDecay must exceed tauRise > 0');
  const rand = new Rand(subSeed(params.seed, 0));
  const duration = F / fps;

  // Blood vessel: a dark band across the field, a shadow on everything beneath it.
  const vessel = { x: rand.range(0.3, 0.7) * W, y: rand.range(0.3, 0.7) * H, angle: rand.range(0, Math.PI), width: rand.range(0.012, 0.02) * Math.max(W, H) + 1.5 };
  const transmission = new Float32Array(W * H);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) transmission[x + y * W] = 1 - 0.75 * Math.exp(-((lineDistance(x, y, vessel.x, vessel.y, vessel.angle) / vessel.width) ** 2));
  const field = smoothField(rand, W, H);
  const neuropil = new Float32Array(W * H);
  for (let i = 0; i < neuropil.length; i++) neuropil[i] = 14 * (0.6 + 0.8 * field[i]!);

  // Neurons: somata may overlap partially (min spacing 0.7 × summed radii), never on the vessel.
  const silentCount = params.neurons >= 4 ? Math.max(1, Math.round(params.neurons * params.silentFraction)) : Math.round(params.neurons * params.silentFraction);
  const silentIds = new Set<number>();
  while (silentIds.size < silentCount) silentIds.add(1 + rand.int(params.neurons));
  const placed: Array<{ cx: number; cy: number; a: number }> = [];
  const neurons: Neuron[] = [];
  for (let i = 0; i < params.neurons; i++) {
    const a = rand.range(params.cellRadius[0], params.cellRadius[1]);
    const b = a * rand.range(0.7, 1);
    const theta = rand.range(0, Math.PI);
    let cx = 0;
    let cy = 0;
    for (let attempt = 0; attempt < 200; attempt++) {
      cx = rand.range(a + 1, W - a - 1);
      cy = rand.range(a + 1, H - a - 1);
      const clear = placed.every((p) => Math.hypot(p.cx - cx, p.cy - cy) > 0.7 * (p.a + a)) && lineDistance(cx, cy, vessel.x, vessel.y, vessel.angle) > vessel.width + a;
      if (clear) break;
    }
    placed.push({ cx, cy, a });
    const id = i + 1;
    const silent = silentIds.has(id);
    const burstRate = silent ? 0 : Math.exp(rand.range(Math.log(0.04), Math.log(0.5)));
    const meanExtra = rand.range(0.3, 2.5);
    const spikeRand = new Rand(subSeed(params.seed, 1000 + id));
    const spikeTimes = burstySpikes(spikeRand, duration, burstRate, meanExtra);
    const amplitude = rand.range(0.2, 0.5);
    const f0 = rand.range(12, 30);
    const shape = { cx, cy, a, b, theta };
    neurons.push({
      id, ...shape, f0, amplitude, silent, burstRate, spikeTimes,
      footprint: footprintOf(shape, W, H),
      dff: dffFromSpikes(spikeTimes, F, fps, amplitude, params.tauRise, params.tauDecay),
      area: 0, centroid: [0, 0], snr: 0,
    });
  }

  // Labels: each pixel of a body (weight ≥ 0.5) goes to the neuron that is brightest there.
  const labels = new Uint32Array(W * H);
  const strongest = new Float32Array(W * H);
  for (const n of neurons) {
    const fp = n.footprint;
    let area = 0;
    let sx = 0;
    let sy = 0;
    let rest = 0;
    let signal = 0;
    for (let y = 0; y < fp.height; y++)
      for (let x = 0; x < fp.width; x++) {
        const w = fp.weights[x + y * fp.width]!;
        if (w < 0.5) continue;
        const px = fp.x0 + x + (fp.y0 + y) * W;
        area++;
        sx += fp.x0 + x;
        sy += fp.y0 + y;
        const t = transmission[px]!;
        rest += t * (neuropil[px]! + n.f0 * w);
        signal += t * n.f0 * w * n.amplitude;
        if (n.f0 * w > strongest[px]!) {
          strongest[px] = n.f0 * w;
          labels[px] = n.id;
        }
      }
    n.area = area;
    n.centroid = area ? [sx / area, sy / area] : [n.cx, n.cy];
    // Mean over `area` pixels, in ADU: signal g·ΣΔ/A; noise SD sqrt(Σ(g²λ + σr²))/A.
    const g = params.gain;
    n.snr = area ? (g * signal) / Math.sqrt(g * g * rest + area * params.readNoise ** 2) : 0;
  }

  // Neuropil activity: slow fluctuation plus a share of the population's activity.
  const slow = ou(new Rand(subSeed(params.seed, 1)), F, fps, 2, 0.06);
  const neuropilActivity = new Float32Array(F);
  for (let f = 0; f < F; f++) {
    let pop = 0;
    for (const n of neurons) pop += n.dff[f]!;
    neuropilActivity[f] = slow[f]! + (neurons.length ? (0.5 * pop) / neurons.length : 0);
  }

  // Baseline drift: ~8 % bleaching over the first tens of seconds and a slow ±2 % wander.
  const driftRand = new Rand(subSeed(params.seed, 2));
  const phase = driftRand.range(0, 2 * Math.PI);
  const drift = new Float32Array(F);
  for (let f = 0; f < F; f++) {
    const t = f / fps;
    drift[f] = (1 - 0.08 * (1 - Math.exp(-t / 15))) * (1 + 0.02 * Math.sin((2 * Math.PI * t) / 20 + phase));
  }

  // Rigid motion: an OU wander (SD 0.7 px, 0.5 s) plus rare twitches, rounded, within ±maxShift.
  const motionRand = new Rand(subSeed(params.seed, 3));
  const mx = ou(motionRand, F, fps, 0.5, 0.7);
  const my = ou(motionRand, F, fps, 0.5, 0.7);
  const shifts = new Int8Array(2 * F);
  let tx = 0;
  let ty = 0;
  const twitchDecay = Math.exp(-1 / (fps * 0.25));
  for (let f = 0; f < F; f++) {
    if (motionRand.uniform() < 0.1 / fps) {
      tx += motionRand.range(-2.5, 2.5);
      ty += motionRand.range(-2.5, 2.5);
    }
    tx *= twitchDecay;
    ty *= twitchDecay;
    const clamp = (v: number) => Math.max(-params.maxShift, Math.min(params.maxShift, Math.round(v)));
    shifts[2 * f] = clamp(mx[f]! + tx);
    shifts[2 * f + 1] = clamp(my[f]! + ty);
  }

  return { params, neurons, labels, neuropil, transmission, neuropilActivity, drift, shifts };
}
