/**
 * Makes sure `<dataDir>/volumes/calcium-demo` holds the current demo dataset: nothing to do when
 * its plexus.json names this generator version and these parameters; otherwise it is generated
 * into a temporary sibling (`.calcium-demo.tmp-<pid>-<n>`) and renamed into place, so a crash
 * never leaves a half dataset that looks complete. Generation can run on a worker thread (the
 * server's choice: ~5 s of CPU must not stall the event loop). Leftovers of a crashed run are
 * removed on the next call.
 * Effects: files under `<dataDir>/volumes`, optionally a worker thread.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../log.ts';
import type { DatasetMeta } from '../meta.ts';
import { DEMO_DATASET, DEMO_GENERATOR_NAME, DEMO_GENERATOR_VERSION, resolveDemoOptions, writeDemoDataset, type DemoOptions } from './demo-dataset.ts';

export interface EnsureOptions extends DemoOptions {
  /** Generate on a worker thread instead of this thread. */
  worker?: boolean;
  /** Aborting stops a running generation (the worker is terminated; the temporary directory removed). */
  signal?: AbortSignal;
}

export interface EnsureResult {
  status: 'present' | 'generated';
  dir: string;
  /** Generation time, ms (0 when present). */
  ms: number;
}

/** The directory of the demo dataset in `dataDir`. */
export const demoDatasetDir = (dataDir: string): string => path.join(dataDir, 'volumes', DEMO_DATASET);

/** True when the demo dataset in `dataDir` is complete and was written by this generator with these options. */
export function isDemoDatasetCurrent(dataDir: string, options: DemoOptions = {}): boolean {
  let meta: DatasetMeta;
  try {
    meta = JSON.parse(fs.readFileSync(path.join(demoDatasetDir(dataDir), 'plexus.json'), 'utf8')) as DatasetMeta;
  } catch {
    return false;
  }
  const { params, layout } = resolveDemoOptions(options);
  const g = meta.generator;
  return g?.name === DEMO_GENERATOR_NAME && g.version === DEMO_GENERATOR_VERSION && isDeepStrictEqual(g.params, JSON.parse(JSON.stringify({ ...params, layout })));
}

/** Removes `.<name>.tmp-*` / `.<name>.old-*` siblings left by processes that no longer run. */
function removeLeftovers(root: string, name: string): void {
  let entries: string[];
  try {
    entries = fs.readdirSync(root);
  } catch {
    return;
  }
  for (const entry of entries) {
    if (!entry.startsWith(`.${name}.`)) continue;
    const m = /^(tmp|old)-(\d+)-/.exec(entry.slice(name.length + 2));
    if (!m) continue;
    const pid = Number(m[2]);
    if (pid !== process.pid && isRunning(pid)) continue; // another process's generation in progress
    if (pid === process.pid && m[1] === 'tmp') continue; // ours, in progress
    fs.rmSync(path.join(root, entry), { recursive: true, force: true });
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function generateInWorker(dir: string, options: DemoOptions, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./ts-worker.mjs', import.meta.url), {
      workerData: { module: new URL('./demo-dataset.ts', import.meta.url).href, entry: 'writeDemoDataset', args: [dir, { params: options.params, layout: options.layout }] },
    });
    const onAbort = () => void worker.terminate();
    signal?.addEventListener('abort', onAbort, { once: true });
    let failure: Error | null = null;
    worker.once('error', (e) => (failure = e));
    worker.once('exit', (code) => {
      signal?.removeEventListener('abort', onAbort);
      if (code === 0 && !failure) resolve();
      else reject(signal?.aborted ? new Error('demo dataset generation aborted') : (failure ?? new Error(`demo dataset worker exited with code ${code}`)));
    });
  });
}

/**
 * Generates the demo dataset into `dir`, replacing what is there, atomically: into a temporary
 * sibling first, then renamed into place (an outdated copy is moved aside first, since rename
 * cannot replace a non-empty directory). Returns the generation time, ms.
 */
export async function writeDemoDatasetAtomically(dir: string, options: EnsureOptions = {}): Promise<number> {
  const root = path.dirname(dir);
  const name = path.basename(dir);
  fs.mkdirSync(root, { recursive: true });
  removeLeftovers(root, name);
  const tag = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const tmp = path.join(root, `.${name}.tmp-${tag}`);
  const started = performance.now();
  try {
    if (options.worker) await generateInWorker(tmp, options, options.signal);
    else await writeDemoDataset(tmp, options);
    if (options.signal?.aborted) throw new Error('demo dataset generation aborted');
    const old = path.join(root, `.${name}.old-${tag}`);
    if (fs.existsSync(dir)) fs.renameSync(dir, old);
    fs.renameSync(tmp, dir);
    fs.rmSync(old, { recursive: true, force: true });
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  return performance.now() - started;
}

/**
 * Generates the demo dataset into `<dataDir>/volumes/calcium-demo` unless the current one is
 * there. Idempotent; fast (one small file read) when present.
 */
export async function ensureDemoDataset(dataDir: string, log: Logger, options: EnsureOptions = {}): Promise<EnsureResult> {
  const dir = demoDatasetDir(dataDir);
  if (isDemoDatasetCurrent(dataDir, options)) return { status: 'present', dir, ms: 0 };
  log.info('generating the demo dataset', { dir, worker: options.worker === true });
  const ms = await writeDemoDatasetAtomically(dir, options);
  log.info('demo dataset ready', { dir, ms: Math.round(ms) });
  return { status: 'generated', dir, ms };
}
