/**
 * What the agent knows about the workspace's data from metadata alone, for the planner (to set
 * value ranges a step's results must respect) and the verifier (to check them): tables with
 * their row counts and columns, volumes and movies with their voxel type, size and frame count,
 * and analysis jobs with their input. Reads the document and the server's volume list.
 */
import type * as Y from 'yjs';
import { listJobs, listTables } from '@plexus/shared';
import type { ServerApi } from '../peer/server-api.ts';

export interface VolumeFact {
  /** "dataset/layer". */
  key: string;
  dataType: string;
  /** x, y, z (or frames) of the finest scale. */
  size: number[] | null;
  /** The range the voxel type can hold (integer types), else null. */
  range: [number, number] | null;
}

export interface DataFacts {
  tables: Array<{ name: string; rows: number; columns: string[] }>;
  volumes: VolumeFact[];
  jobs: Array<{ id: string; kind: string; status: string; input: string | null }>;
}

const RANGES: Record<string, [number, number]> = {
  uint8: [0, 255],
  int8: [-128, 127],
  uint16: [0, 65535],
  int16: [-32768, 32767],
  uint32: [0, 4294967295],
  int32: [-2147483648, 2147483647],
  uint64: [0, Number.MAX_SAFE_INTEGER],
};

/** A zarr dtype ("<u2") or precomputed data_type ("uint16") as the precomputed name. */
export function normaliseDataType(t: string): string {
  const m = /^[<>|]?([uif])(\d)$/.exec(t);
  if (!m) return t.toLowerCase();
  const bits = Number(m[2]) * 8;
  return m[1] === 'u' ? `uint${bits}` : m[1] === 'i' ? `int${bits}` : `float${bits}`;
}

export const rangeOf = (dataType: string): [number, number] | null => RANGES[normaliseDataType(dataType)] ?? null;

export async function gatherFacts(doc: Y.Doc, api: ServerApi, signal: AbortSignal): Promise<DataFacts> {
  const volumes: VolumeFact[] = [];
  try {
    for (const d of await api.volumes(signal)) {
      for (const l of d.layers) {
        const info = l.info as { data_type?: string; scales?: Array<{ size?: number[] }> } | undefined;
        const zarr = l.zarr as { dtype?: string; shape?: number[] } | undefined;
        const dataType = info?.data_type ?? zarr?.dtype;
        if (typeof dataType !== 'string') continue;
        const size = info?.scales?.[0]?.size ?? zarr?.shape ?? null;
        volumes.push({ key: `${d.name}/${l.name}`, dataType: normaliseDataType(dataType), size: Array.isArray(size) ? size : null, range: rangeOf(dataType) });
      }
    }
  } catch (e) {
    if (signal.aborted) throw e;
    // Volumes are optional metadata: without them the checks that need them are not made.
  }
  return {
    tables: listTables(doc).map((t) => ({ name: t.name, rows: t.rows, columns: t.columns.map((c) => c.name) })),
    volumes,
    jobs: listJobs(doc).map((j) => ({ id: j.id, kind: j.kind, status: j.status, input: j.input?.dataset && j.input.layer ? `${j.input.dataset}/${j.input.layer}` : null })),
  };
}

/** The facts as prompt text (bounded: at most 30 of each). */
export function factsText(f: DataFacts): string {
  const lines: string[] = [];
  for (const t of f.tables.slice(0, 30)) lines.push(`- table ${t.name}: ${t.rows} rows; columns ${t.columns.slice(0, 20).join(', ')}${t.columns.length > 20 ? ', …' : ''}`);
  for (const v of f.volumes.slice(0, 30)) lines.push(`- volume ${v.key}: ${v.dataType}${v.size ? `, size ${v.size.join('×')}` : ''}${v.range ? ` (values ${v.range[0]}–${v.range[1]})` : ''}`);
  for (const j of f.jobs.slice(0, 30)) lines.push(`- job ${j.id}: ${j.kind} ${j.status}${j.input ? ` on ${j.input}` : ''}`);
  return lines.length ? lines.join('\n') : '(no tables, volumes or jobs)';
}
