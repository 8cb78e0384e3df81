/**
 * Starts one real Plexus server for the whole run (fresh temporary data directory, fixed port
 * 4477 or PLEXUS_E2E_PORT, falling back to any free port if that one is taken) and publishes its
 * coordinates to the workers through PLEXUS_E2E_STATE. Checks that the client is built.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_PORT, REPO_ROOT, spawnServer, writeState, type ServerState } from './support/server.ts';
import { demoDatasetDir, writeDemoDatasetAtomically } from '../server/src/volumes/demo/ensure-demo.ts';
import { E2E_DEMO_FRAMES } from './support/viewer.ts';

export default async function globalSetup(): Promise<void> {
  const index = path.join(REPO_ROOT, 'client/dist/index.html');
  if (!fs.existsSync(index)) {
    throw new Error('client/dist is missing: build the client first (`npm run build -w client`; `npm run test:e2e` does it for you)');
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'plexus-e2e-'));
  // Kernel children run as other uids (when the server runs as root) and must traverse every
  // parent of the data dir to read uploaded tables; mkdtemp makes `root` 0700.
  fs.chmodSync(root, 0o711);
  const dataDir = path.join(root, 'data');
  // The viewer tests look at the demo recording: a short one (same field of view) is enough.
  await writeDemoDatasetAtomically(demoDatasetDir(dataDir), { params: { frames: E2E_DEMO_FRAMES } });
  const wanted = Number(process.env.PLEXUS_E2E_PORT ?? DEFAULT_PORT);
  let started;
  try {
    started = await spawnServer({ root, dataDir, port: wanted, n: 1 });
  } catch (e) {
    const log = (e as { log?: string }).log ?? '';
    if (!/EADDRINUSE/.test(log)) throw e;
    console.warn(`[e2e] port ${wanted} is taken; starting the server on a free port instead`);
    started = await spawnServer({ root, dataDir, port: 0, n: 2 });
  }
  const state: ServerState = { ...started, root, dataDir, starts: 2 };
  const file = path.join(root, 'server.json');
  process.env.PLEXUS_E2E_STATE = file;
  writeState(state, file);
  // Health must answer before any test runs.
  const res = await fetch(`${state.url}/api/health`);
  if (!res.ok) throw new Error(`/api/health answered ${res.status}`);
}
