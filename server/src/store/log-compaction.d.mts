import type Database from 'better-sqlite3';
/** Merges many updates into one in groups of `fan` (O(n log n)); null for none. */
export function mergeInTree(parts: Uint8Array[], fan?: number): Uint8Array | null;
/** Folds the log of `ws` into its snapshot from stored data alone; returns entries folded. */
export function compactFromLog(db: Database.Database, ws: string): number;
