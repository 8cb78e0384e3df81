// Worker-thread entry for the demo generator's TypeScript modules: registers tsx (the server
// always runs with it available) so that this plain-JS file starts under any loader, then calls
// `workerData.entry` of `workerData.module` with `workerData.args`. A thrown error reaches the
// parent as the Worker's 'error' event. Effects: whatever the entry does.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const mod = await import(workerData.module);
await mod[workerData.entry](...workerData.args);
