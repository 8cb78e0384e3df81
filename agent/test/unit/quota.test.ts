/** Agent quotas: per person and per workspace, requests and tokens, over a sliding hour; kept across restarts. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentQuota } from '../../src/peer/quota.ts';

const limits = { requestsPerHourPerPerson: 2, requestsPerHourPerWorkspace: 3, tokensPerHourPerPerson: 1000, tokensPerHourPerWorkspace: 0 };

describe('agent quota', () => {
  it('refuses the request past a person’s limit with when it frees up; others and other workspaces go on', () => {
    let now = 0;
    const q = new AgentQuota(limits, null, () => now);
    q.begin('w1', 'ada')(10);
    now += 20 * 60_000;
    q.begin('w1', 'ada')(10);
    expect(q.refusal('w1', 'ada')).toBe('You have used 2 agent requests in the last hour (limit 2 per person); you can ask again in 40 minutes.');
    expect(q.refusal('w2', 'ada')).toContain('limit 2 per person'); // a person's limit spans workspaces
    expect(q.refusal('w1', 'bob')).toBeNull();
    q.begin('w1', 'bob');
    expect(q.refusal('w1', 'cy')).toBe('This workspace has used 3 agent requests in the last hour (limit 3); the agent takes requests here again in 40 minutes.');
    expect(q.refusal('w2', 'cy')).toBeNull(); // another workspace has its own budget
    now += 40 * 60_000 + 1; // the first request leaves the hour
    expect(q.refusal('w1', 'ada')).toBeNull();
  });

  it('counts tokens when runs end, and refuses once a person spent their hourly tokens', () => {
    let now = 0;
    const q = new AgentQuota({ ...limits, requestsPerHourPerPerson: 0, requestsPerHourPerWorkspace: 0 }, null, () => now);
    const end = q.begin('w1', 'ada');
    expect(q.refusal('w1', 'ada')).toBeNull();
    end(1200);
    expect(q.refusal('w1', 'ada')).toMatch(/used 1,200 model tokens in the last hour \(limit 1,000 per person\); try again in 60 minutes/);
    now += 3_600_001;
    expect(q.refusal('w1', 'ada')).toBeNull();
  });

  it('survives a restart of the agent (the ledger file), and starts afresh on an unreadable one', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'quota-')), 'agent-usage.json');
    const now = () => 1_000;
    const a = new AgentQuota(limits, file, now);
    a.begin('w1', 'ada');
    a.begin('w1', 'ada');
    expect(new AgentQuota(limits, file, now).refusal('w1', 'ada')).toContain('limit 2 per person');
    fs.writeFileSync(file, '{not json');
    expect(new AgentQuota(limits, file, now).refusal('w1', 'ada')).toBeNull();
  });
});
