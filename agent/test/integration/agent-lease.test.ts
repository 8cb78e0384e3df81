/**
 * One agent runner per workspace: two agent processes (two real peers with their own model) on
 * one server. Only the lease holder joins and runs; every run is run exactly once and nobody marks
 * another's runs "restarted". When the holder crashes (stops renewing; its lease runs out — forced
 * here, so no test waits on a clock) the standby takes over and fails the run left hanging; when a
 * holder shuts down cleanly the standby takes over at once and fails nothing. A runner joins with
 * the token its lease came with, and the server refuses its writes once another runner holds it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CloseCodes, agentOrigin, listMessages, listRuns, postMessage } from '@plexus/shared';
import { hocuspocusClient, waitFor } from '@plexus/testkit';
import { ask, agentSuite, startAgent, waitRunEnd, type AgentUnderTest } from '@plexus/testkit/agent';

const suite = agentSuite();
const ctx = suite.ctx;
// A lease that never runs out by itself in these tests; standby peers ask often.
const LEASE = { PLEXUS_AGENT_LEASE_MS: '600000', PLEXUS_AGENT_LEASE_POLL_MS: '40' };
const started: AgentUnderTest[] = [];
afterEach(async () => {
  for (const a of started.splice(0)) await a.close().catch(() => {});
});
const start = async (ws: string, turns: Parameters<typeof startAgent>[2]) => {
  const a = await startAgent(ctx.server, ws, turns, LEASE);
  started.push(a);
  return a;
};

describe('one agent runner per workspace', () => {
  it('a second agent process stays on standby: each run is run once, by the holder, and none is marked restarted', async () => {
    const { ws, a } = await suite.workspace();
    const first = await start(ws, { turns: [{ text: 'From the first.', repeat: true }] });
    const second = await start(ws, { turns: [{ text: 'From the second.', repeat: true }] });
    expect(first.peer.holdsLease).toBe(true);
    expect(second.peer.holdsLease).toBe(false);
    expect(ctx.server.agentLeases.holder(ws)).toBe(first.peer.runner);

    const runs = [ask(a.doc, 'one'), ask(a.doc, 'two'), ask(a.doc, 'three')];
    for (const id of runs) expect((await waitRunEnd(a.doc, id)).status).toBe('done');
    expect(first.llm.conversation.length).toBe(3);
    expect(second.llm.conversation.length).toBe(0);
    expect(listRuns(a.doc).filter((r) => r.status !== 'done')).toEqual([]);
    // The standby never joined: one agent presence in the workspace.
    const agents = [...a.provider.awareness!.getStates().values()].filter((s) => (s as { user?: { kind?: string } }).user?.kind === 'agent');
    expect(agents).toHaveLength(1);

    // A clean shutdown hands over at once; nothing is failed.
    await first.close();
    await second.peer.whenHolding();
    const after = await waitRunEnd(a.doc, ask(a.doc, 'four'));
    expect(after.status).toBe('done');
    expect(second.llm.conversation.length).toBe(1);
    expect(listRuns(a.doc).map((r) => r.status)).toEqual(['done', 'done', 'done', 'done']);
    await second.close();
  });

  it('when the holder crashes mid-run, the standby takes over once its lease runs out, fails that run and serves new ones', async () => {
    const { ws, a } = await suite.workspace();
    const holder = await start(ws, { turns: [{ text: 'slow '.repeat(400), chunkSize: 5, delayMs: 20 }] });
    const standby = await start(ws, { turns: [{ text: 'Taking over.' }] });
    const hanging = ask(a.doc, 'a long answer');
    await waitFor(() => listRuns(a.doc).find((r) => r.id === hanging)?.status === 'running', { message: 'run started' });
    // Crash: the holder stops renewing and disappears without finishing its run.
    holder.peer.vanish();
    await holder.llm.close();
    expect(standby.peer.holdsLease).toBe(false);
    // The lease runs out. A renewal the holder sent just before it crashed may still reach the
    // server after that (seen under load: it renewed the lease for its whole term and the standby
    // waited forever), so the lease is expired until the standby has it.
    await waitFor(() => {
      if (ctx.server.agentLeases.holder(ws) !== standby.peer.runner) ctx.server.agentLeases.expire(ws);
      return standby.peer.holdsLease;
    }, { message: 'the standby to take the lease' });
    await standby.peer.whenHolding();
    const failed = await waitRunEnd(a.doc, hanging);
    expect(failed.status).toBe('error');
    expect(failed.reason).toMatch(/agent restarted/);
    expect((await waitRunEnd(a.doc, ask(a.doc, 'are you there?'))).status).toBe('done');
    await standby.close();
  });

  it('the lease endpoint is the agent’s alone and checks what it is given', async () => {
    const { ws } = await suite.workspace();
    const call = (token: string, body: unknown, method = 'POST') =>
      fetch(`${ctx.server.url}/api/agent/workspaces/${ws}/lease`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await call(ctx.server.ownerToken, { runner: 'x', ttlMs: 1000 })).status).toBe(403);
    const agentToken = ctx.server.signer.sign({ ws: '*', role: 'service', sub: 'service:agent', ttlSeconds: 60 });
    expect((await call(agentToken, { runner: '', ttlMs: 1000 })).status).toBe(400);
    expect((await call(agentToken, { runner: 'x', ttlMs: 5 })).status).toBe(400);
    expect(await (await call(agentToken, { runner: 'x', ttlMs: 60_000 })).json()).toMatchObject({ granted: true, holder: 'x', fresh: true });
    expect(await (await call(agentToken, { runner: 'y', ttlMs: 60_000 })).json()).toMatchObject({ granted: false, holder: 'x' });
    expect(await (await call(agentToken, { runner: 'x' }, 'DELETE')).json()).toEqual({ released: true });
    expect(await (await call(agentToken, { runner: 'y', ttlMs: 60_000 })).json()).toMatchObject({ granted: true, holder: 'y' });
  });

  it("a runner's writes are fenced by its lease: once another runner holds it, they are refused", async () => {
    const { ws, a } = await suite.workspace();
    const agentToken = ctx.server.signer.sign({ ws: '*', role: 'service', sub: 'service:agent', ttlSeconds: 60 });
    const lease = async (runner: string) =>
      (await fetch(`${ctx.server.url}/api/agent/workspaces/${ws}/lease`, { method: 'POST', headers: { authorization: `Bearer ${agentToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ runner, ttlMs: 60_000 }) })).json();
    const first = await lease('runner-a');
    expect(first).toMatchObject({ granted: true, fresh: true });
    expect(first.token).toBeTypeOf('string');
    // runner-a was paused past its lease (or cut off): runner-b holds it now.
    ctx.server.agentLeases.expire(ws);
    const second = await lease('runner-b');
    expect(second).toMatchObject({ granted: true, fresh: true });
    const author = { id: 'agent', name: 'Plexus agent', kind: 'agent' as const, color: '#888888' };
    const stale = hocuspocusClient(ctx.server.url, ws, first.token);
    const fresh = hocuspocusClient(ctx.server.url, ws, second.token);
    try {
      await Promise.all([stale.synced, fresh.synced]);
      postMessage(stale.doc, { author, text: 'late answer from runner-a' }, agentOrigin('r_stale'));
      const closed = await waitFor(() => stale.closes.find((c) => c.code === CloseCodes.LeaseLost.code) ?? null, { message: 'the stale runner refused' });
      expect(closed!.reason).toBe(CloseCodes.LeaseLost.reason);
      postMessage(fresh.doc, { author, text: 'answer from runner-b' }, agentOrigin('r_fresh'));
      await waitFor(() => listMessages(a.doc).some((m) => m.text === 'answer from runner-b') || null, { message: "runner-b's message reaches people" });
      expect(listMessages(a.doc).map((m) => m.text)).not.toContain('late answer from runner-a');
      expect(fresh.closes).toEqual([]);
      // The agent's global token reads documents but cannot write them: runners write with their lease's token.
      const global = hocuspocusClient(ctx.server.url, ws, agentToken);
      try {
        await global.synced;
        postMessage(global.doc, { author, text: 'written without a lease' }, agentOrigin('r_global'));
        expect((await waitFor(() => global.closes[0] ?? null, { message: 'the global token refused' })).reason).toBe(CloseCodes.ReadOnly.reason);
      } finally {
        global.destroy();
      }
    } finally {
      stale.destroy();
      fresh.destroy();
    }
  });
});
