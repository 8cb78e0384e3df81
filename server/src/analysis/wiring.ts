/**
 * Builds the server's `CalciumJobs` and `TiffImports` from their parts: document writes over a
 * Hocuspocus direct connection (server origin), live documents for stop signals, the server's job
 * limits, and (calcium) result tables stored the way uploads are (a sandboxed DuckDB import into
 * the workspace's tables) and registered in the workspace's data; people's ROI edits rewritten
 * into those tables (curated-rois.ts). Effects: none until jobs run.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Hocuspocus } from '@hocuspocus/server';
import { registerTable, serverOrigin, type DataTable, type JobRequester, type Origin } from '@plexus/shared';
import type * as Y from 'yjs';
import { nodeScratchDir, type ServerConfig } from '../config.ts';
import { withDoc } from '../http/doc-access.ts';
import type { KernelManager } from '../kernel/manager.ts';
import { importUpload } from '../kernel/uploads.ts';
import { fileTurn } from '../data/guarded-duckdb.ts';
import type { Logger } from '../log.ts';
import type { Volumes } from '../volumes/volume-store.ts';
import { CalciumJobs } from './calcium-jobs.ts';
import { CuratedRois } from './curated-rois.ts';
import type { CalciumJobSpec } from './calcium-job-main.ts';
import { TiffImports } from './tiff-jobs.ts';
import type { TiffImportSpec } from './tiff-import-main.ts';

/**
 * Registers a CSV file as table `name` of workspace `ws` (stored the way uploads are), replacing one
 * of that name, with `origin` (the calcium jobs' by default); `more` adds to its registry entry.
 */
export function resultTableRegistrar(deps: { config: ServerConfig; hocuspocus: Hocuspocus; kernels: KernelManager }, origin: Origin = serverOrigin('calcium')) {
  const { config, hocuspocus, kernels } = deps;
  return async (ws: string, name: string, csvFile: string, by: JobRequester, still?: (doc: Y.Doc) => boolean, more: Pick<DataTable, 'segmentSource'> = {}): Promise<void> => {
    // One registration of a table at a time (a job's result tables and people's ROI edits written
    // into them replace the same file: the file must match the registry), and no preview reads it
    // meanwhile.
    const release = await fileTurn(path.join(kernels.tablesDir(ws), `${name}.duckdb`));
    try {
      if (still && !(await withDoc(hocuspocus, ws, still))) return;
      const stat = fs.statSync(csvFile);
      const t = await importUpload({
        body: fs.createReadStream(csvFile),
        fileName: `${name}.csv`,
        tableName: name,
        contentLength: stat.size,
        tablesDir: kernels.tablesDir(ws),
        tmpDir: path.join(kernels.workspaceDir(ws), 'uploads-tmp'),
        limits: { maxBytes: Math.max(config.uploadMaxBytes, stat.size), timeoutMs: config.uploadTimeoutMs, memoryMb: config.sqlMemoryMb },
      });
      await withDoc(hocuspocus, ws, (doc) =>
        registerTable(doc, { name: t.name, fileName: `${name}.csv`, format: t.format, columns: t.columns, rows: t.rows, bytes: t.bytes, storedBytes: t.storedBytes, uploadedBy: { id: by.id, ...(by.name ? { name: by.name } : {}) }, created: Date.now(), ...more }, origin),
      );
    } finally {
      release();
    }
  };
}

/** People's ROI edits written into the result tables (they need the kernel too). */
export function curatedRois(deps: { config: ServerConfig; hocuspocus: Hocuspocus; kernels: KernelManager; volumes: Volumes; log: Logger }): CuratedRois {
  return new CuratedRois({ volumes: deps.volumes, log: deps.log, stateDir: (ws) => deps.kernels.workspaceDir(ws), registerTable: resultTableRegistrar(deps) });
}

/** The analysis jobs of a server (they need the kernel: their tables are kernel tables). */
export function calciumJobs(deps: { config: ServerConfig; hocuspocus: Hocuspocus; kernels: KernelManager; volumes: Volumes; log: Logger; wrapSpec?: (s: CalciumJobSpec) => CalciumJobSpec }): CalciumJobs {
  const { config, hocuspocus } = deps;
  return new CalciumJobs({
    dataDir: config.dataDir,
    scratchDir: nodeScratchDir(config),
    volumes: deps.volumes,
    log: deps.log,
    limits: { memoryMb: config.jobMemoryMb, timeoutMs: config.jobTimeoutMs, nice: config.jobNice, concurrent: Math.max(1, config.jobConcurrency) },
    change: (ws, f) => withDoc(hocuspocus, ws, f),
    wrapSpec: deps.wrapSpec,
    live: (ws) => (hocuspocus.documents.get(ws) as Y.Doc | undefined) ?? null,
    registerTable: resultTableRegistrar(deps),
  });
}

/** The TIFF recording imports of a server (no kernel needed: they only write served volumes). */
export function tiffImports(deps: { config: ServerConfig; hocuspocus: Hocuspocus; volumes: Volumes; log: Logger; wrapSpec?: (s: TiffImportSpec) => TiffImportSpec }): TiffImports {
  const { config, hocuspocus } = deps;
  return new TiffImports({
    dataDir: config.dataDir,
    scratchDir: nodeScratchDir(config),
    volumes: deps.volumes,
    log: deps.log,
    limits: { memoryMb: config.jobMemoryMb, timeoutMs: config.jobTimeoutMs, nice: config.jobNice, concurrent: Math.max(1, config.jobConcurrency) },
    maxBytes: config.recordingMaxBytes,
    change: (ws, f) => withDoc(hocuspocus, ws, f),
    live: (ws) => (hocuspocus.documents.get(ws) as Y.Doc | undefined) ?? null,
    wrapSpec: deps.wrapSpec,
  });
}
