/**
 * The fork route of the HTTP API (docs/api.md "Forks and hand-outs"):
 * `POST /api/workspaces/:id/fork` `{ name?, checkpoint?, device?, personName? }`.
 *
 * Who may fork: anyone whose token opens the source — owner, editor, and viewer too (a
 * view-only reader may copy a workspace into one of their own, as on Observable: they could read
 * every cell and table anyway) — and the holder of a hand-out link of the source, who gets their
 * own fork, the same one each time (the person is their link's subject and their browser's device
 * id, as presence identifies people). Service tokens do not own workspaces.
 * Effects: through forks.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { presenceId, randomId, type Role, type TokenClaims } from '@plexus/shared';
import type { TokenSigner } from '../auth/tokens.ts';
import { HttpError, readJson, sendJson } from '../http/respond.ts';
import type { Forker, Forks } from './forks.ts';

export interface ForkApiDeps {
  forks: Forks;
  publicUrl: (req: IncomingMessage) => string;
  /** The stored state and table directory of a checkpoint (absent until checkpoints exist; null: no such checkpoint). */
  checkpoint?: (ws: string, id: string) => Promise<{ state: Uint8Array; tablesDir?: string } | null>;
}

const DEVICE = /^[A-Za-z0-9_-]{1,100}$/;

function optionalString(body: Record<string, unknown>, key: string, max: number): string | undefined {
  const v = body[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string' || v.length > max) throw new HttpError(400, `bad-${key.toLowerCase()}`, `${key} must be a string of at most ${max} characters`);
  return v;
}

/**
 * Who forks: the presence id (subject and device), a name to show, and the subject of the fork's
 * owner token. Holders of share or hand-out links (`link:*`, one subject for everyone holding a
 * link) own their fork as `person:<device>`; other subjects keep theirs; a token for every
 * workspace needs no new one.
 */
function forkerOf(claims: TokenClaims, device: string | undefined, personName: string | undefined): Forker {
  const name = (claims.name ?? personName)?.replace(/\s+/g, ' ').trim().slice(0, 100) || undefined;
  const id = device ? presenceId(claims.sub, device) : claims.sub;
  const ownerSub = claims.ws === '*' && claims.role === 'owner' ? null : claims.sub.startsWith('link:') ? `person:${device ?? `u_${randomId(12)}`}` : claims.sub;
  return { id, ...(name ? { name } : {}), ownerSub };
}

/**
 * Handles `POST /api/workspaces/:id/fork`. `role` is the caller's role in the source (null for a
 * hand-out link, which the caller checked is for this source).
 */
export async function handleForkRequest(deps: ForkApiDeps, req: IncomingMessage, res: ServerResponse, claims: TokenClaims, role: Role | null, id: string): Promise<void> {
  if (role === 'service') throw new HttpError(403, 'forbidden', 'service tokens do not own workspaces: fork with a person\'s token');
  const body = await readJson(req);
  const device = optionalString(body, 'device', 100);
  if (device !== undefined && !DEVICE.test(device)) throw new HttpError(400, 'bad-device', 'device must be 1-100 letters, digits, _ or -');
  const personName = optionalString(body, 'personName', 200);
  const checkpointId = optionalString(body, 'checkpoint', 200);
  const by = forkerOf(claims, device, personName);
  let handout: { student: string } | undefined;
  if (claims.handout) {
    if (!device) throw new HttpError(400, 'device-required', 'a hand-out fork needs the device id of the person opening the link (device)');
    if (checkpointId) throw new HttpError(400, 'bad-checkpoint', 'a hand-out link forks the workspace as it stands');
    handout = { student: by.id };
  }
  let from: { state: Uint8Array; tablesDir?: string } | null = null;
  if (checkpointId) {
    if (!deps.checkpoint) throw new HttpError(400, 'checkpoints-unavailable', 'this server cannot fork from a checkpoint');
    from = await deps.checkpoint(id, checkpointId);
    if (!from) throw new HttpError(404, 'no-checkpoint', `workspace ${id} has no checkpoint ${checkpointId}`);
  }
  const r = await deps.forks.forkWorkspace(id, {
    by, name: body.name, handout,
    ...(from ? { state: from.state, checkpoint: checkpointId, tablesFrom: from.tablesDir } : {}),
  });
  const url = `${deps.publicUrl(req)}/w/${encodeURIComponent(r.workspace.id)}${r.token ? `?token=${r.token}` : ''}`;
  sendJson(res, r.existing ? 200 : 201, { workspace: r.workspace, forkedFrom: r.forkedFrom, token: r.token, url, existing: r.existing });
}

/** A hand-out link of workspace `ws`: whoever opens it gets their own fork (and nothing else). */
export function handoutLink(signer: TokenSigner, publicUrl: string, ws: string, ttlSeconds: number, gen = 0): { role: 'handout'; token: string; url: string; expires: number } {
  const token = signer.sign({ ws, role: 'viewer', sub: 'link:handout', handout: true, gen, ttlSeconds });
  return { role: 'handout', token, url: `${publicUrl}/w/${encodeURIComponent(ws)}?token=${token}`, expires: Date.now() + ttlSeconds * 1000 };
}
