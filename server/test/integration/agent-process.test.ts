/**
 * `npm start`'s agent process (scripts/agent-process.mjs): where it is told to find the server and
 * its token, and its supervision — restarts after crashes up to a limit, none after a clean exit
 * or a stop — with real child processes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentEnv, agentNice, superviseAgent } from '../../../scripts/agent-process.mjs';
import { waitFor, tempDirs } from '@plexus/testkit';

const dirs = tempDirs('plexus-agent-process-');
afterAll(() => dirs.cleanup());

/** A fake agent: appends a line to `runs` at each start, then does what `body` says. */
function fakeAgent(body: string): { script: string; runs: () => number } {
  const dir = dirs.make();
  const runs = path.join(dir, 'runs');
  const script = path.join(dir, 'agent.mjs');
  fs.writeFileSync(script, `import fs from 'node:fs';\nfs.appendFileSync(${JSON.stringify(runs)}, 'run\\n');\n${body}\n`);
  return { script, runs: () => (fs.existsSync(runs) ? fs.readFileSync(runs, 'utf8').split('\n').filter(Boolean).length : 0) };
}

describe('agent environment', () => {
  it('points at the server as its config reads HOST and PORT, and at <data dir>/agent.token', () => {
    expect(agentEnv({}, '/repo')).toEqual({ PLEXUS_SERVER_URL: 'http://127.0.0.1:4455', PLEXUS_AGENT_TOKEN_FILE: '/repo/data/agent.token' });
    expect(agentEnv({ HOST: '0.0.0.0', PORT: '5000', PLEXUS_DATA_DIR: '/srv/plexus' }, '/repo')).toEqual({
      PLEXUS_SERVER_URL: 'http://127.0.0.1:5000',
      PLEXUS_AGENT_TOKEN_FILE: '/srv/plexus/agent.token',
    });
    expect(agentEnv({ HOST: '10.1.2.3', PLEXUS_DATA_DIR: 'var/data' }, '/repo')).toEqual({
      PLEXUS_SERVER_URL: 'http://10.1.2.3:4455',
      PLEXUS_AGENT_TOKEN_FILE: '/repo/var/data/agent.token',
    });
    expect(agentEnv({ HOST: '::' }, '/repo').PLEXUS_SERVER_URL).toBe('http://[::1]:4455');
  });
});

describe('agent priority', () => {
  it('is nice 10 unless PLEXUS_AGENT_NICE says otherwise (0–19)', () => {
    expect(agentNice({})).toBe(10);
    expect(agentNice({ PLEXUS_AGENT_NICE: '0' })).toBe(0);
    expect(agentNice({ PLEXUS_AGENT_NICE: '19' })).toBe(19);
    expect(agentNice({ PLEXUS_AGENT_NICE: '25' })).toBe(10);
    expect(agentNice({ PLEXUS_AGENT_NICE: 'low' })).toBe(10);
    expect(agentNice({ PLEXUS_AGENT_NICE: '' })).toBe(10);
  });

  it('runs the supervised process at that nice level, every thread of it (V8 and libuv threads too)', async () => {
    // Each thread's nice value is field 19 of /proc/self/task/<tid>/stat (after the parenthesised name).
    const agent = fakeAgent(`const nices = fs.readdirSync('/proc/self/task').map((t) => Number(fs.readFileSync('/proc/self/task/' + t + '/stat', 'utf8').replace(/^.*\\) /s, '').split(' ')[16]));\nfs.writeFileSync('NICE', JSON.stringify(nices));\nprocess.exit(0);`);
    const cwd = dirs.make();
    const lines: string[] = [];
    superviseAgent({ args: [agent.script], cwd, env: process.env, log: (l) => lines.push(l), nice: 7 });
    await waitFor(() => lines.length > 0 || null, { message: 'the fake agent exited' });
    const nices = JSON.parse(fs.readFileSync(path.join(cwd, 'NICE'), 'utf8')) as number[];
    const expected = Math.min(19, os.getPriority() + 7);
    expect(nices.length).toBeGreaterThan(1);
    expect(new Set(nices)).toEqual(new Set([expected]));
  });
});

describe('agent supervision', () => {
  it('restarts a crashing agent at most maxRestarts times, then gives up with one line', async () => {
    const agent = fakeAgent('process.exit(3);');
    const lines: string[] = [];
    superviseAgent({ args: [agent.script], cwd: dirs.make(), env: process.env, restartDelayMs: 20, maxRestarts: 5, log: (l) => lines.push(l) });
    await waitFor(() => lines.some((l) => /giving up/.test(l)), { message: 'supervisor gave up' });
    expect(agent.runs()).toBe(6);
    expect(lines.filter((l) => /restarting it/.test(l))).toHaveLength(5);
    expect(lines[0]).toMatch(/crashed \(exit code 3\); restarting it in 0\.02 s \(restart 1 of 5\)/);
  });

  it('names what it supervises (npm start supervises a kernel process the same way)', async () => {
    const kernel = fakeAgent('process.exit(0);');
    const lines: string[] = [];
    superviseAgent({ name: 'kernel process', args: [kernel.script], cwd: dirs.make(), env: process.env, log: (l) => lines.push(l) });
    await waitFor(() => lines.length > 0 || null, { message: 'the supervisor reported the exit' });
    expect(lines).toEqual(['The kernel process stopped (exit code 0); the server keeps running.']);
  });

  it('does not restart an agent that exits cleanly', async () => {
    const agent = fakeAgent('process.exit(0);');
    const lines: string[] = [];
    const sup = superviseAgent({ args: [agent.script], cwd: dirs.make(), env: process.env, restartDelayMs: 20, log: (l) => lines.push(l) });
    await waitFor(() => lines.length === 1, { message: 'exit logged' });
    expect(lines[0]).toMatch(/agent stopped .*server keeps running/);
    sup.stop();
    expect(agent.runs()).toBe(1);
  });

  it('stops a running agent with the given signal and does not restart it', async () => {
    const agent = fakeAgent(`fs.writeFileSync(${JSON.stringify('PID')}, String(process.pid));\nsetInterval(() => {}, 1000);`);
    const cwd = dirs.make();
    const lines: string[] = [];
    const sup = superviseAgent({ args: [agent.script], cwd, env: process.env, restartDelayMs: 20, log: (l) => lines.push(l) });
    const pid = Number(await waitFor(() => fs.existsSync(path.join(cwd, 'PID')) && fs.readFileSync(path.join(cwd, 'PID'), 'utf8'), { message: 'agent running' }));
    sup.stop('SIGTERM');
    await waitFor(() => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }, { message: 'agent gone' });
    expect(agent.runs()).toBe(1);
    expect(lines).toEqual([]);
  });
});
