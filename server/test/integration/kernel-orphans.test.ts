/**
 * A kernel child never outlives its server: killed with -9 while user code spins synchronously
 * (so the child cannot notice its closed stdin), the server's children die with it (`setpriv
 * --pdeathsig KILL`, sandbox.ts) instead of burning a CPU for the rest of their 24 h limit.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, waitFor } from '@plexus/testkit';
import { sandboxCaps } from '../../src/kernel/sandbox.ts';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('kernel children and a killed server', () => {
  it('a child spinning in user code dies when its parent is killed with -9', async () => {
    expect(sandboxCaps().pdeathsig).toBe(true); // Debian's util-linux has it; its absence is worth a failure here
    // The parent: launches a sandboxed Node child the way kernels do, prints its pid, then waits.
    const parentSource = `
      import { spawn } from 'node:child_process';
      import { launchCommand } from ${JSON.stringify(path.join(repoRoot, 'server/src/kernel/sandbox.ts'))};
      const { cmd, args, layers } = launchCommand({ nodeArgs: ['-e', 'process.stdout.write("spinning\\\\n"); for (;;) {}'], limits: { cpuSeconds: 600 }, isolateNetwork: false });
      const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
      child.stdout.once('data', () => process.stdout.write(JSON.stringify({ pid: child.pid, layers }) + '\\n'));
      setInterval(() => {}, 1000);
    `;
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', parentSource], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
    const started = await new Promise<{ pid: number; layers: string[] }>((resolve, reject) => {
      let buf = '';
      parent.stdout!.on('data', (d) => {
        buf += d;
        const line = buf.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve(JSON.parse(line));
      });
      parent.once('exit', (code) => reject(new Error(`the parent exited with ${code}`)));
    });
    try {
      expect(started.layers).toContain('pdeathsig');
      expect(alive(started.pid)).toBe(true);
      parent.kill('SIGKILL');
      await waitFor(() => !alive(started.pid), { timeout: 30_000, message: 'the spinning child to die with its parent' });
    } finally {
      parent.kill('SIGKILL');
      if (alive(started.pid)) process.kill(started.pid, 'SIGKILL'); // a failed test leaves no spinning orphan
    }
  }, 120_000);
});
