/**
 * Entry point: `npm start` runs this (after building the client). Prints a ready-to-open owner
 * link, and drains on SIGTERM/SIGINT (app.ts `drain`), then exits 0. Effects: process-wide.
 */
import { loadConfig } from './config.ts';
import { startServer } from './app.ts';
import { DEMO_WORKSPACE_ID } from './demo.ts';

const config = loadConfig();
const server = await startServer(config);
const link = `${config.publicUrl ?? server.url}/?token=${server.ownerToken}`;
const demo = (await server.store.get(DEMO_WORKSPACE_ID)) ? `${config.publicUrl ?? server.url}/w/${DEMO_WORKSPACE_ID}?token=${server.ownerToken}` : null;
if (process.env.PLEXUS_READY_JSON === '1') {
  // Machine-readable line for tests and scripts that start the server as a child process.
  process.stdout.write(JSON.stringify({ ready: true, port: server.port, url: server.url, ownerToken: server.ownerToken }) + '\n');
} else {
  process.stdout.write(`\n  Plexus is running.\n\n  Open your workspaces:  ${link}\n${demo ? `  Or the demo directly:  ${demo}\n` : ''}\n  Data: ${config.dataDir}   Stop: Ctrl+C\n\n`);
}

// The first SIGTERM/SIGINT drains (new clients refused, requests in flight finished, at most
// PLEXUS_DRAIN_MS), flushes and closes every WebSocket with 1012 server-draining; a second one
// stops without waiting for the drain.
let signals = 0;
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.on(sig, () => {
    const stopped = signals++ === 0 ? server.drain() : server.close();
    stopped.then(
      () => process.exit(0),
      (e) => {
        server.log.error('stopping failed', { err: e });
        process.exit(1);
      },
    );
  });
}
