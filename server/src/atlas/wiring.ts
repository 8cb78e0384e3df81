/**
 * Builds the server's `AtlasMaps` from its parts: document writes over a Hocuspocus direct
 * connection (server origin), the kernel's table directories (a map's tables are kernel tables),
 * the server's job limits for the projection processes, the upload limits for importing the
 * tables, the data-read limits for exporting selections and the embedding service of embeddings
 * maps. Effects: none until maps appear.
 */
import type { Hocuspocus } from '@hocuspocus/server';
import type { ServerConfig } from '../config.ts';
import { withDoc } from '../http/doc-access.ts';
import type { KernelManager } from '../kernel/manager.ts';
import type { Logger } from '../log.ts';
import { AtlasMaps } from './atlas-maps.ts';

/** DuckDB's memory limit while a map's tables are read (MB). */
const ATLAS_READ_MEMORY_MB = 256;

export function atlasMaps(deps: { config: ServerConfig; hocuspocus: () => Hocuspocus; kernels: KernelManager; log: Logger }): AtlasMaps {
  const { config, kernels } = deps;
  return new AtlasMaps({
    log: deps.log,
    change: (ws, f) => withDoc(deps.hocuspocus(), ws, f),
    tablesDir: (ws) => kernels.tablesDir(ws),
    workspaceDir: (ws) => kernels.workspaceDir(ws),
    limits: { memoryMb: config.jobMemoryMb, timeoutMs: config.jobTimeoutMs, nice: config.jobNice, concurrent: Math.max(1, config.jobConcurrency) },
    upload: { maxBytes: config.uploadMaxBytes, timeoutMs: config.uploadTimeoutMs, memoryMb: config.sqlMemoryMb },
    // A selection export reads and writes every row of the table once: the upload's time limit, not a query's.
    reads: { timeoutMs: config.uploadTimeoutMs, memoryMb: ATLAS_READ_MEMORY_MB },
    embeddings: config.embeddings,
  });
}
