import type Database from 'better-sqlite3';
/** Merges many updates into one in groups of `fan` (O(n log n)); null for none. */
export function mergeInTree(parts: Uint8Array[], fan?: number): Uint8Array | null;
/** The state `parts` (snapshot, then log entries) make, as one update, deleted content collected. */
export function foldUpdates(parts: Uint8Array[]): Uint8Array;
/** The same, in parts (packed) when larger than `partStructs` structs, else whole. */
export function foldToStorable(parts: Uint8Array[], partStructs?: number): Uint8Array;
/** Folds the log of `ws` into its snapshot (database `snap`) from stored data alone; the log entries stay until `dropFolded`. */
export function compactFromLog(db: Database.Database, ws: string, partStructs?: number): { folded: number; upto: number };
/** Stores a whole stored snapshot of `ws` again in parts when it is larger than one and unchanged; returns whether it did. */
export function cutStoredSnapshot(db: Database.Database, ws: string, snap: { upto: number; data: Uint8Array }, partStructs?: number): boolean;
/** Drops the log entries of `ws` a snapshot holds (up to `upto`); returns how many. */
export function dropFolded(db: Database.Database, ws: string, upto: number): number;
