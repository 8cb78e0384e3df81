/**
 * @plexus/testkit — the one copy of the test plumbing used by server/test, agent/test, e2e/ and
 * bench/: real servers (in-process or child process), stock clients (Hocuspocus provider,
 * y-websocket, raw protocol), waiting on conditions, temporary directories, gates that hold a cell
 * at a known point, the kernel suite and the agent harness.
 *   wait.ts       waitFor, until, within, sleep
 *   dirs.ts       repoRoot, tmpDir, tempDirs
 *   plexus.ts     startTestServer, startChildServer, api, rawRequest, storedDoc(Async), sqliteStore, hocuspocusClient, ywsClient
 *   quiet-ws.ts   QuietWebSocket
 *   raw-clients.ts rawHocuspocus, rawYws, hpFrame, hpUpdate, ywsUpdate (+ roundTrip)
 *   gates.ts      Gates, gateCall, gateCallExpr, hasAllOf
 *   postgres.ts   startPostgres (a real Postgres cluster in a temp dir), postgresBinDir
 *   redis.ts      startRedis (a real Redis in a temp dir: stop, start again on its port, kill)
 *   haproxy.ts    startHaproxy (Debian's HAProxy in front of nodes, WebSocket upgrade, health checks)
 *   cluster.ts    startTestCluster (Redis + Postgres + a shared data dir; nodes in-process or as children)
 *   markers.ts    typeMarkers, checkMarkers, newLedger (acknowledged edits for durability tests)
 *   kernel-drive.ts ManualClock, ScriptedEngines (a kernel driven step by step on an in-memory document)
 *   kernel-process.ts startKernelProcess (a kernel process of its own, as `npm run kernel` runs it)
 *   kernel.ts     (vitest hooks: import `@plexus/testkit/kernel`) kernelSuite, startKernelServer, newWorkspace, client, kernelOf, kernelIdle, waitRun, shown, ...
 *   agent.ts      agentSuite, startAgent, ask, waitRunEnd, ... (imports the agent: import it by path, `@plexus/testkit/agent`)
 */
export * from './wait.ts';
export * from './dirs.ts';
export * from './plexus.ts';
export * from './quiet-ws.ts';
export * from './raw-clients.ts';
export * from './gates.ts';
export * from './postgres.ts';
export * from './markers.ts';
export * from './redis.ts';
export * from './haproxy.ts';
export * from './cluster.ts';
export * from './kernel-process.ts';
export * from './kernel-drive.ts';
