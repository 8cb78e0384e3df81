/**
 * `plexus.json`: Plexus' own description of a dataset (in `<dataset>/`) and of a layer (next to
 * its precomputed `info`), for what `info` cannot say — what the axes mean (z is time for a
 * movie), the frame rate, and which generator wrote the data. Types and a tolerant reader.
 * Effects: `readMeta` reads a file.
 */
import fs from 'node:fs/promises';

/** Unit of one voxel step along an axis; `none` for the single plane of a 2-D layer. */
export type AxisUnit = 'µm' | 's' | 'none';

export interface LayerMeta {
  description: string;
  /** What each axis is: x and y are space; z is time for a movie, nothing for a 2-D layer. */
  axes: { x: AxisUnit; y: AxisUnit; z: AxisUnit };
  /** Size of one voxel in those units (z: seconds per frame for a movie). */
  voxelSize: [number, number, number];
  /** Hz, for layers whose z is time. */
  frameRate?: number;
  /** What a voxel value is: `ADU` (detector units), `ADU (mean)`, `neuron id`. */
  values: string;
  /** How the precomputed `resolution` (nanometres) encodes these axes. */
  resolutionNote: string;
}

export interface TableMeta {
  path: string;
  columns: readonly string[];
  description: string;
}

export interface DatasetMeta {
  /** Format of this file. */
  plexusDataset: 1;
  title: string;
  description: string;
  generator?: { name: string; version: number; params: Record<string, unknown> };
  frameRate?: number;
  layers: Record<string, { type: 'image' | 'segmentation'; description: string }>;
  tables?: Record<string, TableMeta>;
}

/** Reads a `plexus.json`; null when absent or not a JSON object. */
export async function readMeta<T>(file: string): Promise<T | null> {
  try {
    const v = JSON.parse(await fs.readFile(file, 'utf8')) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as T) : null;
  } catch {
    return null;
  }
}
