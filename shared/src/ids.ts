/**
 * Branded ids and their factory. Pure module (uses the global Web Crypto, present in Node 20
 * and every browser).
 */
declare const brand: unique symbol;
export type Brand<T, B extends string> = T & { readonly [brand]: B };

export type CellId = Brand<string, 'CellId'>;
export type MessageId = Brand<string, 'MessageId'>;
export type RunId = Brand<string, 'RunId'>;
export type WorkspaceId = Brand<string, 'WorkspaceId'>;

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Random id of `len` base-36 characters (about 5.2 bits each). */
export function randomId(len = 12): string {
  const bytes = new Uint8Array(len);
  globalThis.crypto.getRandomValues(bytes);
  let s = '';
  for (const b of bytes) s += ALPHABET[b % 36];
  return s;
}

/** New cell id. */
export const newCellId = (): CellId => `c_${randomId()}` as CellId;
/** New chat message id. */
export const newMessageId = (): MessageId => `m_${randomId()}` as MessageId;
/** New agent run id. */
export const newRunId = (): RunId => `r_${randomId()}` as RunId;
/** New workspace id (also the Hocuspocus document name). */
export const newWorkspaceId = (): WorkspaceId => `w_${randomId(10)}` as WorkspaceId;

/** Workspace ids are document names: keep them URL- and file-safe. */
export const WORKSPACE_ID_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
/** True when `s` is a syntactically valid workspace id. */
export const isWorkspaceId = (s: string): s is WorkspaceId => WORKSPACE_ID_PATTERN.test(s);
