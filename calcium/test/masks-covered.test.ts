/**
 * An ROI that other ROIs cover entirely has no pixel of its own, so its extraction mask is empty
 * and its trace 0/0 (a 60-frame movie detected such duplicates and the whole analysis failed on a
 * NaN trace): dropCoveredRois drops it before extraction, keeps the first of two identical ROIs,
 * and renumbers the rest 1…n.
 */
import { describe, expect, it } from 'vitest';
import { dropCoveredRois, extractionMasks } from '../src/extraction/masks.ts';
import type { Roi } from '../src/types.ts';

const roi = (id: number, pixels: number[]): Roi => ({ id, pixels: Int32Array.from(pixels), weights: new Float32Array(pixels.length).fill(1) });

describe('dropCoveredRois', () => {
  it('keeps ROIs with a pixel of their own and returns the same array when none is covered', () => {
    const rois = [roi(1, [0, 1, 2]), roi(2, [2, 3, 4])];
    expect(dropCoveredRois(rois, 10, 10)).toBe(rois);
  });

  it('drops an ROI inside the union of others, and the later of two identical ones, renumbering the rest', () => {
    const rois = [roi(1, [0, 1, 2]), roi(2, [10, 11]), roi(3, [1, 2, 10]), roi(4, [20, 21]), roi(5, [20, 21])];
    const kept = dropCoveredRois(rois, 10, 10);
    expect(kept.map((r) => [r.id, [...r.pixels]])).toEqual([
      [1, [0, 1, 2]],
      [2, [10, 11]],
      [3, [20, 21]],
    ]);
    expect(extractionMasks(kept, 10, 10).every((m) => m.pixels.length > 0)).toBe(true);
  });
});
