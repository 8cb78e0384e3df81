import { describe, expect, it } from 'vitest';
import { prettyArgs, undoneText } from '../src/agent/runText.ts';

describe('run block texts', () => {
  it('says who undid a run and what it reverted, once', () => {
    const undone = (message: string, ok = true) => ({ undone: { ok, at: 1, by: 'u_ana', message }, undo: { id: 'u_ana', name: 'Ana', at: 1 } }) as never;
    expect(undoneText(undone('undone by Ana (3 changes reverted)'))).toBe('Undone by Ana — 3 changes reverted');
    expect(undoneText(undone('undone by Ana'))).toBe('Undone by Ana');
    expect(undoneText(undone('the cell was deleted since', false))).toBe('Undo failed — the cell was deleted since');
    expect(undoneText({ undone: null, undo: null } as never)).toBe('');
  });

  it('shows arguments as pretty JSON, or as sent when they do not parse', () => {
    expect(prettyArgs('{"cell_id":"c_1","source":"x"}')).toBe('{\n  "cell_id": "c_1",\n  "source": "x"\n}');
    expect(prettyArgs('{"cell_id": ')).toBe('{"cell_id": ');
  });
});
