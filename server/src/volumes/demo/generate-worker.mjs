// Worker thread for ensure-demo.ts: generates the demo dataset off the server's event loop.
// Plain JS so it starts under any loader; it registers tsx itself to import the TypeScript
// generator (the server always runs with tsx available). Effects: files in workerData.dir.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
try {
  const { writeDemoDataset } = await import(workerData.module);
  const r = await writeDemoDataset(workerData.dir, workerData.options);
  parentPort.postMessage({ ok: true, ms: r.ms, chunkBytes: r.chunkBytes });
} catch (e) {
  parentPort.postMessage({ ok: false, error: e instanceof Error ? e.message : String(e) });
}
