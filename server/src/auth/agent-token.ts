/**
 * The agent's credential: one service token for every workspace, written at each server start to
 * `<dataDir>/agent.token` (mode 0600, replaced atomically) for the agent process `npm start` runs
 * next to the server. Only this token may list the workspaces people are in (`/api/agent/workspaces`).
 * Effects: writes the token file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { TokenClaims } from '@plexus/shared';
import type { TokenSigner } from './tokens.ts';

export const AGENT_SUB = 'service:agent';
export const AGENT_NAME = 'Plexus agent';
export const AGENT_TOKEN_FILE = 'agent.token';
const AGENT_TOKEN_DAYS = 30;

/** True for the agent's token: every workspace, service role, agent subject. */
export const isAgentClaims = (c: TokenClaims): boolean => c.ws === '*' && c.role === 'service' && c.sub === AGENT_SUB;

/** Signs a fresh agent token (named `name`, PLEXUS_AGENT_NAME) and writes it to `<dataDir>/agent.token` (0600, atomically). Returns the path. */
export function writeAgentToken(dataDir: string, signer: TokenSigner, name: string = AGENT_NAME): string {
  // The name is the one everyone sees in presence (the server stamps a token's name).
  const token = signer.sign({ ws: '*', role: 'service', sub: AGENT_SUB, name: name.slice(0, 100), ttlSeconds: AGENT_TOKEN_DAYS * 86400 });
  const file = path.join(dataDir, AGENT_TOKEN_FILE);
  const tmp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    fs.writeFileSync(tmp, token + '\n', { mode: 0o600, flag: 'wx' });
    fs.chmodSync(tmp, 0o600); // whatever the umask
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  return file;
}
