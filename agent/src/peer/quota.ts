/**
 * Agent quotas: how many requests and model tokens one person, and one workspace, may spend per
 * hour (a sliding hour). A busy class cannot spend a lab's whole model budget: each workspace has
 * its own ceiling, and each person theirs across workspaces.
 * The ledger lives in the agent process — the process that calls the model and so the only one
 * that knows what was spent — never in the shared document, where any editor could reset it. It
 * is saved to a file (next to the agent's token file) after each change, so a restart forgets
 * nothing. A person is the requester the run records (see docs: a share link's holders share it).
 * Effects: reads and writes the ledger file.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface QuotaLimits {
  /** 0: no limit. */
  requestsPerHourPerPerson: number;
  requestsPerHourPerWorkspace: number;
  tokensPerHourPerPerson: number;
  tokensPerHourPerWorkspace: number;
}

interface Entry {
  at: number;
  ws: string;
  person: string;
  /** 1 for a request; its tokens are added to the same entry when the run ends. */
  tokens: number;
}

const HOUR = 3_600_000;

const inMinutes = (ms: number) => {
  const m = Math.max(1, Math.ceil(ms / 60_000));
  return m === 1 ? 'in a minute' : `in ${m} minutes`;
};

export class AgentQuota {
  private entries: Entry[] = [];

  constructor(
    readonly limits: QuotaLimits,
    private readonly file: string | null = null,
    private readonly now: () => number = Date.now,
  ) {
    if (file) {
      try {
        const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { entries?: Entry[] };
        this.entries = (saved.entries ?? []).filter((e) => typeof e.at === 'number' && typeof e.ws === 'string' && typeof e.person === 'string' && typeof e.tokens === 'number');
      } catch {
        this.entries = []; // no ledger yet (or unreadable: start afresh rather than refuse everyone)
      }
    }
  }

  private recent(): Entry[] {
    const since = this.now() - HOUR;
    if (this.entries.length && this.entries[0]!.at < since) this.entries = this.entries.filter((e) => e.at >= since);
    return this.entries;
  }

  /** Why a new request by `person` in workspace `ws` must be refused now, or null. */
  refusal(ws: string, person: string): string | null {
    const recent = this.recent();
    const mine = recent.filter((e) => e.person === person);
    const here = recent.filter((e) => e.ws === ws);
    const l = this.limits;
    const when = (list: Entry[], keep: number) => inMinutes(list[list.length - keep]!.at + HOUR - this.now());
    if (l.requestsPerHourPerPerson && mine.length >= l.requestsPerHourPerPerson)
      return `You have used ${mine.length} agent requests in the last hour (limit ${l.requestsPerHourPerPerson} per person); you can ask again ${when(mine, l.requestsPerHourPerPerson)}.`;
    if (l.requestsPerHourPerWorkspace && here.length >= l.requestsPerHourPerWorkspace)
      return `This workspace has used ${here.length} agent requests in the last hour (limit ${l.requestsPerHourPerWorkspace}); the agent takes requests here again ${when(here, l.requestsPerHourPerWorkspace)}.`;
    const tokens = (list: Entry[]) => list.reduce((a, e) => a + e.tokens, 0);
    if (l.tokensPerHourPerPerson && tokens(mine) >= l.tokensPerHourPerPerson)
      return `Your agent requests used ${tokens(mine).toLocaleString('en')} model tokens in the last hour (limit ${l.tokensPerHourPerPerson.toLocaleString('en')} per person); try again ${inMinutes(mine[0]!.at + HOUR - this.now())}.`;
    if (l.tokensPerHourPerWorkspace && tokens(here) >= l.tokensPerHourPerWorkspace)
      return `This workspace used ${tokens(here).toLocaleString('en')} model tokens in the last hour (limit ${l.tokensPerHourPerWorkspace.toLocaleString('en')}); try again ${inMinutes(here[0]!.at + HOUR - this.now())}.`;
    return null;
  }

  /** Counts a request that is starting; returns a function recording its tokens when it ends. */
  begin(ws: string, person: string): (tokens: number) => void {
    const e: Entry = { at: this.now(), ws, person, tokens: 0 };
    this.entries.push(e);
    this.save();
    return (tokens) => {
      e.tokens += Math.max(0, tokens);
      this.save();
    };
  }

  private save(): void {
    if (!this.file) return;
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true });
      fs.writeFileSync(this.file + '.tmp', JSON.stringify({ entries: this.recent() }));
      fs.renameSync(this.file + '.tmp', this.file);
    } catch {
      /* the ledger stays in memory */
    }
  }
}
