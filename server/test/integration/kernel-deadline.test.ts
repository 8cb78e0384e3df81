/**
 * A cell's time limit counts the cell's own time, not time it waits for the server: a cell held
 * at a gate (a server call) longer than its limit finishes when the gate opens — on a loaded
 * machine an upload or a sample can take longer than a short limit, and the cell must not be
 * killed for it (a stressed run of the suite lost a gated cell this way). Time after the call
 * returns counts again: a cell that then waits forever on its own is still stopped.
 * The kernel suite's limit is 3 s; the holds below are longer than limit + slack by construction.
 */
import { describe, expect, it } from 'vitest';
import { readCellRun, readKernelStatus, requestRun } from '@plexus/shared';
import { gateCall, waitFor } from '@plexus/testkit';
import { addCell, alice, aliceOrigin, client, finished, kernelSuite, newWorkspace, shown, waitRun } from '@plexus/testkit/kernel';

const ctx = kernelSuite();
const LIMIT_AND_SLACK_MS = 3000 + 2000;

describe('cell time limit and server calls', () => {
  it('a cell held at a gate past its limit finishes when the gate opens, its values kept', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const kept = addCell(a.doc, 'code', 'const kept = 7; kept');
    requestRun(a.doc, kept, alice, aliceOrigin);
    await waitRun(a.doc, kept, (r) => r.state === 'done');
    const gen = readKernelStatus(a.doc).generation;
    ctx.gates.hold('long');
    const held = addCell(a.doc, 'code', `${gateCall('long')}\nkept * 6`);
    requestRun(a.doc, held, alice, aliceOrigin);
    await ctx.gates.arrived('long');
    // Held until the run has lasted longer than the limit and its slack (from the start the kernel
    // recorded, polled: a slow machine only makes the hold longer) — the old deadline killed it here.
    const running = await waitRun(a.doc, held, (r) => r.state === 'running' && !!r.exec);
    const started = running.exec!.startedAt;
    await waitFor(() => Date.now() - started > LIMIT_AND_SLACK_MS + 1000, { message: 'the hold to outlast the limit', timeout: 60_000, interval: 100 });
    expect(readCellRun(a.doc, held)!.state).toBe('running');
    ctx.gates.open('long');
    const v = await waitRun(a.doc, held, finished);
    expect(v.state, shown(v)).toBe('done');
    expect(shown(v)).toBe('42');
    expect(readKernelStatus(a.doc).generation).toBe(gen);
  });

  it('after the call returns the cell’s own time counts again: waiting forever on its own is stopped', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const forever = addCell(a.doc, 'code', `${gateCall('open')}\nawait new Promise(() => {});`);
    requestRun(a.doc, forever, alice, aliceOrigin);
    const v = await waitRun(a.doc, forever, finished);
    expect(v.state).toBe('error');
    expect(shown(v)).toMatch(/timed out after 3 s/);
  });
});
