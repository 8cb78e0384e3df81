/**
 * Fractional order keys for cells. A cell's position is a string key stored on the cell; moving a
 * cell rewrites only that key, so two people moving the same cell at once can never duplicate or
 * lose it (last writer wins on the key). Ties (two cells inserted at the same spot concurrently get
 * the same midpoint) are broken by cell id, and a random suffix makes them rare. Pure module.
 */
import { generateKeyBetween } from 'fractional-indexing';

const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function randomSuffix(): string {
  const bytes = new Uint8Array(3);
  globalThis.crypto.getRandomValues(bytes);
  let s = '';
  for (const b of bytes) s += DIGITS[b % 62];
  // A fractional part must not end in '0' (the library rejects such keys).
  return s.endsWith('0') ? s.slice(0, -1) + 'V' : s;
}

/**
 * A key strictly between `before` and `after` (either may be null for "start"/"end").
 * If the neighbours are equal (a concurrent-insert tie), the result sorts after both.
 */
export function orderKeyBetween(before: string | null, after: string | null): string {
  if (before !== null && after !== null && before >= after) after = null;
  let mid = generateKeyBetween(before, after);
  // Concurrent inserts at one spot compute the same `mid`; the random suffix tells them apart.
  // `mid + suffix` always sorts after `mid` (so after `before`) but can pass `after` when `after`
  // extends `mid` (e.g. mid "a1", after "a1dOk"). Falling back to the bare `mid` then made about one
  // concurrent same-spot insert in ten an exact tie; instead step `mid` towards `after` until a suffix fits.
  for (let tries = 0; tries < 8; tries++) {
    const jittered = mid + randomSuffix();
    if (after === null || jittered < after) return jittered;
    mid = generateKeyBetween(mid, after);
  }
  return mid;
}

/** Compares two (orderKey, id) pairs: the total order every replica agrees on. */
export function compareOrder(a: { order: string; id: string }, b: { order: string; id: string }): number {
  if (a.order < b.order) return -1;
  if (a.order > b.order) return 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
