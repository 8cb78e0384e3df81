/**
 * Interrupt decides between a soft stop and a kill by what the runner did after the signal, not
 * by the clock alone: a runner waiting for the CPU is waited for (a busy machine must not cost
 * people their values), one that sleeps where the signal does not reach is killed after the
 * grace, one that runs on regardless once it has had its CPU grace. And a cell blocked in a native
 * wait still stops softly, its values kept.
 */
import { describe, expect, it } from 'vitest';
import { readKernelStatus, requestInterrupt, requestRun } from '@plexus/shared';
import { addCell, alice, aliceOrigin, client, finished, kernelSuite, newWorkspace, shown, waitRun } from '@plexus/testkit/kernel';
import { interruptVerdict } from '../../src/kernel/js-runtime.ts';

const ctx = kernelSuite();
const base = { graceMs: 4000, cpuGraceMs: 2000, maxWaitMs: 60_000 };

describe('interrupt', () => {
  it('kills only a runner that ran and did not stop, or sleeps past the grace — never one waiting for the CPU', () => {
    // A busy machine: 30 s after the signal, runnable, 50 ms of CPU: wait (the old 4 s deadline killed it).
    expect(interruptVerdict({ ...base, waitedMs: 30_000, cpuMs: 50, state: 'R' })).toBe('wait');
    expect(interruptVerdict({ ...base, waitedMs: 1000, cpuMs: 2500, state: 'R' })).toBe('kill');
    expect(interruptVerdict({ ...base, waitedMs: 4200, cpuMs: 0, state: 'S' })).toBe('kill');
    expect(interruptVerdict({ ...base, waitedMs: 3000, cpuMs: 0, state: 'S' })).toBe('wait');
    expect(interruptVerdict({ ...base, waitedMs: 60_000, cpuMs: 0, state: 'R' })).toBe('kill');
    // Without /proc: the wall-clock grace.
    expect(interruptVerdict({ ...base, waitedMs: 3000, cpuMs: null, state: null })).toBe('wait');
    expect(interruptVerdict({ ...base, waitedMs: 4000, cpuMs: null, state: null })).toBe('kill');
  });

  it('a cell blocked in a native wait (Atomics.wait) stops softly and the values stay', async () => {
    const ws = await newWorkspace(ctx.server);
    const a = await client(ctx.server, ws, ctx.clients);
    const kept = addCell(a.doc, 'code', 'const kept = 41; kept');
    requestRun(a.doc, kept, alice, aliceOrigin);
    await waitRun(a.doc, kept, (r) => r.state === 'done');
    const stuck = addCell(a.doc, 'code', 'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); "never"');
    requestRun(a.doc, stuck, alice, aliceOrigin);
    await waitRun(a.doc, stuck, (r) => r.state === 'running', 'the blocked cell running');
    const gen = readKernelStatus(a.doc).generation;
    requestInterrupt(a.doc, alice, aliceOrigin);
    const v = await waitRun(a.doc, stuck, finished, 'the blocked cell ended');
    expect(v.state).toBe('cancelled');
    expect(JSON.stringify(v.outputs)).not.toContain('values were lost');
    const reader = addCell(a.doc, 'code', 'kept + 1');
    requestRun(a.doc, reader, alice, aliceOrigin);
    expect(shown(await waitRun(a.doc, reader, (r) => r.state === 'done'))).toBe('42');
    expect(readKernelStatus(a.doc).generation).toBe(gen);
  });
});
