/** DuckDB's settings from the environment: threads per workspace (PLEXUS_SQL_THREADS). */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

describe('PLEXUS_SQL_THREADS', () => {
  it('defaults to 2, takes a whole number of at least 1, refuses what is not a number', () => {
    expect(loadConfig({}).sqlThreads).toBe(2);
    expect(loadConfig({ PLEXUS_SQL_THREADS: '1' }).sqlThreads).toBe(1);
    expect(loadConfig({ PLEXUS_SQL_THREADS: '8' }).sqlThreads).toBe(8);
    expect(loadConfig({ PLEXUS_SQL_THREADS: '0' }).sqlThreads).toBe(1);
    expect(loadConfig({ PLEXUS_SQL_THREADS: '2.7' }).sqlThreads).toBe(2);
    expect(() => loadConfig({ PLEXUS_SQL_THREADS: 'many' })).toThrow(/PLEXUS_SQL_THREADS/);
  });
});
