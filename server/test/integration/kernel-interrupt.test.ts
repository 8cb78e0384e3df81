/**
 * Interrupt decides between a soft stop and a kill by what the runner did after the signal, not
 * by the clock alone: a runner waiting for the CPU is waited for (a busy machine must not cost
 * people their values), one that sleeps where the signal does not reach is killed after the
 * grace, one that runs on regardless once it has had its CPU grace. And a cell blocked in a native
 * wait still stops softly, its values kept.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { analyzeCell, readKernelStatus, requestInterrupt, requestRun } from '@plexus/shared';
import { tmpDir, waitFor } from '@plexus/testkit';
import { addCell, alice, aliceOrigin, client, finished, kernelSuite, newWorkspace, shown, waitRun } from '@plexus/testkit/kernel';
import { compileJsCell } from '../../src/kernel/compile.ts';
import { JsRuntime, interruptVerdict, sigintSafe, type RunInput } from '../../src/kernel/js-runtime.ts';

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

  it('signals a cell only inside the vm watchdog (after the runner said `armed`), once it ran or slept there', () => {
    const base = { armed: true, syncDone: false, sinceArmedMs: 0, cpuSinceArmedMs: 0, state: 'R', minCpuMs: 30, minWaitMs: 100 };
    // Not yet in runInContext (or setting its watchdog up): SIGINT would kill the runner.
    expect(sigintSafe({ ...base, armed: false, sinceArmedMs: 60_000, cpuSinceArmedMs: 60_000 })).toBe(false);
    // Its synchronous part returned (Node is taking the watchdog down, or did): the message does it.
    expect(sigintSafe({ ...base, syncDone: true, cpuSinceArmedMs: 1000 })).toBe(false);
    // Just armed: a short cell may be leaving the watchdog already.
    expect(sigintSafe({ ...base, sinceArmedMs: 5000, cpuSinceArmedMs: 10 })).toBe(false);
    expect(sigintSafe({ ...base, cpuSinceArmedMs: 30 })).toBe(true);
    // Asleep inside the cell (a native wait), or where /proc cannot be read: after a while.
    expect(sigintSafe({ ...base, sinceArmedMs: 100, state: 'S' })).toBe(true);
    expect(sigintSafe({ ...base, sinceArmedMs: 50, state: 'S' })).toBe(false);
    expect(sigintSafe({ ...base, sinceArmedMs: 100, cpuSinceArmedMs: null, state: null })).toBe(true);
  });

  it('an Interrupt that arrives before the runner reached the cell is kept for it: the loop stops softly, the values stay', async () => {
    const cell = (source: string, runId: string): RunInput => {
      const a = analyzeCell('code', source);
      const c = compileJsCell(source, a, []);
      return { runId, code: c.code, shifts: c.shifts, inputs: [], filename: `cell-${runId}.js`, watchdog: a.mayLoop !== false };
    };
    // A long cell limit: only the interrupt can end the loop in time.
    const rt = new JsRuntime({ cwd: tmpDir(), memoryMb: 256, timeoutMs: 600_000, maxFrameBytes: 1 << 20 });
    try {
      expect((await rt.run(cell('const kept = 41;', 'x_kept'), () => {})).ok).toBe(true);
      // The runner has not read the run yet (as a starved one on a loaded machine): it is stopped
      // until the interrupt has been asked for. Without waiting for `armed`, the SIGINT landed
      // there — lost (the loop then ran until the kill) or, a little later, fatal.
      const state = () => fs.readFileSync(`/proc/${rt.pid}/stat`, 'utf8').split(') ')[1]![0];
      process.kill(rt.pid!, 'SIGSTOP');
      await waitFor(() => state() === 'T', { message: 'runner stopped' });
      const loop = rt.run(cell('while (true) {}', 'x_loop'), () => {});
      await new Promise((r) => setImmediate(r)); // run() has sent the run (its start() had resolved)
      rt.interrupt();
      process.kill(rt.pid!, 'SIGCONT');
      const out = await loop;
      expect(out.fatal).toBeUndefined();
      expect(JSON.stringify(out.error)).toMatch(/interrupted/i);
      expect(await rt.get(['kept'])).toMatchObject({ values: { kept: 41 }, missing: [] });
    } finally {
      await rt.dispose();
    }
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
