/**
 * The HTTP API (docs/api.md): health, identity, workspaces and share links; volume routes are
 * delegated to `volume-api.ts`. Every route but health needs a bearer token; roles are checked
 * per workspace.
 * Effects: store and document mutation through `Workspaces`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { canManage, type AtlasServerConfig, type Role, type TokenClaims } from '@plexus/shared';
import { TokenError, type TokenSigner } from '../auth/tokens.ts';
import { grantsAccess } from '../forks/registry.ts';
import { handleForkRequest, handoutLink, type ForkApiDeps } from '../forks/forks-api.ts';
import type { Logger } from '../log.ts';
import { WorkspaceError, type Workspaces } from '../workspaces.ts';
import { HttpError, readJson, sendError, sendJson } from './respond.ts';
import { handleVolumeApi, type VolumeApiDeps } from './volume-api.ts';
import { handleNotebookApi, type NotebookApiDeps } from './notebook-api.ts';
import { handleJobsApi } from './jobs-api.ts';
import type { CalciumJobs } from '../analysis/calcium-jobs.ts';
import type { TiffImports } from '../analysis/tiff-jobs.ts';
import { linkRevoked, REVOKED_MESSAGE } from '../auth/link-revocation.ts';
import { RecoveryError, recover, recoveryOptions } from '../collab/recovery.ts';
import type { WorkspaceStorage } from '../store/storage.ts';
import type { Library } from '../library/library-service.ts';
import { handleLibraryApi } from './library-api.ts';
import { handleAtlasApi } from './atlas-api.ts';
import { handleServiceApi, type ServiceApiDeps } from './service-api.ts';
import { handleHistoryApi, type HistoryApiDeps } from './history-api.ts';
import type { OpeningReads } from './opening-reads.ts';
import { acceptedEncodings } from './content-coding.ts';

export interface ApiDeps {
  signer: TokenSigner;
  workspaces: Workspaces;
  log: Logger;
  version: string;
  /** This node's id (`PLEXUS_NODE_ID`). */
  nodeId: string;
  /** True while the node drains (it still lives: health stays 200). */
  isDraining: () => boolean;
  started: number;
  openDocuments: () => number;
  /** Folds of unloaded documents' logs still running (persistence `unloadFoldsRunning`). */
  foldsRunning: () => number;
  isReady: () => boolean;
  publicUrl: (req: IncomingMessage) => string;
  shareLinkDays: number;
  volumeApi: VolumeApiDeps;
  notebook: Omit<NotebookApiDeps, 'requireWorkspace'> & { jobs: CalciumJobs | null; recordings: TiffImports | null };
  /** The agent's and kernel processes' routes (service-api.ts). */
  services: Omit<ServiceApiDeps, 'requireWorkspace'>;
  /** Stored workspaces (recovery reads and replaces their stored state) and where quarantined copies go. */
  store: WorkspaceStorage;
  dataDir: string;
  /** Disconnects the live connections of workspace `id` made with links older than `generation`; returns how many. */
  revokeLinks: (id: string, generation: number) => number;
  /** The method library (library-api.ts). */
  library: Library;
  /** Forks and hand-out links (forks/forks-api.ts). */
  forks: ForkApiDeps;
  /** Checkpoints and who changed what (history-api.ts). */
  history: HistoryApiDeps;
  /** What the server can do for maps (`GET /api/config`): never a service's address or key. */
  atlas: AtlasServerConfig;
  /** What a browser reads while it opens a workspace: first screen, state (opening-reads.ts). */
  openingReads: OpeningReads;
}

function bearer(req: IncomingMessage, url: URL): string | null {
  const h = req.headers.authorization;
  if (h?.startsWith('Bearer ')) return h.slice(7).trim();
  return url.searchParams.get('token');
}

function authenticate(deps: ApiDeps, req: IncomingMessage, url: URL): { claims: TokenClaims; token: string } {
  const token = bearer(req, url);
  if (!token) throw new HttpError(401, 'unauthorized', 'a token is required (Authorization: Bearer <token>); open the link printed by `npm start`');
  try {
    return { claims: deps.signer.verify(token), token };
  } catch (e) {
    const err = e as TokenError;
    throw new HttpError(401, err.reason === 'expired' ? 'token-expired' : 'unauthorized', err.message);
  }
}

/** The caller's role in workspace `id`, or a 403/404. */
async function roleIn(deps: ApiDeps, claims: TokenClaims, id: string): Promise<Role> {
  if (!(await grantsAccess(deps.store, claims, id))) throw new HttpError(403, 'forbidden', `this token does not grant access to workspace ${id}`);
  return claims.role;
}

async function requireManage(deps: ApiDeps, claims: TokenClaims, id: string): Promise<void> {
  if (!canManage(await roleIn(deps, claims, id))) throw new HttpError(403, 'forbidden', 'only the workspace owner may do this');
}

function requireGlobalOwner(claims: TokenClaims): void {
  if (claims.ws !== '*' || !canManage(claims.role)) throw new HttpError(403, 'forbidden', 'only the owner of this Plexus server may create workspaces');
}

/** Handles /api/*; returns false when the path is not an API path. */
export async function handleApi(deps: ApiDeps, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const url = new URL(req.url ?? '/', 'http://x');
  if (!url.pathname.startsWith('/api/')) return false;
  const method = req.method ?? 'GET';
  const parts = url.pathname.split('/').filter(Boolean).slice(1); // drop "api"
  try {
    if (parts[0] === 'health' && parts.length === 1) {
      const ready = deps.isReady();
      sendJson(res, ready ? 200 : 503, {
        ok: ready,
        node: deps.nodeId,
        draining: deps.isDraining(),
        version: deps.version,
        uptimeSeconds: Math.round((Date.now() - deps.started) / 1000),
        openDocuments: deps.openDocuments(),
        foldsRunning: deps.foldsRunning(),
      });
      return true;
    }
    const auth = authenticate(deps, req, url);
    const claims = auth.claims;
    if (await linkRevoked(deps.store, claims)) throw new HttpError(401, 'token-revoked', REVOKED_MESSAGE);
    if (claims.handout && !(parts[0] === 'me' || (parts[0] === 'workspaces' && parts[2] === 'fork')))
      throw new HttpError(403, 'handout-link', 'a hand-out link only makes your own fork of its workspace (POST /api/workspaces/:id/fork)');
    if (parts[0] === 'volume-session' || parts[0] === 'volumes') {
      await handleVolumeApi(deps.volumeApi, auth, req, res, url, parts);
      return true;
    }
    if (parts[0] === 'me' && parts.length === 1 && method === 'GET') {
      sendJson(res, 200, { claims });
      return true;
    }
    if (parts[0] === 'config' && parts.length === 1 && method === 'GET') {
      sendJson(res, 200, { atlas: deps.atlas });
      return true;
    }
    if (await handleServiceApi({ ...deps.services, requireWorkspace: (w) => deps.workspaces.get(w) }, req, res, claims, parts)) return true;
    if (parts[0] !== 'workspaces') throw new HttpError(404, 'not-found', `no API route ${method} ${url.pathname}`);
    const id = parts[1];
    if (id === undefined) {
      if (method === 'GET') {
        const all = await deps.workspaces.list();
        const granted = claims.ws === '*' && !claims.handout ? null : await Promise.all(all.map((w) => grantsAccess(deps.store, claims, w.id)));
        sendJson(res, 200, { workspaces: granted ? all.filter((_w, i) => granted[i]) : all });
        return true;
      }
      if (method === 'POST') {
        requireGlobalOwner(claims);
        const body = await readJson(req);
        sendJson(res, 201, { workspace: await deps.workspaces.create({ name: body.name }) });
        return true;
      }
    } else if (parts.length === 2) {
      if (method === 'GET') {
        const role = await roleIn(deps, claims, id);
        sendJson(res, 200, { workspace: await deps.workspaces.get(id), role });
        return true;
      }
      if (method === 'PATCH') {
        await requireManage(deps, claims, id);
        const body = await readJson(req);
        sendJson(res, 200, { workspace: await deps.workspaces.rename(id, body.name) });
        return true;
      }
      if (method === 'DELETE') {
        await requireManage(deps, claims, id);
        await deps.workspaces.delete(id);
        deps.log.info('workspace deleted', { ws: id, by: claims.sub });
        res.writeHead(204).end();
        return true;
      }
    } else if (parts.length === 3 && (parts[2] === 'first-screen' || parts[2] === 'state') && method === 'GET') {
      // Read while a browser opens the workspace (opening-reads.ts).
      await roleIn(deps, claims, id);
      await deps.workspaces.get(id);
      if (parts[2] === 'first-screen') {
        // The notebook's first cells (null when the document does not load: the socket says why).
        const cells = Number(url.searchParams.get('cells') ?? 0);
        sendJson(res, 200, { firstScreen: await deps.openingReads.firstScreen(id, Number.isFinite(cells) ? cells : 0) });
        return true;
      }
      const state = await deps.openingReads.stateFor(id, acceptedEncodings(req.headers['accept-encoding']));
      if (!state) throw new HttpError(409, 'document-unavailable', 'the workspace document cannot be loaded now; the collaboration socket says why');
      // Sent from storage: the document loads once the body is on its way (a load holds the event loop).
      if (state.sent) res.once('close', state.sent);
      res
        .writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': state.body.byteLength, 'cache-control': 'no-store', vary: 'accept-encoding', ...(state.coding ? { 'content-encoding': state.coding } : {}) })
        .end(state.body);
      return true;
    } else if (parts.length >= 3 && ['uploads', 'data', 'results', 'export', 'import', 'jobs', 'recordings'].includes(parts[2]!)) {
      const role = await roleIn(deps, claims, id);
      const nb: NotebookApiDeps = { ...deps.notebook, requireWorkspace: async (w) => void (await deps.workspaces.get(w)) };
      if (parts[2] === 'jobs' || parts[2] === 'recordings') {
        await deps.workspaces.get(id);
        return await handleJobsApi({ hocuspocus: deps.notebook.hocuspocus, jobs: deps.notebook.jobs, recordings: deps.notebook.recordings }, req, res, url, claims, role, id, parts.slice(2));
      }
      if (await handleNotebookApi(nb, req, res, url, claims, role, id, parts.slice(2))) return true;
    } else if (parts.length >= 3 && parts[2] === 'library') {
      const role = await roleIn(deps, claims, id);
      await deps.workspaces.get(id);
      await handleLibraryApi(deps.library, req, res, url, claims, role, id, parts.slice(3));
      return true;
    } else if (parts.length >= 3 && parts[2] === 'atlas') {
      await roleIn(deps, claims, id);
      await deps.workspaces.get(id);
      await handleAtlasApi({ hocuspocus: deps.notebook.hocuspocus, kernels: deps.notebook.kernels, limits: deps.notebook.dataReads }, req, res, url, id, parts.slice(3));
      return true;
    } else if (parts.length >= 3 && (parts[2] === 'history' || parts[2] === 'checkpoints')) {
      const role = await roleIn(deps, claims, id);
      await deps.workspaces.get(id);
      await handleHistoryApi(deps.history, req, res, url, claims, role, id, parts.slice(2));
      return true;
    } else if (parts.length === 3 && parts[2] === 'recovery') {
      await requireManage(deps, claims, id);
      await deps.workspaces.get(id);
      if (method === 'GET') {
        const options = recoveryOptions(await deps.store.loadParts(id));
        sendJson(res, 200, options
          ? { needsRecovery: true, problem: options.diagnosis.problem, details: options.diagnosis.details.slice(0, 50),
              lastGood: options.lastGood && { kept: options.lastGood.kept, dropped: options.lastGood.dropped },
              repair: options.repaired && { removed: options.repaired.removed } }
          : { needsRecovery: false });
        return true;
      }
      if (method === 'POST') {
        const body = await readJson(req);
        if (body.action !== 'last-good' && body.action !== 'repair') throw new HttpError(400, 'bad-action', 'action must be "last-good" or "repair"');
        let done;
        try {
          done = await recover(deps.store, deps.dataDir, id, body.action);
        } finally {
          deps.openingReads.forget(id); // its stored state may have been replaced without a load
        }
        deps.log.warn('workspace recovered', { ws: id, by: claims.sub, action: body.action, ...done });
        sendJson(res, 200, { recovered: true, action: body.action, ...done });
        return true;
      }
    } else if (parts.length === 4 && parts[2] === 'share' && parts[3] === 'reset' && method === 'POST') {
      // Revokes every share link made so far (editor, viewer, hand-out, students' fork links of this
      // workspace); people connected through one are disconnected at once.
      await requireManage(deps, claims, id);
      await deps.workspaces.get(id);
      const generation = await deps.store.resetLinks(id);
      const disconnected = deps.revokeLinks(id, generation);
      deps.log.warn('share links reset', { ws: id, by: claims.sub, generation, disconnected });
      sendJson(res, 200, { reset: true, generation, disconnected });
      return true;
    } else if (parts.length === 3 && method === 'POST') {
      if (parts[2] === 'fork') {
        // A hand-out link of this workspace may fork it (into the holder's own fork) and nothing else.
        const role = claims.handout && claims.ws === id ? null : await roleIn(deps, claims, id);
        await handleForkRequest(deps.forks, req, res, claims, role, id);
        return true;
      }
      if (parts[2] === 'duplicate') {
        requireGlobalOwner(claims);
        const body = await readJson(req);
        sendJson(res, 201, { workspace: await deps.workspaces.duplicate(id, body.name) });
        return true;
      }
      if (parts[2] === 'share') {
        await requireManage(deps, claims, id);
        await deps.workspaces.get(id);
        const body = await readJson(req);
        const role = body.role;
        if (role !== 'editor' && role !== 'viewer' && role !== 'handout') throw new HttpError(400, 'bad-role', 'role must be "editor", "viewer" or "handout"');
        const days = body.expiresInDays === undefined ? deps.shareLinkDays : Number(body.expiresInDays);
        if (!Number.isFinite(days) || days <= 0 || days > 3650) throw new HttpError(400, 'bad-expiry', 'expiresInDays must be between 0 and 3650');
        const ttlSeconds = Math.round(days * 86400);
        const gen = await deps.store.linkGeneration(id);
        if (role === 'handout') {
          sendJson(res, 200, handoutLink(deps.signer, deps.publicUrl(req), id, ttlSeconds, gen));
          return true;
        }
        const token = deps.signer.sign({ ws: id, role, sub: `link:${role}`, gen, ttlSeconds });
        const link = `${deps.publicUrl(req)}/w/${encodeURIComponent(id)}?token=${token}`;
        sendJson(res, 200, { role, token, url: link, expires: Date.now() + ttlSeconds * 1000 });
        return true;
      }
    }
    throw new HttpError(404, 'not-found', `no API route ${method} ${url.pathname}`);
  } catch (e) {
    if (e instanceof HttpError || e instanceof WorkspaceError || e instanceof RecoveryError) sendError(res, e.status, e.code, e.message);
    else {
      deps.log.error('API request failed', { method, path: url.pathname, err: e });
      sendError(res, 500, 'internal', 'the server could not handle this request; see its log');
    }
    return true;
  }
}
