/**
 * The JavaScript cell runner: the program inside each workspace's sandboxed child process (see
 * server/src/kernel/sandbox.ts for the OS limits around it). It keeps the values cells defined,
 * runs compiled cells in a `vm` context with clean globals (a convenience, not the boundary: the
 * boundary is the process), captures console output, renders the last value, and answers the
 * supervisor over length-prefixed JSON frames on stdin/stdout.
 * Effects: runs user code; reads stdin, writes stdout/stderr.
 */
import vm from 'node:vm';
import { format } from 'node:util';
import { encodeFrame, frameReader } from './wire.mjs';
import { display, marked, toJson } from './display.mjs';

const values = new Map(); // name -> value
let libs = {}; // curated module name -> file URL
let current = null; // { runId, cancelled, resolveCancel }
// Runs happen one after another: a batch the kernel sent ahead (below) and a run sent after it
// must not interleave.
let runs = Promise.resolve();
const enqueue = (fn) => (runs = runs.then(fn, fn));
// Batches the supervisor called off (batchId -> index of the first cell not to run): also before
// they start (their message may still wait in the queue).
const offBatches = new Map();
let interruptFor = null; // a run interrupted before it started
let cancelledFor = null; // a run cancelled (superseded) before it started
/**
 * Results of batch cells held back to go out together (runBatch): one write, and one read by the
 * supervisor, per slice of cells instead of per cell (each is a system call into a pipe that wakes
 * the supervisor). Anything else written meanwhile first sends what is held, so order is kept.
 */
let held = null;
function release() {
  if (!held?.length) return;
  process.stdout.write(held.length === 1 ? held[0] : Buffer.concat(held));
  held.length = 0;
}
const write = (msg) => {
  release();
  process.stdout.write(encodeFrame(msg));
};
/** A run's result: held while a batch runs a slice, written at once otherwise. */
const writeResult = (msg) => (held ? held.push(encodeFrame(msg)) : write(msg));
/** A batch reads its messages (a cancel) between slices of at most about this long. */
const BATCH_SLICE_MS = 2;

let streamed = 0;
const STREAM_LIMIT = 256 * 1024;
function stream(name, args) {
  if (!current) return;
  const runId = current.runId;
  if (streamed > STREAM_LIMIT) return;
  let text = format(...args) + '\n';
  streamed += text.length;
  if (streamed > STREAM_LIMIT) text = text.slice(0, Math.max(0, text.length - (streamed - STREAM_LIMIT))) + '\n… output truncated\n';
  write({ type: 'stream', runId, name, text });
}

const consoleApi = {
  log: (...a) => stream('stdout', a),
  info: (...a) => stream('stdout', a),
  debug: (...a) => stream('stdout', a),
  warn: (...a) => stream('stderr', a),
  error: (...a) => stream('stderr', a),
  table: (rows) => stream('stdout', [JSON.stringify(toJson(rows), null, 1)]),
};

// What cells see as globals besides the language built-ins. No process, require, import(), fetch,
// WebSocket, net, fs, Buffer: cells compute on values; data comes in through SQL cells and uploads.
const sandbox = {
  console: consoleApi,
  setTimeout, clearTimeout, setInterval, clearInterval, queueMicrotask, structuredClone,
  URL, URLSearchParams, TextEncoder, TextDecoder, atob, btoa,
  performance: { now: () => performance.now() },
  /** A Vega-Lite spec rendered as a chart. */
  vegalite: (spec) => marked('chart', { format: 'vega-lite', spec }),
  /** An Observable Plot chart in declarative form: `{ marks: [{ mark: 'dot', data, options }], ...plotOptions }`. */
  plot: (spec) => marked('chart', { format: 'plot', spec }),
  /** An image: `image('image/png', base64)` or `image('image/svg+xml', svgText)`. */
  image: (mime, data, size = {}) => marked('image', { mime: String(mime), data: String(data), width: size.width, height: size.height }),
  /** Shows rows as a table (with optional `[{name, type}]` columns). */
  table: (rows, columns) => marked('table', { rows: [...rows], columns }),
  /**
   * Server-side sampling of the volumes the viewer shows (the same chunk files), e.g.
   * `await volumes.histogram('calcium-demo', 'movie', { bbox: '0,0,0,256,256,60', bins: 32 })`,
   * `await volumes.trace('calcium-demo', 'movie', { labels: 'labels', roi: 7 })` or `{ x, y, r }`.
   */
  volumes: Object.freeze({
    histogram: (dataset, layer, params = {}) => sample('histogram', dataset, layer, params),
    trace: (dataset, layer, params = {}) => sample('trace', dataset, layer, params),
  }),
  /**
   * Calcium-imaging analysis of a served movie, run by the server as a job everyone sees (it
   * outlives the cell's time limit): `await calcium.start('calcium-demo', 'movie', { tauDecay: 'GCaMP6s' })`
   * returns the job id at once (the same job when this analysis was already asked for; pass
   * `{ rerun: true }` as a fourth argument to run it again); `await calcium.status(id)` gives its status, progress and result
   * (the tables it registers: `<dataset>_rois`, `_traces`, `_events`, `_shifts`).
   */
  calcium: Object.freeze({
    start: (dataset, layer, params = {}, opts = {}) => jobCall('calcium-start', { dataset: String(dataset), layer: String(layer), params: toJson(params ?? {}), rerun: !!(opts && opts.rerun) }),
    status: (job) => jobCall('calcium-status', { job: String(job) }),
    /** Scores a done job against a dataset with ground truth (default: the analysed one), e.g. the demo's. */
    evaluate: (job, opts = {}) => jobCall('calcium-evaluate', { job: String(job), ...(opts && opts.truth ? { truth: String(opts.truth) } : {}) }),
    /**
     * The ROIs of a done job outlined on a summary image (`image`: 'mean' (default), 'max' or
     * 'correlation'; `ids: false` leaves the ROI ids out), after everyone's edits: shown as a picture.
     */
    figure: async (job, opts = {}) => {
      const f = await jobCall('calcium-figure', { job: String(job), ...(opts && opts.image !== undefined ? { image: String(opts.image) } : {}), ...(opts && opts.ids === false ? { ids: false } : {}) });
      return marked('image', { mime: 'image/svg+xml', data: f.svg, width: f.width, height: f.height });
    },
  }),
};

// Sampling requests go to the supervisor, which reads the volumes (cells cannot read files).
const sampling = new Map(); // id -> { resolve, reject }
let nextSample = 1;
function sample(op, dataset, layer, params) {
  const id = nextSample++;
  return new Promise((resolve, reject) => {
    sampling.set(id, { resolve, reject });
    write({ type: 'sample', id, op, dataset: String(dataset), layer: String(layer), params: params && typeof params === 'object' ? { ...params } : {} });
  });
}
// Job requests (start, status) go to the supervisor too, with structured arguments.
function jobCall(op, args) {
  const id = nextSample++;
  return new Promise((resolve, reject) => {
    sampling.set(id, { resolve, reject });
    write({ type: 'job', id, op, args });
  });
}
const context = vm.createContext(sandbox, { name: 'plexus-cell', codeGeneration: { strings: true, wasm: false } });

async function importLib(name) {
  const url = libs[name];
  if (!url) throw new Error(`cannot import "${name}": cells may import ${Object.keys(libs).map((n) => `"${n}"`).join(', ') || 'no modules'}`);
  return import(url);
}

function cellError(e, filename, shifts) {
  const err = e && typeof e === 'object' ? e : { name: 'Error', message: String(e) };
  const out = { type: 'error', name: String(err.name ?? 'Error'), message: String(err.message ?? err) };
  const stack = typeof err.stack === 'string' ? err.stack : '';
  const m = stack.match(new RegExp(`${filename.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:(\\d+):(\\d+)`));
  if (m) {
    out.line = Number(m[1]);
    const col = Number(m[2]) - 1;
    let by = 0;
    for (const s of shifts ?? []) if (s.line === out.line && s.column <= col) by += s.by;
    out.column = Math.max(0, col - by);
  }
  const lines = stack.split('\n').filter((l) => l.includes(filename) || !/^\s+at /.test(l));
  if (lines.length) out.stack = lines.slice(0, 12).join('\n');
  return out;
}

/** Runs one cell; resolves true when it finished without an error. */
async function run(msg) {
  const { runId, code, inputs, filename, shifts, timeoutMs, watchdog, quiet } = msg;
  // Cancelled before it started (it waited behind a batch's last cell): the supervisor has
  // already given up on it; running it anyway would hold up the run that replaced it.
  if (cancelledFor === runId) {
    cancelledFor = null;
    return false;
  }
  if (interruptFor === runId) {
    interruptFor = null;
    write({ type: 'error', runId, error: { type: 'error', name: 'Interrupted', message: 'the run was stopped before it started' } });
    return false;
  }
  // `me`, not `current`: a cancelled run's continuation may resume after the next run started.
  const me = { runId, cancelled: false, resolveCancel: null };
  current = me;
  streamed = 0;
  const started = performance.now();
  try {
    const missing = inputs.filter((n) => !values.has(n));
    if (missing.length) {
      const e = new ReferenceError(`${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not defined`);
      e.stack = '';
      throw e;
    }
    const script = new vm.Script(code, { filename });
    const helper = { import: importLib, last: undefined };
    // The compiled cell calls itself with these arguments, so the synchronous part of the cell runs
    // inside runInContext under the vm timeout and breakOnSigint (an infinite loop is stopped here
    // without killing the process); what runs after its first await is bounded by the supervisor.
    const args = [helper, ...inputs.map((n) => values.get(n))];
    // The compiled cell reads its arguments first thing, inside runInContext: for a run with the
    // watchdog, that is where SIGINT stops it softly. Before (while Node sets the watchdog up) and
    // after (while it takes it down) SIGINT kills the process — its default action, or Node's
    // SignalExit — so the supervisor signals only once it has read `armed` (js-runtime.ts interrupt()).
    let armed = watchdog === false;
    Object.defineProperty(context, '__plexusArgs', {
      configurable: true,
      get() {
        if (!armed) {
          armed = true;
          write({ type: 'armed', runId });
        }
        return args;
      },
    });
    // From here the vm timeout runs: the supervisor re-arms its hard deadline from this moment
    // (cells run ahead in a batch have no vm timeout: nothing to re-arm).
    if (!quiet) write({ type: 'running', runId });
    let promise;
    try {
      // The watchdog (a thread per call) costs ~0.5 ms: cells that neither loop nor call anything
      // cannot run long and go without it (the supervisor's deadline still bounds them).
      promise = watchdog === false ? script.runInContext(context) : script.runInContext(context, { timeout: timeoutMs, breakOnSigint: true });
    } finally {
      delete context.__plexusArgs;
    }
    // The synchronous part returned: what runs after its first await has no vm timeout, and the
    // supervisor must not wait for one (cells without a watchdog cannot loop: nothing to say).
    if (watchdog !== false) write({ type: 'async', runId });
    // A cancelled run returns at once, whatever it awaits: the next run waits for this one.
    const cancelled = new Promise((r) => {
      me.resolveCancel = r;
      if (me.cancelled) r();
    });
    const res = await Promise.race([promise, cancelled]);
    if (me.cancelled) return false;
    let value = helper.last;
    if (value && typeof value.then === 'function') value = await Promise.race([value, cancelled]);
    if (me.cancelled) return false;
    for (const [k, v] of Object.entries(res.defs)) values.set(k, v);
    const shown = display(value);
    writeResult({ type: 'done', runId, defines: Object.keys(res.defs), outputs: shown.outputs, full: shown.full, ms: performance.now() - started });
    return true;
  } catch (e) {
    if (me.cancelled) return false;
    writeResult({ type: 'error', runId, error: cellError(e, filename, shifts), ms: performance.now() - started });
    return false;
  } finally {
    if (current === me) current = null;
  }
}

/**
 * Cells the kernel sent ahead (consecutive cells that neither loop nor call anything, in the order
 * it will ask for their results): each runs and reports as if sent alone, with no round trip in
 * between. The batch stops at the first cell that fails, and when the kernel cancels it (it took a
 * different turn: a newer source, another run first); it reads its messages for that between slices
 * of cells of about BATCH_SLICE_MS, and sends each slice's results in one write.
 */
async function runBatch(msg) {
  held = [];
  let slice = performance.now();
  try {
    for (const [i, r] of msg.runs.entries()) {
      if (offBatches.has(msg.batchId) && i >= offBatches.get(msg.batchId)) return;
      if (!(await run({ ...r, timeoutMs: msg.timeoutMs, watchdog: false, quiet: true }))) return;
      if (performance.now() - slice < BATCH_SLICE_MS) continue;
      release();
      await new Promise((resolve) => setImmediate(resolve));
      slice = performance.now();
    }
  } finally {
    release();
    held = null;
  }
}

function onMessage(msg) {
  switch (msg.type) {
    case 'init':
      libs = msg.libs ?? {};
      write({ type: 'ready', pid: process.pid, versions: process.versions.node });
      return;
    case 'run':
      enqueue(() => run(msg));
      return;
    case 'batch':
      enqueue(() => runBatch(msg));
      return;
    case 'cancel':
      if (current && current.runId === msg.runId) {
        current.cancelled = true;
        current.resolveCancel?.();
      } else cancelledFor = msg.runId; // still waiting behind another run (or ended: then never seen again)
      return;
    case 'cancel-batch':
      offBatches.set(msg.batchId, Math.min(offBatches.get(msg.batchId) ?? Infinity, Number.isInteger(msg.from) ? msg.from : 0));
      // Batches run in order: only the latest few can still be waiting.
      if (offBatches.size > 256) offBatches.delete(offBatches.keys().next().value);
      return;
    case 'interrupt':
      // Read only between two turns of the loop: a run waiting on an await, or one that ended.
      if (current && current.runId === msg.runId) interruptCurrent();
      else interruptFor = msg.runId; // still waiting behind another run (or ended: then never seen again)
      return;
    case 'delete':
      for (const n of msg.names) values.delete(n);
      return;
    case 'set':
      values.set(msg.name, msg.value);
      return;
    case 'get': {
      const out = {};
      const missing = [];
      for (const n of msg.names) {
        if (!values.has(n)) missing.push(n);
        else out[n] = values.get(n);
      }
      try {
        write({ type: 'values', id: msg.id, values: out, missing });
      } catch (e) {
        write({ type: 'values', id: msg.id, values: {}, missing, error: `cannot send values: ${e.message}` });
      }
      return;
    }
    case 'sampled': {
      const p = sampling.get(msg.id);
      sampling.delete(msg.id);
      if (!p) return;
      if (msg.error) p.reject(new Error(msg.error));
      else p.resolve(msg.result);
      return;
    }
    case 'ping':
      write({ type: 'pong', id: msg.id, heapUsed: process.memoryUsage().heapUsed });
      return;
  }
}

process.on('uncaughtException', (e) => stream('stderr', [`Uncaught ${e?.stack ?? e}`]));
process.on('unhandledRejection', (e) => stream('stderr', [`Unhandled rejection: ${e?.stack ?? e}`]));
// Interrupt while a cell awaits: the synchronous part is stopped by breakOnSigint; here, the
// pending run is abandoned and reported (its later callbacks are ignored).
function interruptCurrent() {
  if (!current || current.cancelled) return;
  const { runId } = current;
  current.cancelled = true;
  current.resolveCancel?.();
  write({ type: 'error', runId, error: { type: 'error', name: 'Interrupted', message: 'the run was stopped before it finished' } });
}
// The supervisor asks with an `interrupt` message; a SIGINT that still arrives outside a vm run
// (between two runs, or during a cell's await) lands here and does the same.
process.on('SIGINT', () => interruptCurrent());
process.stdin.on('data', frameReader(onMessage, (e) => {
  process.stderr.write(`runner: ${e.message}\n`);
  process.exit(2);
}));
process.stdin.on('end', () => process.exit(0));
