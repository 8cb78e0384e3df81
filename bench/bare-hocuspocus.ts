/**
 * A bare Hocuspocus server (no extensions, no auth, no persistence) on 127.0.0.1 and a free port:
 * the baseline the Plexus server is compared against. Prints one JSON line
 * `{"ready":true,"port":…,"url":…}` when it listens; stops on SIGTERM/SIGINT (Hocuspocus'
 * own signal handling). Run: `npx tsx bench/bare-hocuspocus.ts`.
 */
import { Server } from '@hocuspocus/server';

const server = new Server({ port: 0, address: '127.0.0.1', quiet: true });
await server.listen();
const port = server.address.port;
process.stdout.write(JSON.stringify({ ready: true, port, url: `http://127.0.0.1:${port}` }) + '\n');
