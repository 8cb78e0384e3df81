/**
 * The map's points on the client: the binary format of `GET …/atlas/:map/points` is decoded by
 * @plexus/shared (shared/src/atlas/points-format.ts, where its layout is described; api.ts
 * fetches and decodes); here only what the panel adds — looking points up by row. Pure.
 */
import type { AtlasPoints } from '@plexus/shared';

export type { AtlasPoints, PointsColor, PointsMeta } from '@plexus/shared';

/** Index of each row in the points (−1 where a row was not sent), for looking points up by row. */
export function rowIndex(points: Pick<AtlasPoints, 'n' | 'row'>): Int32Array {
  let max = -1;
  for (let i = 0; i < points.n; i++) if (points.row[i]! > max) max = points.row[i]!;
  const idx = new Int32Array(max + 1).fill(-1);
  for (let i = 0; i < points.n; i++) idx[points.row[i]!] = i;
  return idx;
}
