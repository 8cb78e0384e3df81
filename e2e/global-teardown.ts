/**
 * Stops the server process that is current at the end of the run (tests may have restarted it)
 * and removes the temporary directory, unless PLEXUS_E2E_KEEP=1 (then its path is printed: it
 * holds the data and the server logs).
 */
import fs from 'node:fs';
import { readState, stopProcess } from './support/server.ts';

export default async function globalTeardown(): Promise<void> {
  const file = process.env.PLEXUS_E2E_STATE;
  if (!file || !fs.existsSync(file)) return;
  const state = readState(file);
  await stopProcess(state.pid);
  if (process.env.PLEXUS_E2E_KEEP === '1') console.log(`[e2e] server data and logs kept in ${state.root}`);
  else fs.rmSync(state.root, { recursive: true, force: true });
}
