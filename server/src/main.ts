/**
 * Entry point: `npm start` runs this (after building the client). Prints a ready-to-open owner
 * link and flushes everything on SIGTERM/SIGINT. Effects: process-wide.
 */
import { loadConfig } from './config.ts';
import { startServer } from './app.ts';
import { DEMO_WORKSPACE_ID } from './demo.ts';

const config = loadConfig();
const server = await startServer(config);
const link = `${config.publicUrl ?? server.url}/?token=${server.ownerToken}`;
const demo = server.store.get(DEMO_WORKSPACE_ID) ? `${config.publicUrl ?? server.url}/w/${DEMO_WORKSPACE_ID}?token=${server.ownerToken}` : null;
if (process.env.PLEXUS_READY_JSON === '1') {
  // Machine-readable line for tests and scripts that start the server as a child process.
  process.stdout.write(JSON.stringify({ ready: true, port: server.port, url: server.url, ownerToken: server.ownerToken }) + '\n');
} else {
  process.stdout.write(`\n  Plexus is running.\n\n  Open your workspaces:  ${link}\n${demo ? `  Or the demo directly:  ${demo}\n` : ''}\n  Data: ${config.dataDir}   Stop: Ctrl+C\n\n`);
}

let stopping = false;
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    server.close().then(
      () => process.exit(0),
      (e) => {
        console.error(e);
        process.exit(1);
      },
    );
  });
}
