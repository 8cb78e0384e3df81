/**
 * Where a workspace's clients go: this node when it holds the workspace's lease or nobody does
 * (loading it then takes the lease: ownership.ts), the holder's URL when another live node holds
 * it, or nowhere for now when the holder is gone but its lease has not expired yet, or when Redis
 * cannot be asked (the client is told to reconnect and tries again).
 * Effects: network (Redis).
 */
import type { NodeDirectory } from './node-directory.ts';
import type { WorkspaceLeases } from './workspace-leases.ts';

export type Route = { kind: 'local' } | { kind: 'remote'; node: string; url: string } | { kind: 'unavailable'; why: string };

/** Header a node sets on what it relays to another node: the receiver never relays it further. */
export const RELAY_HEADER = 'x-plexus-relayed-by';

/**
 * The URL on node `base` for a client's request target `target` (origin-form only: a path and a
 * query). Anything else — an absolute URL, `//host/…`, a missing leading slash — is refused with
 * null: the client must never choose where a node sends its request.
 */
export function relayTarget(base: string, target: string | undefined): URL | null {
  if (!target || !target.startsWith('/') || target.startsWith('//')) return null;
  let parsed: URL;
  try {
    parsed = new URL(target, 'http://relay.invalid');
  } catch {
    return null;
  }
  if (parsed.host !== 'relay.invalid') return null;
  const out = new URL(base);
  out.pathname = parsed.pathname;
  out.search = parsed.search;
  return out;
}

export class WorkspaceRouter {
  constructor(
    private readonly leases: WorkspaceLeases,
    private readonly nodes: NodeDirectory,
    private readonly nodeId: string,
    /** Workspaces this node dropped but still has loaded (ownership.ts): not served until unloaded. */
    private readonly unloading: (ws: string) => boolean,
  ) {}

  async route(ws: string): Promise<Route> {
    if (this.leases.held(ws)) return { kind: 'local' };
    let holder: string | null;
    try {
      holder = await this.leases.holder(ws);
    } catch (e) {
      return { kind: 'unavailable', why: `coordination (Redis) unreachable: ${(e as Error).message}` };
    }
    if (!holder || holder === this.nodeId) {
      if (this.unloading(ws)) return { kind: 'unavailable', why: 'this node is still unloading its old copy' };
      return { kind: 'local' };
    }
    let url: string | null;
    try {
      url = await this.nodes.urlOf(holder);
    } catch (e) {
      return { kind: 'unavailable', why: `coordination (Redis) unreachable: ${(e as Error).message}` };
    }
    if (!url) return { kind: 'unavailable', why: `the node serving it (${holder}) is gone; its lease ends within ${this.leases.leaseMs} ms` };
    return { kind: 'remote', node: holder, url };
  }
}
