/**
 * The drain close code (1012 server-draining, sent when a node stops) is a retryable notice for
 * the browser client — its provider reconnects and the notice clears once synced — never a fatal
 * problem that would stop reconnecting.
 */
import { describe, expect, it } from 'vitest';
import { CloseCodes } from '@plexus/shared';
import { classifyProblem } from '../src/collab/problems.ts';

describe('close codes the browser client retries', () => {
  it('1012 server-draining is a notice, by reason or by code alone', () => {
    for (const p of [classifyProblem('server-draining', 1012), classifyProblem('', CloseCodes.ServerDraining.code), classifyProblem(undefined, 1012)]) {
      expect(p).toMatchObject({ reason: 'server-draining', action: 'notice' });
      expect(p!.message).toMatch(/restarting; reconnecting/);
    }
  });

  it('fatal reasons stay fatal and ordinary closes stay silent', () => {
    expect(classifyProblem('token-expired', 4401)?.action).toBe('fatal');
    expect(classifyProblem('', 1006)).toBeNull();
    expect(classifyProblem('', 1000)).toBeNull();
  });
});
