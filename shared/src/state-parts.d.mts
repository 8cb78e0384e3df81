/** True when `bytes` hold several parts (packStateParts), false for one plain update. */
export function isStateParts(bytes: Uint8Array): boolean;
/** `parts` (Yjs updates) in one byte string. */
export function packStateParts(parts: readonly Uint8Array[]): Uint8Array;
/** The updates in `bytes`: its parts (views into it) when it holds several, else `[bytes]`. Throws when malformed. */
export function unpackStateParts(bytes: Uint8Array): Uint8Array[];
