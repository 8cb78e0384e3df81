/**
 * Joins the workspaces people have open and leaves the ones they left: polls the server's
 * `GET /api/agent/workspaces` with the agent's service token, starts a WorkspacePeer for each open
 * workspace, and stops a peer a while after its last person left (never during a run). Survives
 * the server restarting: polling and each provider retry until it is back.
 * Effects: network, timers, reads the token file.
 */
import fs from 'node:fs';
import type { AgentConfig } from '../config.ts';
import type { Model } from '../llm/model.ts';
import { WorkspacePeer } from './workspace-peer.ts';
import { AgentQuota } from './quota.ts';

export type Log = (msg: string, extra?: Record<string, unknown>) => void;

export class Supervisor {
  readonly peers = new Map<string, WorkspacePeer>();
  private readonly emptySince = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private warned = '';
  /** One ledger for the whole process: a person's limits span the workspaces they use. */
  private readonly quota: AgentQuota;

  constructor(
    private readonly config: AgentConfig,
    private readonly model: Model,
    private readonly log: Log,
  ) {
    this.quota = new AgentQuota(config.quota, config.quotaFile);
  }

  /** The agent's service token (re-read each time: the server rewrites the file on start). */
  token = (): string => {
    if (this.config.token) return this.config.token;
    return fs.readFileSync(this.config.tokenFile, 'utf8').trim();
  };

  start(): void {
    void this.tick();
  }

  private warnOnce(msg: string, extra?: Record<string, unknown>): void {
    if (this.warned === msg) return;
    this.warned = msg;
    this.log(msg, extra);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      const res = await fetch(`${this.config.serverUrl}/api/agent/workspaces`, { headers: { authorization: `Bearer ${this.token()}` }, signal: AbortSignal.timeout(5000) });
      if (!res.ok) throw new Error(`the server answered ${res.status} ${(await res.text()).slice(0, 200)}`);
      const body = (await res.json()) as { workspaces: Array<{ id: string; people: number }> };
      this.warned = '';
      await this.reconcile(body.workspaces);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      this.warnOnce(err.code === 'ENOENT' ? `waiting for the agent token file ${this.config.tokenFile}` : `waiting for the Plexus server at ${this.config.serverUrl}: ${err.message}`);
    }
    if (!this.stopped) this.timer = setTimeout(() => void this.tick(), this.config.pollMs);
  }

  private async reconcile(open: Array<{ id: string; people: number }>): Promise<void> {
    const now = Date.now();
    const withPeople = new Set(open.filter((w) => w.people > 0).map((w) => w.id));
    for (const id of withPeople) {
      this.emptySince.delete(id);
      if (this.peers.has(id)) continue;
      const peer = new WorkspacePeer(id, this.config, this.model, this.token, this.log, this.quota);
      this.peers.set(id, peer);
      this.log('joining workspace', { ws: id, clientId: peer.clientId });
      peer.start().catch((e) => this.log('could not join workspace', { ws: id, err: String(e) }));
    }
    for (const [id, peer] of this.peers) {
      if (withPeople.has(id)) continue;
      const since = this.emptySince.get(id) ?? now;
      this.emptySince.set(id, since);
      if (now - since >= this.config.leaveAfterMs && !peer.busy) {
        this.peers.delete(id);
        this.emptySince.delete(id);
        this.log('leaving workspace', { ws: id });
        await peer.close();
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.all([...this.peers.values()].map((p) => p.close()));
    this.peers.clear();
  }
}
