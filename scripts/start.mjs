#!/usr/bin/env node
// `npm start`: builds the client when its build is missing or older than its sources, then runs
// the server with embedded defaults (SQLite under ./data, demo workspace on first run), and the
// agent as its own process when agent/src/main.ts exists and PLEXUS_AGENT is not 0 (it waits for
// the server and its token file itself; a crashed agent is restarted, the server never depends on
// it; it runs at nice 10, PLEXUS_AGENT_NICE, so the server gets the cores first). The server prints a ready-to-open owner link. Signals are forwarded to both so Ctrl+C
// flushes cleanly; when the server exits, the agent is stopped and this script exits too. With
// PLEXUS_KERNEL=external a kernel process of its own (`npm run kernel`) is supervised the same way.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureInstalled } from './ensure-install.mjs';
import { agentEnv, agentNice, superviseAgent } from './agent-process.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
ensureInstalled(root);
const dist = path.join(root, 'client/dist/index.html');

function newestMtime(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

const sources = Math.max(newestMtime(path.join(root, 'client/src')), newestMtime(path.join(root, 'shared/src')), fs.statSync(path.join(root, 'client/index.html')).mtimeMs);
if (!fs.existsSync(dist) || fs.statSync(dist).mtimeMs < sources) {
  console.log('Building the client (first start or sources changed)…');
  const r = spawnSync('npm', ['run', 'build', '-w', 'client'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('The client build failed; see above.');
    process.exit(r.status ?? 1);
  }
}

const server = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'server/src/main.ts')], { cwd: root, stdio: 'inherit', env: process.env });
const agentMain = path.join(root, 'agent/src/main.ts');
const agent =
  process.env.PLEXUS_AGENT !== '0' && fs.existsSync(agentMain)
    ? superviseAgent({ args: ['--import', 'tsx', agentMain], cwd: root, env: { ...process.env, ...agentEnv(process.env, root) }, nice: agentNice(process.env) })
    : null;
const kernel =
  process.env.PLEXUS_KERNEL === 'external'
    ? superviseAgent({ name: 'kernel process', args: ['--import', 'tsx', path.join(root, 'server/src/kernel/main.ts')], cwd: root, env: { ...process.env, PLEXUS_SERVER_URL: agentEnv(process.env, root).PLEXUS_SERVER_URL } })
    : null;
for (const sig of ['SIGINT', 'SIGTERM'])
  process.on(sig, () => {
    agent?.stop(sig);
    kernel?.stop(sig);
    server.kill(sig);
  });
server.on('exit', (code, signal) => {
  agent?.stop('SIGTERM');
  kernel?.stop('SIGTERM');
  process.exit(code ?? (signal ? 0 : 1));
});
