// The agent as its own process next to the server (`npm start`): where it finds the server and its
// token, and a supervisor that restarts it after a crash (non-zero exit, or killed by a signal
// other than SIGINT/SIGTERM) a few times, while the server keeps running whatever the agent does.
// Uses only Node built-ins.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const DEFAULT_PORT = 4455; // shared/src/protocol.ts DEFAULT_PORT

/**
 * The agent's environment additions: PLEXUS_SERVER_URL (HOST and PORT read as the server's config
 * reads them; a wildcard HOST is reached on loopback) and PLEXUS_AGENT_TOKEN_FILE
 * (`<PLEXUS_DATA_DIR or ./data>/agent.token`, relative to `root`, the server's working directory).
 */
export function agentEnv(env, root) {
  const host = env.HOST || '127.0.0.1';
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  const port = env.PORT || String(DEFAULT_PORT);
  return {
    PLEXUS_SERVER_URL: `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`,
    PLEXUS_AGENT_TOKEN_FILE: path.resolve(root, env.PLEXUS_DATA_DIR || './data', 'agent.token'),
  };
}

/**
 * Scheduling priority of the agent's process (Unix nice, 0–19; `PLEXUS_AGENT_NICE`, default 10).
 * The agent is a collaborator, not the path people's keystrokes take: on a machine it shares with
 * the sync server, the server (and the browsers on it) should get the cores first when both want
 * them. A model's tokens take tens of milliseconds each; a keystroke relayed late is felt.
 */
export function agentNice(env = process.env) {
  const n = Number(env.PLEXUS_AGENT_NICE || 10);
  return Number.isInteger(n) && n >= 0 && n <= 19 ? n : 10;
}

let niceCommand;
/** `nice(1)`, when this system has it (null otherwise: the process then runs at the server's priority). */
function findNice() {
  if (niceCommand === undefined) niceCommand = ['/usr/bin/nice', '/bin/nice'].find((f) => fs.existsSync(f)) ?? null;
  return niceCommand;
}

/**
 * The command that runs `node <args>` at nice level `nice`: through `nice(1)` at exec, so every
 * thread of the process (V8's and libuv's too) has it — `os.setPriority` on a running Node process
 * changes its main thread only. `nice` execs Node in its place: signals reach Node itself.
 */
export function nodeCommand(args, nice = 0) {
  const cmd = nice > 0 ? findNice() : null;
  return cmd ? { command: cmd, args: ['-n', String(nice), process.execPath, ...args] } : { command: process.execPath, args };
}

/**
 * Runs `node <args>` (the agent, or with `name` another service such as a kernel process), at nice
 * level `nice` (0: the caller's), and restarts it `restartDelayMs` after a crash, at most `maxRestarts` times.
 * A clean exit (code 0) or an exit by SIGINT/SIGTERM is logged in one line and not restarted.
 * Returns `stop(signal)`: no more restarts, the running agent gets `signal`.
 */
export function superviseAgent({ args, cwd, env, restartDelayMs = 2000, maxRestarts = 5, log = (line) => console.log(line), name = 'agent', nice = 0 }) {
  let child = null;
  let timer = null;
  let stopped = false;
  let restarts = 0;
  const start = () => {
    timer = null;
    const run = nodeCommand(args, nice);
    const proc = spawn(run.command, run.args, { cwd, env, stdio: 'inherit' });
    child = proc;
    proc.on('error', (e) => log(`The ${name} could not be started (${e.message}); the server keeps running.`));
    proc.on('exit', (code, signal) => {
      if (child === proc) child = null;
      if (stopped) return;
      if (code === 0 || signal === 'SIGINT' || signal === 'SIGTERM') {
        log(`The ${name} stopped (${signal ?? 'exit code 0'}); the server keeps running.`);
        return;
      }
      const why = signal ? `killed by ${signal}` : `exit code ${code}`;
      if (restarts >= maxRestarts) {
        log(`The ${name} crashed (${why}) and was restarted ${maxRestarts} times already; giving up. The server keeps running.`);
        return;
      }
      restarts++;
      log(`The ${name} crashed (${why}); restarting it in ${restartDelayMs / 1000} s (restart ${restarts} of ${maxRestarts}).`);
      timer = setTimeout(start, restartDelayMs);
    });
  };
  start();
  return {
    stop(signal = 'SIGTERM') {
      stopped = true;
      if (timer) clearTimeout(timer);
      child?.kill(signal);
    },
  };
}
