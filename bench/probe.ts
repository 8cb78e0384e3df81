/**
 * Measurement probe preloaded into a benchmarked server process (`node --import tsx --import
 * bench/probe.ts <server entry>`), so the server code runs exactly as shipped. It answers requests
 * from the parent over the IPC channel:
 *   { cmd: 'reset' }  -> starts a new window for event-loop delay, utilisation and CPU
 *   { cmd: 'stats' }  -> the window's figures plus current memory
 *   { cmd: 'gc' }     -> runs a full GC (needs --expose-gc), then replies with memory
 *   { cmd: 'snapshot' } -> writes a V8 heap snapshot into the working directory, replies with its path
 *   { cmd: 'profile-start' } -> starts the V8 CPU profiler on the main thread (250 µs samples)
 *   { cmd: 'profile-stop', file } -> stops it and writes the profile (.cpuprofile) to `file`: a
 *     profile of a measured window alone, without the start-up that `--cpu-prof` includes; with
 *     `clock`, the monotonic time (µs, the profile's timestamps) and the wall-clock time of now
 *   { cmd: 'pauses' } -> the main thread's pauses (event-loop gaps over 30 ms, GCs over 20 ms, with
 *     wall-clock times; bench/pauses.ts) since the last ask (the first ask starts the record)
 * Replies carry the request's `id`. Effects: process-wide (IPC listener, histogram timer).
 */
import fs from 'node:fs';
import inspector from 'node:inspector';
import v8 from 'node:v8';
import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';
import { recordPauses } from './pauses.ts';

interface Request {
  id: number;
  cmd: 'reset' | 'stats' | 'gc' | 'snapshot' | 'profile-start' | 'profile-stop' | 'pauses';
  file?: string;
}

if (process.send) {
  // The histogram records the time between its 1 ms timer's callbacks; lateness = that - 1 ms.
  const RESOLUTION_MS = 1;
  const hist = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  hist.enable();
  let eluStart: EventLoopUtilization = performance.eventLoopUtilization();
  let cpuStart = process.cpuUsage();
  let wallStart = performance.now();
  // Recorded from the first ask on (its 5 ms timer costs the other benchmarks nothing then).
  let pauses: ReturnType<typeof recordPauses> | null = null;

  const memory = () => {
    const m = process.memoryUsage();
    return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers };
  };
  let session: inspector.Session | null = null;
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session!.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))));
  const late = (ns: number) => +Math.max(0, ns / 1e6 - RESOLUTION_MS).toFixed(3);

  process.on('message', (raw: unknown) => {
    const req = raw as Request;
    if (!req || typeof req !== 'object' || typeof req.id !== 'number') return;
    const reply = (body: Record<string, unknown>) => process.send!({ id: req.id, ...body });
    switch (req.cmd) {
      case 'reset':
        hist.reset();
        eluStart = performance.eventLoopUtilization();
        cpuStart = process.cpuUsage();
        wallStart = performance.now();
        reply({ ok: true });
        break;
      case 'stats': {
        const elu = performance.eventLoopUtilization(eluStart);
        const cpu = process.cpuUsage(cpuStart);
        const wall = performance.now() - wallStart;
        reply({
          // Event-loop delay: how late a 1 ms timer fired (0 = on time), ms.
          eventLoopDelay: hist.count
            ? { p50: late(hist.percentile(50)), p99: late(hist.percentile(99)), max: late(hist.max), mean: late(hist.mean) }
            : { p50: 0, p99: 0, max: 0, mean: 0 },
          eventLoopUtilization: +elu.utilization.toFixed(3),
          cpuMs: +((cpu.user + cpu.system) / 1000).toFixed(1),
          cpuPercent: +(((cpu.user + cpu.system) / 1000 / wall) * 100).toFixed(1),
          wallMs: Math.round(wall),
          memory: memory(),
        });
        break;
      }
      case 'snapshot':
        reply({ file: v8.writeHeapSnapshot() });
        break;
      case 'profile-start':
        if (!session) {
          session = new inspector.Session();
          session.connect();
        }
        void post('Profiler.enable')
          .then(() => post('Profiler.setSamplingInterval', { interval: 250 }))
          .then(() => post('Profiler.start'))
          .then(() => reply({ ok: true }), (e) => reply({ error: String(e) }));
        break;
      case 'profile-stop':
        void post('Profiler.stop').then((res) => {
          fs.writeFileSync(req.file!, JSON.stringify((res as { profile: unknown }).profile));
          // The profile's timestamps are this monotonic clock in µs: with this pair they map to wall-clock time.
          reply({ file: req.file, clock: { monotonicUs: Number(process.hrtime.bigint() / 1000n), epochMs: Date.now() } });
        }, (e) => reply({ error: String(e) }));
        break;
      case 'pauses':
        pauses ??= recordPauses();
        reply({ pauses: pauses.take() });
        break;
      case 'gc': {
        const gc = (globalThis as { gc?: () => void }).gc;
        if (gc) for (let i = 0; i < 3; i++) gc();
        reply({ gcAvailable: !!gc, memory: memory() });
        break;
      }
    }
  });
  // The IPC channel must not keep a server alive that would otherwise exit.
  (process.channel as { unref?: () => void } | undefined)?.unref?.();
}
