/**
 * Presenter mode's shared state and pure rules: the document record and its helpers, the notebook
 * anchor (top visible cell + fraction, independent of the window), what breaks a follower away,
 * who follows, which awareness entry is the presenter's, summons, and the follow state machine.
 */
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import * as S from '../src/index.ts';

const ada = { id: 'local-owner/u_ada', name: 'Ada' };
const bo = { id: 'link:editor/u_bo', name: 'Bo' };
const person = (id: string, name: string, extra: Record<string, unknown> = {}) => ({
  user: { id, name, color: '#000', role: 'editor', kind: 'person' },
  ...extra,
});

describe('the presentation record', () => {
  it('is started, taken over and ended through the helpers, each a transaction with its origin, within the schema', () => {
    const doc = new Y.Doc();
    S.initWorkspace(doc, { title: 't', created: 1 }, S.serverOrigin('t'));
    const origins: unknown[] = [];
    const problems: S.Violation[] = [];
    doc.on('afterTransaction', (tr: Y.Transaction) => {
      origins.push(tr.origin);
      problems.push(...S.checkTransaction(tr, 'person'));
    });
    const seen: Array<S.Presentation | null> = [];
    const off = S.observePresentation(doc, (p) => seen.push(p));
    const o = S.userOrigin('u_ada', 'Ada');
    expect(S.readPresentation(doc)).toBeNull();
    expect(S.startPresenting(doc, ada, o, 10)).toEqual({ by: ada.id, name: 'Ada', since: 10 });
    S.startPresenting(doc, bo, o, 11); // Bo takes over
    // Ada's stop (she was the presenter a moment ago) does not end Bo's presentation.
    expect(S.stopPresenting(doc, o, ada.id)).toBe(false);
    expect(S.readPresentation(doc)?.by).toBe(bo.id);
    expect(S.stopPresenting(doc, o)).toBe(true);
    expect(S.stopPresenting(doc, o)).toBe(false);
    off();
    expect(seen).toEqual([{ by: ada.id, name: 'Ada', since: 10 }, { by: bo.id, name: 'Bo', since: 11 }, null]);
    expect(origins.every((x) => x === o)).toBe(true);
    expect(problems).toEqual([]);
    expect(S.checkDocument(doc)).toEqual([]);
  });

  it('may be written by people only (the agent and the kernel are refused), with a valid value', () => {
    const doc = new Y.Doc();
    S.initWorkspace(doc, { title: 't', created: 1 }, S.serverOrigin('t'));
    const check = (writer: S.Writer, origin: S.Origin, write: () => void) => {
      let v: S.Violation[] = [];
      const h = (tr: Y.Transaction) => (v = S.checkTransaction(tr, writer));
      doc.on('afterTransaction', h);
      write();
      doc.off('afterTransaction', h);
      return v.map((x) => `${x.path}: ${x.problem}`).join('\n');
    };
    expect(check('agent', S.agentOrigin('r'), () => S.startPresenting(doc, ada, S.agentOrigin('r'), 1))).toContain('presentation');
    expect(check('kernel', S.KERNEL_ORIGIN, () => S.stopPresenting(doc, S.KERNEL_ORIGIN))).toContain('presentation');
    expect(check('person', S.userOrigin('u', 'U'), () => S.startPresenting(doc, ada, S.userOrigin('u', 'U'), 2))).toBe('');
    expect(check('person', S.userOrigin('u', 'U'), () => S.startPresenting(doc, { id: '', name: 'x' }, S.userOrigin('u', 'U'), 2))).toContain('presentation');
  });
});

describe('the notebook anchor', () => {
  const boxes: S.CellBox[] = [
    { id: 'a', top: 10, height: 100 },
    { id: 'b', top: 120, height: 400 },
    { id: 'c', top: 530, height: 50 },
  ];

  it('is the last cell starting at or above the scroll position, and the fraction of it scrolled past', () => {
    expect(S.anchorAt(boxes, 0)).toEqual({ cellId: 'a', ratio: 0 });
    expect(S.anchorAt(boxes, 60)).toEqual({ cellId: 'a', ratio: 0.5 });
    expect(S.anchorAt(boxes, 115)).toEqual({ cellId: 'a', ratio: 1 }); // in the gap after a
    expect(S.anchorAt(boxes, 120)).toEqual({ cellId: 'b', ratio: 0 });
    expect(S.anchorAt(boxes, 220)).toEqual({ cellId: 'b', ratio: 0.25 });
    expect(S.anchorAt(boxes, 9999)).toEqual({ cellId: 'c', ratio: 1 });
    expect(S.anchorAt([], 50)).toBeNull();
    // Sub-pixel jitter does not change the anchor (rounded to 1/10,000).
    expect(S.anchorAt(boxes, 220.00001)).toEqual(S.anchorAt(boxes, 220));
  });

  it('finds the same place in a window of another size (cells of other heights)', () => {
    const presenter = S.anchorAt(boxes, 320)!; // half-way through b
    expect(presenter).toEqual({ cellId: 'b', ratio: 0.5 });
    // A narrower window: cells wrap, b is taller and further down.
    const narrow = { top: 200, height: 900 };
    expect(S.scrollTopFor(presenter, narrow)).toBe(650);
    expect(S.anchorAt([{ id: 'a', top: 0, height: 190 }, { id: 'b', ...narrow }], 650)).toEqual(presenter);
  });

  it('is found by binary search in a long notebook', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => ({ id: `c${i}`, top: i * 100, height: 90 }));
    expect(S.anchorAt(many, 123_456)).toEqual({ cellId: 'c1234', ratio: Math.round((56 / 90) * 10_000) / 10_000 });
  });
});

describe('breaking away', () => {
  it('happens on the follower’s own scroll, click, keys or camera move; never on modifiers or the toggle shortcut', () => {
    expect(S.breakAwayReason({ kind: 'wheel' })).toBe('you scrolled');
    expect(S.breakAwayReason({ kind: 'touch' })).toBe('you scrolled');
    expect(S.breakAwayReason({ kind: 'pointer' })).toBe('you clicked');
    expect(S.breakAwayReason({ kind: 'camera' })).toBe('you moved the view');
    expect(S.breakAwayReason({ kind: 'key', key: 'PageDown' })).toBe('you used the keyboard');
    expect(S.breakAwayReason({ kind: 'key', key: 'ArrowDown' })).toBe('you used the keyboard');
    expect(S.breakAwayReason({ kind: 'key', key: 'Shift' })).toBeNull();
    expect(S.breakAwayReason({ kind: 'key', key: 'Control' })).toBeNull();
    expect(S.breakAwayReason({ kind: 'key', key: 'p', ctrl: true, alt: true })).toBeNull();
    expect(S.breakAwayReason({ kind: 'key', key: 'p' })).toBe('you used the keyboard');
  });

  it('the follow state machine: follow by default, break away, rejoin, stop, presenter changes and the end', () => {
    const me = 'link:viewer/u_vic';
    const p1: S.Presentation = { by: ada.id, name: 'Ada', since: 1 };
    let s = S.followReducer(S.INITIAL_FOLLOW, { type: 'presentation', presentation: p1, selfId: me });
    expect(s).toEqual({ presentation: p1, following: true, note: null });
    // The same presentation seen again (another document change) keeps the state.
    expect(S.followReducer(s, { type: 'presentation', presentation: { ...p1 }, selfId: me }).following).toBe(true);
    s = S.followReducer(s, { type: 'input', input: { kind: 'key', key: 'Shift' } });
    expect(s.following).toBe(true);
    s = S.followReducer(s, { type: 'input', input: { kind: 'wheel' } });
    expect(s).toMatchObject({ following: false, note: 'you scrolled' });
    // Once broken away, further input changes nothing; the same presentation does not re-follow.
    expect(S.followReducer(s, { type: 'input', input: { kind: 'pointer' } })).toBe(s);
    expect(S.followReducer(s, { type: 'presentation', presentation: { ...p1 }, selfId: me }).following).toBe(false);
    s = S.followReducer(s, { type: 'rejoin', selfId: me });
    expect(s).toMatchObject({ following: true, note: null });
    s = S.followReducer(s, { type: 'stop' });
    expect(s).toMatchObject({ following: false, note: 'you stopped following' });
    // Someone takes over: a new presentation is followed by default again.
    const p2: S.Presentation = { by: bo.id, name: 'Bo', since: 2 };
    s = S.followReducer(s, { type: 'presentation', presentation: p2, selfId: me });
    expect(s).toMatchObject({ following: true, presentation: p2 });
    s = S.followReducer(s, { type: 'presentation', presentation: null, selfId: me });
    expect(s).toEqual({ presentation: null, following: false, note: 'the presentation ended' });
    // The presenter never follows themself, and cannot rejoin their own presentation.
    const own = S.followReducer(S.INITIAL_FOLLOW, { type: 'presentation', presentation: p1, selfId: ada.id });
    expect(own.following).toBe(false);
    expect(S.followReducer(own, { type: 'rejoin', selfId: ada.id }).following).toBe(false);
  });
});

describe('awareness: the presenter, the followers, summons', () => {
  const present: S.PresentState = { anchor: { cellId: 'c1', ratio: 0.25 }, focus: 'c1', panels: { viewer: true, atlas: false, data: false, analyses: true }, summon: null };
  const states = new Map<number, unknown>([
    [5, person(ada.id, 'Ada', { present })],
    [9, person(ada.id, 'Ada')], // Ada's second tab, not presenting
    [2, person(bo.id, 'Bo', { following: ada.id })],
    [3, person(bo.id, 'Bo', { following: ada.id })], // Bo's second tab counts once
    [4, person('link:viewer/u_vic', 'Vic', { following: ada.id })],
    [6, person('link:editor/u_cy', 'Cy', { following: null })],
    [7, { following: ada.id }], // no presence: not a person
    [8, person(ada.id, 'Ada', { following: ada.id })], // never one's own follower
  ]);

  it('lists each follower once, by name', () => {
    expect(S.followersOf(states, ada.id)).toEqual([
      { id: bo.id, name: 'Bo' },
      { id: 'link:viewer/u_vic', name: 'Vic' },
    ]);
    expect(S.followersOf(states, bo.id)).toEqual([]);
  });

  it('finds the presenter’s entry with a `present` field, and reads it defensively', () => {
    const p: S.Presentation = { by: ada.id, name: 'Ada', since: 1 };
    expect(S.presenterEntry(states, p)).toMatchObject({ clientId: 5, present });
    expect(S.presenterEntry(states, { ...p, by: bo.id })).toBeNull();
    expect(S.presenterEntry(states, null)).toBeNull();
    expect(S.readPresent({ present: { anchor: { cellId: 'x', ratio: 7 }, panels: { viewer: 'yes' }, summon: 'now' } })).toEqual({
      anchor: { cellId: 'x', ratio: 1 },
      focus: null,
      panels: { viewer: false, atlas: false, data: false, analyses: false },
      summon: null,
    });
    expect(S.readPresent({ present: null })).toBeNull();
    expect(S.readFollowing({ following: '' })).toBeNull();
  });

  it('acts on a summons once, and not on one made before the page saw the presenter', () => {
    expect(S.isNewSummon(undefined, 100)).toBe(false); // first sight: already there before us
    expect(S.isNewSummon(null, 100)).toBe(true);
    expect(S.isNewSummon(100, 100)).toBe(false);
    expect(S.isNewSummon(100, 200)).toBe(true);
    expect(S.isNewSummon(100, null)).toBe(false);
  });
});
