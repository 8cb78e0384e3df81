/**
 * A served precomputed movie (x, y, time) as a calcium `FrameSource`: frames are read one chunk
 * slab at a time (all x/y chunks of one z-range of the finest scale), decoded once and kept
 * until a frame outside the slab is asked for, so a sequential pass decompresses every chunk
 * once and holds one slab in memory. Effects: file reads.
 */
import type { FrameSource } from '@plexus/calcium/types';
import { openLayer, type Volume } from '../volumes/chunk-source.ts';
import { readRegion } from '../volumes/sampling.ts';
import { VolumeError } from '../volumes/precomputed.ts';

/** Opens `<dir>` (a layer directory) as a movie; `frameRate` from the layer's metadata or the caller. */
export async function movieSource(dir: string, name: string, frameRate?: number): Promise<FrameSource & { volume: Volume }> {
  const volume = await openLayer(dir, name);
  const scale = volume.info.scales[0]!;
  const [W, H, F] = scale.size;
  if (volume.info.num_channels !== 1) throw new VolumeError('unsupported', `${name} has ${volume.info.num_channels} channels; pick a one-channel movie`);
  if (F < 2) throw new VolumeError('unsupported', `${name} has a single plane: a movie needs frames along its third axis`);
  const slab = scale.chunk_sizes[0]![2];
  const n = W * H;
  let cached: { z0: number; z1: number; data: ArrayLike<number> } | null = null;
  return {
    volume,
    width: W,
    height: H,
    frames: F,
    frameRate,
    async read(f, out) {
      if (!cached || f < cached.z0 || f >= cached.z1) {
        const z0 = scale.voxel_offset[2] + Math.floor(f / slab) * slab;
        const z1 = Math.min(scale.voxel_offset[2] + F, z0 + slab);
        const min: [number, number, number] = [scale.voxel_offset[0], scale.voxel_offset[1], z0];
        const max: [number, number, number] = [scale.voxel_offset[0] + W, scale.voxel_offset[1] + H, z1];
        cached = null; // let the old slab go before the new one is allocated
        const data = await readRegion(volume, 0, { min, max }, { maxVoxels: n * slab + 1 });
        cached = { z0: z0 - scale.voxel_offset[2], z1: z1 - scale.voxel_offset[2], data };
      }
      const o = (f - cached.z0) * n;
      const d = cached.data;
      for (let i = 0; i < n; i++) out[i] = d[o + i]!;
    },
  };
}
