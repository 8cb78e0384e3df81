/**
 * Every plain HTTP request on the one port: the volumes (raw path first: `/volumes/../x` must be
 * refused, not re-routed), the operator's routes (`/api/ready`, `/metrics`), the API, then the
 * built client; clear 404/500 errors otherwise.
 * Effects: network, files.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log.ts';
import { handleApi, type ApiDeps } from './api.ts';
import { handleOps, type OpsApiDeps } from './ops-api.ts';
import { handleVolumes, isVolumePath, type VolumeRouteDeps } from './volumes.ts';
import { sendError } from './respond.ts';

export interface RequestDeps {
  api: ApiDeps;
  ops: OpsApiDeps;
  volumes: VolumeRouteDeps;
  /** Serves the built client, or null when it is not built. */
  serveClient: ((req: IncomingMessage, res: ServerResponse) => unknown) | null;
  log: Logger;
}

export function requestHandler({ api, ops, volumes, serveClient, log }: RequestDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (isVolumePath(req.url)) {
      handleVolumes(volumes, req, res).catch((e) => {
        log.error('volume request failed', { err: e });
        if (!res.headersSent) sendError(res, 500, 'internal', 'internal error');
      });
      return;
    }
    handleOps(ops, req, res)
      .then((handled) => handled || handleApi(api, req, res))
      .then((handled) => {
        if (handled) return;
        if (serveClient && (req.method === 'GET' || req.method === 'HEAD')) {
          serveClient(req, res);
          return;
        }
        sendError(res, 404, 'not-found', serveClient ? 'not found' : 'the client is not built: run `npm run build -w client` (npm start does it for you)');
      })
      .catch((e) => {
        log.error('request failed', { err: e });
        if (!res.headersSent) sendError(res, 500, 'internal', 'internal error');
      });
  };
}
