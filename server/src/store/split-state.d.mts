/** Structs per part by default. */
export const PART_STRUCTS: number;
/** `state` as it is best stored: several parts in one byte string when larger than one part (0: never cut). */
export function storableState(state: Uint8Array, partStructs?: number): Uint8Array;
/** The parts of a complete state `update`, each applying completely after the ones before it; `[update]` when small. */
export function splitUpdate(update: Uint8Array, partStructs?: number): Uint8Array[];
/** A document's state in parts as `splitUpdate` cuts it, from its own structs; null when not larger than one part or when it holds pending structs. */
export function splitDoc(doc: import('yjs').Doc, partStructs?: number): Uint8Array[] | null;
/** `doc`'s state in parts as `splitDoc` cuts it, a bounded share of the work per `next()` (null: a step that wrote no part); null when not larger than one part or when it holds pending structs. */
export function cutDocInSteps(doc: import('yjs').Doc, partStructs?: number): Iterator<Uint8Array | null, void> | null;
