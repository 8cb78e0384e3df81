/** Words of the analyses panel: a stage's progress line, time left, who started a job. */
import { describe, expect, it } from 'vitest';
import { etaText, progressFraction, progressText, requesterLabel } from '../src/analyses/jobText.ts';

const p = (stage: string, done: number, total: number, eta: number | null = null) => ({ stage, done, total, eta, at: 0 });

describe('job text', () => {
  it('says what a stage counts and how long is left', () => {
    expect(progressText(p('registration', 412, 900, 12))).toBe('registration 412 / 900 frames · ~12 s left');
    expect(progressText(p('traces', 3, 40))).toBe('traces 3 / 40 ROIs');
    expect(progressText(p('template', 1, 5, 2))).toBe('reference image 1 / 5 passes · ~2 s left');
    expect(progressText(p('detection', 0, 1))).toBe('detection');
    expect(etaText(200)).toBe('~3 min left');
    expect(etaText(null)).toBe('');
  });

  it('draws a one-step stage as an indeterminate bar', () => {
    expect(progressFraction(p('detection', 0, 1))).toBeNull();
    expect(progressFraction(p('registration', 450, 900))).toBe(0.5);
  });

  it('names the starter by the token name, else by the one name present with that subject', () => {
    expect(requesterLabel({ id: 'local-owner', name: 'Ann', via: 'person' }, [])).toBe('Ann');
    expect(requesterLabel({ id: 'local-owner', via: 'person' }, [{ sub: 'local-owner', name: 'Alice' }, { sub: 'link:editor', name: 'Bob' }])).toBe('Alice');
    // A link two people use names neither.
    expect(requesterLabel({ id: 'link:editor', via: 'person' }, [{ sub: 'link:editor', name: 'Bob' }, { sub: 'link:editor', name: 'Carol' }])).toBe('link:editor');
  });
});
