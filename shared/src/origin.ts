/**
 * Transaction origins: who changed the document. Every write helper takes one so that undo
 * (Y.UndoManager tracks origins by identity), audit and attribution work.
 * Pure module.
 */

/** A person editing through a browser or a script, identified by their user id. */
export interface UserOrigin {
  readonly kind: 'user';
  readonly userId: string;
  readonly name?: string;
}
/** The LLM agent acting within one run. */
export interface AgentOrigin {
  readonly kind: 'agent';
  readonly runId: string;
}
/** The notebook kernel writing outputs and status. */
export interface KernelOrigin {
  readonly kind: 'kernel';
}
/** The server itself (seeding, migrations, imports). */
export interface ServerOrigin {
  readonly kind: 'server';
  readonly reason: string;
}

export type Origin = UserOrigin | AgentOrigin | KernelOrigin | ServerOrigin;

/** Creates a user origin. Keep the returned object: undo managers compare origins by identity. */
export const userOrigin = (userId: string, name?: string): UserOrigin => ({ kind: 'user', userId, name });
/** Creates an agent origin for one run. */
export const agentOrigin = (runId: string): AgentOrigin => ({ kind: 'agent', runId });
/** The kernel's origin (one shared object). */
export const KERNEL_ORIGIN: KernelOrigin = Object.freeze({ kind: 'kernel' });
/** Creates a server origin naming why the server wrote. */
export const serverOrigin = (reason: string): ServerOrigin => ({ kind: 'server', reason });

/** True when a Yjs transaction origin is one of ours. */
export function isPlexusOrigin(o: unknown): o is Origin {
  if (!o || typeof o !== 'object') return false;
  const k = (o as { kind?: unknown }).kind;
  return k === 'user' || k === 'agent' || k === 'kernel' || k === 'server';
}

/** One-line label for logs and audit entries. */
export function describeOrigin(o: Origin): string {
  switch (o.kind) {
    case 'user':
      return `user:${o.userId}`;
    case 'agent':
      return `agent:${o.runId}`;
    case 'kernel':
      return 'kernel';
    case 'server':
      return `server:${o.reason}`;
  }
}
