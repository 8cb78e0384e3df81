import { describe, expect, it } from 'vitest';
import { displayText, isRounded, rawText } from '../src/notebook/outputs/formatValue.ts';

describe('table values', () => {
  it('shows fractions at 6 significant digits and keeps integers, text and JSON as they are', () => {
    expect(displayText(1.0089480392156858)).toBe('1.00895');
    expect(displayText(0.1 + 0.2)).toBe('0.3');
    expect(displayText(-123.456789)).toBe('-123.457');
    expect(displayText(2.5)).toBe('2.5');
    expect(displayText(123456789)).toBe('123456789');
    expect(displayText(0.0000123456)).toBe('1.2346e-5');
    expect(displayText(6.02214076e23)).toBe('6.0221e+23');
    expect(displayText('1.0089480392156858')).toBe('1.0089480392156858');
    expect(displayText(null)).toBe('');
    expect(displayText({ a: 1 })).toBe('{"a":1}');
  });

  it('keeps the full value for the title and for copying', () => {
    expect(rawText(1.0089480392156858)).toBe('1.0089480392156858');
    expect(isRounded(1.0089480392156858)).toBe(true);
    expect(isRounded(2.5)).toBe(false);
  });
});
