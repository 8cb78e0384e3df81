import { describe, expect, it } from 'vitest';
import { numericClaims, unsupportedClaims } from '../src/agent/grounding.ts';

const claims = (s: string) => numericClaims(s).map((c) => c.text);
const unsupported = (answer: string, ...evidence: string[]) => unsupportedClaims(answer, evidence).map((c) => c.text);

describe('numeric claims of an answer', () => {
  it('finds numbers stated as results, in prose, bold and inline code, with units and percent', () => {
    expect(claims('The total is **12**: the cell I added computes it.')).toEqual(['12']);
    expect(claims('Mean ΔF/F is `0.42`, peak 1,234.5 at 30Hz; 45 % of cells respond; −3.2 dB; 1.2e-5 s')).toEqual(['0.42', '1,234.5', '30', '45 %', '−3.2', '1.2e-5']);
    expect(claims('It took 12ms and ran 2x faster.')).toEqual(['12', '2']);
  });

  it('skips identifiers, versions, dates, times, list markers, references, counts and fenced code', () => {
    expect(claims('Cell c_12ab3 and x86 in v1.2 on 2026-11-24 at 12:30 in 3D, the 2nd try')).toEqual([]);
    expect(claims('1. read\n2) run\n- see cell 3, step 2, line 14, #7')).toEqual([]);
    expect(claims('I added 2 cells and made 1 proposal.')).toEqual([]);
    expect(claims('```js\nconst total = 3 + 4 + 5; // 12\n```\nDone.')).toEqual([]);
    // A count that is large, or a count of things that are results, is a claim.
    expect(claims('I found 12 cells and 5 neurons.')).toEqual(['12', '5']);
  });
});

describe('unsupported claims', () => {
  it('flags a number no evidence shows (the README demo without a run)', () => {
    const evidence = ['ana: what is the total of 3, 4 and 5?', '{"ok":true,"proposed":true,"proposal":"m_8k2x12","cell_id":"c_1a2b12"}'];
    expect(unsupported('The total is **12**: the cell I added computes it.', ...evidence)).toEqual(['12']);
    expect(unsupported('The numbers were 3, 4 and 5.', ...evidence)).toEqual([]);
  });

  it('accepts the value at the precision written, either sign, percent as a fraction', () => {
    expect(unsupported('The total is 12.', '{"outputs":["12"]}')).toEqual([]);
    expect(unsupported('The mean is 1.01.', '{"mean":1.0089480392156858}')).toEqual([]);
    expect(unsupported('The mean is 1.02.', '{"mean":1.0089480392156858}')).toEqual(['1.02']);
    expect(unsupported('The slope is -0.5.', '{"slope":0.5}')).toEqual([]);
    expect(unsupported('45% of the cells respond.', '{"fraction":0.4512}')).toEqual([]);
    expect(unsupported('About 1,234 rows.', 'rows: 1,234')).toEqual([]);
    expect(unsupported('Values 100 and 200.', '[100,200,300]')).toEqual([]);
    expect(unsupported('12 and 12 again, and 13.', '')).toEqual(['12', '13']);
  });

  it('does not take digits inside identifiers as evidence', () => {
    expect(unsupported('The total is 12.', '{"cell_id":"c_x12","proposal":"m_a12"}')).toEqual(['12']);
  });
});
