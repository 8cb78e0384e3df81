import { describe, expect, it } from 'vitest';
import { fileTurn } from '../../src/data/guarded-duckdb.ts';

describe('fileTurn', () => {
  it('lets one opener of a file in at a time, in order, and never waits for another file or memory', async () => {
    const order: string[] = [];
    const first = await fileTurn('/t/a.duckdb');
    let secondIn = false;
    const second = fileTurn('/t/a.duckdb').then((r) => {
      secondIn = true;
      order.push('second');
      return r;
    });
    const third = fileTurn('/t/a.duckdb').then((r) => {
      order.push('third');
      return r;
    });
    // Another file and ':memory:' go at once.
    (await fileTurn('/t/b.duckdb'))();
    (await fileTurn(':memory:'))();
    (await fileTurn(':memory:'))();
    await new Promise<void>((r) => setImmediate(r));
    expect(secondIn).toBe(false);
    order.push('first');
    first();
    first(); // releasing twice changes nothing
    (await second)();
    (await third)();
    expect(order).toEqual(['first', 'second', 'third']);
    // All released: the next opener goes at once.
    (await fileTurn('/t/a.duckdb'))();
  });
});
