/**
 * The credentials of the services that run as processes of their own: one service token for every
 * workspace, written at each server start to `<dataDir>/agent.token` for the agent process
 * `npm start` runs next to the server, and (with `PLEXUS_KERNEL=external`) to
 * `<dataDir>/kernel.token` for kernel processes (`npm run kernel`); mode 0600, replaced
 * atomically. Only these tokens may list the workspaces people are in and hold a workspace's lease
 * (`/api/agent/…`, `/api/kernel/…`).
 * Effects: writes the token files.
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

export const KERNEL_SUB = 'service:kernel';
export const KERNEL_TOKEN_FILE = 'kernel.token';
/**
 * True for a kernel process's token (every workspace). A kernel the server starts itself has a
 * token for its one workspace instead, and its connection is never relayed to another node.
 */
export const isKernelProcessClaims = (c: TokenClaims): boolean => c.ws === '*' && c.role === 'service' && c.sub === KERNEL_SUB;
/**
 * The agent's and kernel processes' tokens for every workspace: for the service API only. Their
 * processes join a document with the token their lease came with, so the document endpoints make
 * these read-only — a write that skipped the lease fence would defeat it.
 */
export const isGlobalServiceClaims = (c: TokenClaims): boolean => isAgentClaims(c) || isKernelProcessClaims(c);

/** True for the token of a kernel started by this very node (one workspace): served here, never relayed. */
export const isNodeKernelClaims = (c: TokenClaims): boolean => c.ws !== '*' && c.role === 'service' && c.sub === KERNEL_SUB && c.runner === undefined;

/**
 * The token a kernel process connects to workspace `ws` with, given with its kernel lease: it names
 * the runner, so the server refuses its writes once another runner holds the lease.
 */
export function kernelLeaseToken(signer: TokenSigner, ws: string, runner: string): string {
  return signer.sign({ ws, role: 'service', sub: KERNEL_SUB, name: 'Kernel', runner, ttlSeconds: AGENT_TOKEN_DAYS * 86400 });
}

/** The same for the agent: the token its runner `runner` joins workspace `ws` with (named `name` in presence). */
export function agentLeaseToken(signer: TokenSigner, ws: string, runner: string, name: string = AGENT_NAME): string {
  return signer.sign({ ws, role: 'service', sub: AGENT_SUB, name: name.slice(0, 100), runner, ttlSeconds: AGENT_TOKEN_DAYS * 86400 });
}

/** Signs a fresh kernel-process token and writes it to `<dataDir>/kernel.token` (0600, atomically). Returns the path. */
export function writeKernelToken(dataDir: string, signer: TokenSigner): string {
  const token = signer.sign({ ws: '*', role: 'service', sub: KERNEL_SUB, name: 'Kernel', ttlSeconds: AGENT_TOKEN_DAYS * 86400 });
  return writeTokenFile(path.join(dataDir, KERNEL_TOKEN_FILE), token);
}

/** Signs a fresh agent token (named `name`, PLEXUS_AGENT_NAME) and writes it to `<dataDir>/agent.token` (0600, atomically). Returns the path. */
export function writeAgentToken(dataDir: string, signer: TokenSigner, name: string = AGENT_NAME): string {
  // The name is the one everyone sees in presence (the server stamps a token's name).
  const token = signer.sign({ ws: '*', role: 'service', sub: AGENT_SUB, name: name.slice(0, 100), ttlSeconds: AGENT_TOKEN_DAYS * 86400 });
  return writeTokenFile(path.join(dataDir, AGENT_TOKEN_FILE), token);
}

function writeTokenFile(file: string, token: string): string {
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
