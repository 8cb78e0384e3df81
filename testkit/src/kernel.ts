/**
 * Helpers for kernel integration tests: a real server with its kernel, workspaces created through
 * the API, stock Hocuspocus clients, and waiting on a cell's run state as any client reads it.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import type * as Y from 'yjs';
import { createCell, readCellRun, readKernelStatus, userOrigin, type CellKind, type CellRunView, type UserOrigin } from '@plexus/shared';
import type { ServerConfig } from '@plexus/server/config';
import type { PlexusServer, ServerHooks } from '@plexus/server/app';
import type { WorkspaceKernel } from '@plexus/server/kernel/workspace-kernel';
import { Gates } from './gates.ts';
import { api, hocuspocusClient, startTestServer, type HpClient } from './plexus.ts';
import { waitFor } from './wait.ts';

/** A server whose kernels use short limits suited to tests. */
export function startKernelServer(overrides: Partial<ServerConfig> = {}, hooks: ServerHooks = {}): Promise<PlexusServer> {
  return startTestServer({ kernel: true, cellTimeoutMs: 3000, cellMemoryMb: 256, sqlMemoryMb: 256, kernelIdleMs: 600_000, ...overrides }, hooks);
}

/**
 * One server (with kernel) for a test file, the clients to close after it, and the gates its
 * cells can wait on (`gateCall` in a cell's source; see gates.ts).
 */
export function kernelSuite(overrides: Partial<ServerConfig> = {}): { server: PlexusServer; clients: HpClient[]; gates: Gates } {
  const ctx = { server: null as unknown as PlexusServer, clients: [] as HpClient[], gates: new Gates() };
  beforeAll(async () => {
    ctx.server = await startKernelServer(overrides, { wrapSample: ctx.gates.wrapSample });
  });
  afterAll(async () => {
    ctx.gates.openAll();
    ctx.clients.forEach((c) => c.destroy());
    await ctx.server.close();
    // The in-server kernel writes on the live document, past the checks clients' updates get:
    // whatever the file's tests made it do must have kept the schema's rules for the kernel.
    expect(ctx.server.kernels?.schemaViolations ?? 0).toBe(0);
  });
  return ctx;
}

/** The live kernel of a workspace (in-process server): its replica is what the kernel has seen. */
export function kernelOf(server: PlexusServer, ws: string): WorkspaceKernel {
  const k = server.kernels?.get(ws);
  if (!k) throw new Error(`no kernel runs for ${ws}`);
  return k;
}

/** Waits until the workspace's kernel has nothing running or queued (read in-process, not from a possibly older status). */
export function kernelIdle(server: PlexusServer, ws: string): Promise<unknown> {
  return waitFor(() => !kernelOf(server, ws).busy, { message: 'kernel idle', timeout: 60_000 });
}

/** Creates a workspace and returns its id. */
export async function newWorkspace(server: PlexusServer, name = 'Kernel test'): Promise<string> {
  const res = await api(server.url, server.ownerToken, 'POST', '/api/workspaces', { name });
  expect(res.status).toBe(201);
  return res.json.workspace.id as string;
}

/** A connected, synced client whose workspace has a live kernel. */
export async function client(server: PlexusServer, ws: string, clients: HpClient[]): Promise<HpClient> {
  const c = hocuspocusClient(server.url, ws, server.ownerToken);
  clients.push(c);
  await c.synced;
  await waitFor(() => readKernelStatus(c.doc).state !== 'offline', { message: 'kernel online', timeout: 60_000 });
  return c;
}

export const alice = { id: 'alice', name: 'Alice' };
export const bob = { id: 'bob', name: 'Bob' };
export const aliceOrigin: UserOrigin = userOrigin('alice', 'Alice');
export const bobOrigin: UserOrigin = userOrigin('bob', 'Bob');

/** Adds a cell as Alice. */
export function addCell(doc: Y.Doc, kind: CellKind, source: string, name?: string) {
  return createCell(doc, { kind, source, author: 'alice', ...(name ? { name } : {}) }, aliceOrigin);
}

/** Waits until the cell's run view satisfies `pred`; returns it. */
export function waitRun(doc: Y.Doc, cellId: string, pred: (v: CellRunView) => boolean, message = `cell ${cellId}`, timeout = 60_000): Promise<CellRunView> {
  return waitFor<CellRunView | null>(
    () => {
      const v = readCellRun(doc, cellId);
      return v && pred(v) ? v : null;
    },
    { message, timeout, interval: 5 },
  ) as Promise<CellRunView>;
}

/** The text a finished cell shows (its text output, or error message). */
export function shown(v: CellRunView): string {
  return v.outputs.map((o) => (o.type === 'text' ? o.text : o.type === 'error' ? `${o.name}: ${o.message}` : o.type === 'stream' ? `[${o.name}] ${o.text}` : JSON.stringify(o))).join(' | ');
}

/** Terminal states. */
export const finished = (v: CellRunView) => v.state === 'done' || v.state === 'error' || v.state === 'cancelled';
