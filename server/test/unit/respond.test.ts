/** The last guard on error bodies: no absolute server path leaves in an HTTP error. */
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { redactServerPaths, registerServerDir, sendError, sendJson } from '../../src/http/respond.ts';

describe('redactServerPaths', () => {
  it('replaces registered directories and any other absolute path, keeps our URL paths and ordinary text', () => {
    registerServerDir('/srv/plexus-data', '<data dir>');
    expect(redactServerPaths('Error when sniffing file "/srv/plexus-data/kernel/w_1/uploads-tmp/1.upload".')).toBe(
      'Error when sniffing file "<data dir>/kernel/w_1/uploads-tmp/1.upload".',
    );
    expect(redactServerPaths(`cannot open ${path.join(os.tmpdir(), 'x.duckdb')}`)).toBe('cannot open <temp dir>/x.duckdb');
    expect(redactServerPaths("IO Error: No files found that match the pattern '/var/lib/plexus/kernel-1/t.duckdb'")).toBe(
      "IO Error: No files found that match the pattern '<server path>'",
    );
    expect(redactServerPaths('ENOENT: no such file or directory, open /etc/passwd')).toBe('ENOENT: no such file or directory, open <server path>');
    // A registered directory only as a whole path segment: a sibling whose name starts the same is another path.
    // (A name no checkout or working directory has: the server's own directory is registered too.)
    const dir = path.join(os.tmpdir(), `redact-test-${process.pid}`);
    registerServerDir(dir, '<test dir>');
    expect(redactServerPaths(`cannot open ${dir}.duckdb or ${path.join(dir, 'y.duckdb')}`)).toBe(`cannot open <temp dir>/redact-test-${process.pid}.duckdb or <test dir>/y.duckdb`);
    expect(redactServerPaths('read /srv/plexus-data2/secret and "/srv/plexus-data"')).toBe('read <server path> and "<data dir>"');
    const kept = 'refused volume path: /volumes/../x; see /api/workspaces and /collab; 3/4 rows, a / b, and/or';
    expect(redactServerPaths(kept)).toBe(kept);
  });

  it('applies to every error body, not to successful ones', async () => {
    const server = http.createServer((req, res) => {
      if (req.url === '/err') sendError(res, 422, 'invalid-file', `could not read ${os.tmpdir()}/a.upload`);
      else if (req.url === '/json') sendJson(res, 500, { error: 'x', message: 'at /home/someone/x', details: ['/opt/y'] });
      else sendJson(res, 200, { path: '/srv/elsewhere/file' });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect(await (await fetch(`${base}/err`)).json()).toEqual({ error: 'invalid-file', message: 'could not read <temp dir>/a.upload' });
      expect(await (await fetch(`${base}/json`)).json()).toEqual({ error: 'x', message: 'at <server path>', details: ['<server path>'] });
      expect(await (await fetch(`${base}/ok`)).json()).toEqual({ path: '/srv/elsewhere/file' });
    } finally {
      server.close();
    }
  });
});
