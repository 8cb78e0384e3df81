import type pg from 'pg';
/** Advisory lock key (first half) of compactions. */
export const COMPACTION_LOCK: number;
/** Folds the log of `ws` into its snapshot in one transaction under the workspace's compaction lock (see compaction.mjs). */
export function compactWorkspace(
  client: pg.ClientBase,
  ws: string,
  opts?: { wait?: boolean; state?: Uint8Array | null; fence?: number; partStructs?: number },
): Promise<{ folded: number; upto: number; busy: boolean; fenced?: boolean }>;
