import { describe, expect, it } from 'vitest';
import type { ReplyState, ReplyView } from './connector.js';
import { mergeHistory, type UpstreamMessage } from './history-merge.js';

// A reload shows what the page showed: the upstream's history, with the page's own kept turns in
// their place (a stopped, failed or unanswered one as it ended here).

const up = (id: string, role: 'user' | 'assistant', text: string): UpstreamMessage => ({ id, role, text });
const view = (eventId: string, state: ReplyState, text: string, part = 0): ReplyView => ({
  id: `${eventId}.${part}`,
  conversation: 'c',
  text,
  state,
  feedback: state === 'final',
  writes: 3,
  replyKey: `k-${eventId}`,
});
/** role:text(state) of each entry, to read the order at a glance. */
const shape = (entries: ReturnType<typeof mergeHistory>) =>
  entries.map((e) => `${e.role}:${e.text}${e.state !== undefined && e.state !== 'final' ? `(${e.state})` : ''}`);

describe('mergeHistory', () => {
  it('the upstream alone when nothing was kept', () => {
    const h = [up('1', 'user', 'hi'), up('2', 'assistant', 'hello')];
    expect(mergeHistory(h, [], [])).toEqual([
      { id: 'h-1', role: 'user', text: 'hi' },
      { id: 'h-2', role: 'assistant', text: 'hello', state: 'final', feedback: false },
    ]);
  });

  it('a stopped reply the upstream never stored stays, stopped, after its message', () => {
    const h = [up('1', 'user', 'old'), up('2', 'assistant', 'old reply'), up('3', 'user', 'long one')];
    const out = mergeHistory(h, [{ eventId: 'e1', text: 'long one' }], [view('e1', 'stopped', 'part… (stopped)')]);
    expect(shape(out)).toEqual([
      'user:old',
      'assistant:old reply',
      'user:long one',
      'assistant:part… (stopped)(stopped)',
    ]);
    expect(out[3]).toMatchObject({ id: 'e1.0', replyKey: 'k-e1', writes: 3 });
  });

  it("the page's view replaces the upstream's whole version of a reply the user saw cut, and keeps its parts", () => {
    const h = [
      up('1', 'user', 'q'),
      up('2', 'assistant', 'the whole answer'),
      up('3', 'user', 'next'),
      up('4', 'assistant', 'a'),
    ];
    const asks = [
      { eventId: 'e1', text: 'q' },
      { eventId: 'e2', text: 'next' },
    ];
    const views = [
      view('e1', 'stopped', 'the wh (stopped)'),
      view('e2', 'final', 'a1', 0),
      view('e2', 'final', 'a2', 1),
    ];
    expect(shape(mergeHistory(h, asks, views))).toEqual([
      'user:q',
      'assistant:the wh (stopped)(stopped)',
      'user:next',
      'assistant:a1',
      'assistant:a2',
    ]);
  });

  it('a message that never reached the upstream is shown with its error, after what the upstream has before it', () => {
    const h = [
      up('1', 'user', 'before'),
      up('2', 'assistant', 'r'),
      up('3', 'user', 'after'),
      up('4', 'assistant', 'r2'),
    ];
    const asks = [
      { eventId: 'e0', text: 'before' },
      { eventId: 'e1', text: 'broken' },
      { eventId: 'e2', text: 'after' },
    ];
    const views = [view('e0', 'final', 'r'), view('e1', 'error', 'Sorry'), view('e2', 'final', 'r2')];
    expect(shape(mergeHistory(h, asks, views))).toEqual([
      'user:before',
      'assistant:r',
      'user:broken',
      'assistant:Sorry(error)',
      'user:after',
      'assistant:r2',
    ]);
    // Older upstream messages than every kept turn come first.
    const older = [up('0', 'user', 'ancient'), up('00', 'assistant', 'x')];
    expect(shape(mergeHistory(older, [{ eventId: 'e1', text: 'broken' }], [view('e1', 'error', 'Sorry')]))).toEqual([
      'user:ancient',
      'assistant:x',
      'user:broken',
      'assistant:Sorry(error)',
    ]);
  });

  it('matches the newest of equal messages; a whole kept turn the upstream lacks is left out', () => {
    const h = [up('1', 'user', 'hi'), up('2', 'assistant', 'old'), up('3', 'user', 'hi')];
    const asks = [
      { eventId: 'gone', text: 'outside the window' },
      { eventId: 'e1', text: 'hi' },
    ];
    const views = [view('gone', 'final', 'whole'), view('e1', 'streaming', 'hal')];
    expect(shape(mergeHistory(h, asks, views))).toEqual([
      'user:hi',
      'assistant:old',
      'user:hi',
      'assistant:hal(streaming)',
    ]);
  });

  it('a message not answered yet keeps the upstream reply if any, or shows alone', () => {
    expect(
      shape(mergeHistory([up('1', 'user', 'q'), up('2', 'assistant', 'a')], [{ eventId: 'e', text: 'q' }], [])),
    ).toEqual(['user:q', 'assistant:a']);
    expect(shape(mergeHistory([], [{ eventId: 'e', text: 'queued' }], []))).toEqual(['user:queued']);
  });

  it('no upstream conversation (none yet, or forgotten): every kept turn, and replies of no kept message last', () => {
    const asks = [
      { eventId: 'e1', text: 'one' },
      { eventId: 'e2', text: 'two' },
    ];
    const views = [view('old', 'interrupted', 'cut'), view('e1', 'final', 'r1'), view('e2', 'error', 'Sorry')];
    expect(shape(mergeHistory(undefined, asks, views))).toEqual([
      'user:one',
      'assistant:r1',
      'user:two',
      'assistant:Sorry(error)',
      'assistant:cut(interrupted)',
    ]);
  });
  describe('a retried message (issue 41)', () => {
    it('its copy upstream and its failed reply are left out: one message, one reply', () => {
      const h = [up('1', 'user', 'try me'), up('2', 'user', 'try me'), up('3', 'assistant', 'You said: try me')];
      const asks = [
        { eventId: 'e1', text: 'try me', replaced: true as const },
        { eventId: 'e2', text: 'try me' },
      ];
      expect(shape(mergeHistory(h, asks, [view('e2', 'final', 'You said: try me')]))).toEqual([
        'user:try me',
        'assistant:You said: try me',
      ]);
    });

    it('one the upstream never got hides nothing older, even an earlier message of the same text', () => {
      const h = [
        up('1', 'user', 'try me'),
        up('2', 'assistant', 'first'),
        up('3', 'user', 'x'),
        up('4', 'user', 'try me'),
      ];
      const asks = [
        { eventId: 'e0', text: 'x' },
        { eventId: 'e1', text: 'try me', replaced: true as const },
        { eventId: 'e2', text: 'try me' },
      ];
      expect(shape(mergeHistory(h, asks, [view('e0', 'error', 'failed'), view('e2', 'final', 'again')]))).toEqual([
        'user:try me',
        'assistant:first',
        'user:x',
        'assistant:failed(error)',
        'user:try me',
        'assistant:again',
      ]);
    });
  });

  it('the files of a reply come with it', () => {
    const files = [{ name: 'table.csv', mime: 'text/csv', size: 3, dataUrl: 'data:text/csv;base64,YSxi' }];
    const out = mergeHistory(
      [up('1', 'user', 'q')],
      [{ eventId: 'e1', text: 'q' }],
      [{ ...view('e1', 'final', 'a'), files }],
    );
    expect(out[1]).toMatchObject({ role: 'assistant', text: 'a', files });
  });
});
