/**
 * The several-node topology on one machine, started by one command (`npm run cluster`): Debian's
 * Redis and PostgreSQL in temporary directories, N Plexus nodes (child processes of
 * server/src/main.ts sharing one data directory, the "shared files"), and Debian's HAProxy in front
 * with WebSocket upgrade and health checks on `/api/ready`. The tests and benchmarks start the same
 * pieces (testkit/src/cluster.ts, redis.ts, postgres.ts, haproxy.ts). Prints the link to open and
 * each node's URL; Ctrl+C stops everything and removes the temporary directories.
 *
 *   npm run cluster -- [--nodes=3] [--port=8080] [--lease-ms=5000]
 *
 * Needs `apt-get install -y redis-server postgresql haproxy` and the built client
 * (`npm run build -w client`). docs/deployment.md says how to run the same on separate machines.
 * Effects: processes, files under the system's temporary directory, network (local ports).
 */
import { startHaproxy, startTestCluster, type ChildServer } from '@plexus/testkit';

const arg = (name: string, dflt: number) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  const v = a ? Number(a.split('=')[1]) : dflt;
  if (!Number.isInteger(v) || v < 0) throw new Error(`--${name} must be a whole number, got ${a}`);
  return v;
};
const count = arg('nodes', 3);
const port = arg('port', 8080);
const leaseMs = arg('lease-ms', 5000);

const cluster = await startTestCluster({ leaseMs });
const nodes: Array<{ id: string; child: ChildServer }> = [];
const stop = async (code: number) => {
  await lb?.destroy().catch(() => {});
  await cluster.destroy();
  process.exit(code);
};
let lb: Awaited<ReturnType<typeof startHaproxy>> | null = null;
process.once('SIGINT', () => void stop(0));
process.once('SIGTERM', () => void stop(0));
try {
  // The first node seeds the demo workspace; the others start once it exists (one demo, not N).
  const env = (i: number) => ({ PLEXUS_KERNEL: '1', PLEXUS_SEED_DEMO: i === 0 ? '1' : '0', PLEXUS_AGENT: '0', PLEXUS_LOG_LEVEL: 'warn' });
  nodes.push({ id: 'node-1', child: await cluster.startChildNode('node-1', env(0)) });
  const rest = await Promise.all(Array.from({ length: count - 1 }, (_, i) => cluster.startChildNode(`node-${i + 2}`, env(i + 1))));
  rest.forEach((child, i) => nodes.push({ id: `node-${i + 2}`, child }));
  lb = await startHaproxy(nodes.map((n) => ({ name: n.id, url: n.child.url })), { port });
  const token = nodes[0]!.child.ownerToken;
  console.log(`\nPlexus on ${count} nodes behind HAProxy — open:\n\n  ${lb.url}/?token=${token}\n`);
  for (const n of nodes) console.log(`  ${n.id.padEnd(8)} ${n.child.url}  (pid ${n.child.proc.pid})`);
  console.log(`  redis    ${cluster.redis.url}`);
  console.log(`  postgres ${cluster.databaseUrl}`);
  console.log(`  data dir ${cluster.dataDir} (shared by every node)\n`);
  console.log('Try: kill -9 a node\'s pid — its clients reconnect through HAProxy and the workspace moves. Ctrl+C stops everything.');
  for (const n of nodes) void n.child.exited.then((code) => console.log(`${n.id} exited (${code})`));
} catch (e) {
  console.error(`could not start the cluster: ${(e as Error).message}`);
  await stop(1);
}
