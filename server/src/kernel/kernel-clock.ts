/**
 * Every timer and every "later" of the kernel goes through one of these, so a test can drive the
 * kernel step by step on an in-memory document (testkit `ManualClock`): nothing the kernel does
 * waits on the wall clock there, and the order of its steps is the order the test gives.
 * Pure module (the system clock wraps Node's timers).
 */
export interface KernelClock {
  now(): number;
  /** Runs `fn` after `ms`; the handle is for clearTimeout. */
  setTimeout(fn: () => void, ms: number): KernelTimer;
  clearTimeout(timer: KernelTimer | null): void;
  /** Runs `fn` after the I/O already waiting (Node's setImmediate): document updates in between. */
  soon(fn: () => void): void;
}

/** An opaque timer handle. */
export type KernelTimer = { readonly __kernelTimer: unique symbol } | object;

export const systemClock: KernelClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => {
    if (t) clearTimeout(t as NodeJS.Timeout);
  },
  soon: (fn) => void setImmediate(fn),
};
