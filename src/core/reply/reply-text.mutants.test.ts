import { describe, expect, it } from 'vitest';
import { hasText, MessageLedger, ReplyText } from './reply-text.js';

// The reply's text as composed (prefix, upstream text, closing note) and where each message starts
// in it (mutation testing). Expected texts are written out by hand.

describe('hasText', () => {
  it('is true for any non-whitespace character, false for empty or whitespace only', () => {
    expect(hasText('')).toBe(false);
    expect(hasText(' \n\t ')).toBe(false);
    expect(hasText('  x ')).toBe(true);
    expect(hasText('x')).toBe(true);
  });
});

describe('ReplyText', () => {
  it('shows nothing until the upstream sends text, then the prefix before all of it', () => {
    let asked = 0;
    const r = new ReplyText(() => {
      asked++;
      return 'P: ';
    });
    expect(r.append('')).toBe(false);
    expect(r.append('  ')).toBe(true);
    expect(r.content()).toBe('');
    expect(asked).toBe(0);
    expect(r.append('hi')).toBe(true);
    expect(r.content()).toBe('P:   hi');
    expect(r.append(' there')).toBe(true);
    expect(r.content()).toBe('P:   hi there');
    expect(asked).toBe(1);
  });

  it('without a prefix function the text is shown as sent', () => {
    const r = new ReplyText();
    r.append('hello');
    expect(r.content()).toBe('hello');
  });

  it('appends the note after the text, closing an open code block first, and says where it starts', () => {
    const r = new ReplyText(() => 'P: ');
    r.append('x\n```ts\ncode');
    expect(r.ended).toBe(false);
    r.end({ note: '\n_(interrupted)_' });
    expect(r.ended).toBe(true);
    expect(r.content()).toBe('P: x\n```ts\ncode\n```\n_(interrupted)_');
    expect(r.noteAt).toBe(19);
  });

  it('without a note the text stays as it is and there is no note position', () => {
    const r = new ReplyText();
    r.append('done');
    r.end({});
    expect(r.content()).toBe('done');
    expect(r.noteAt).toBeUndefined();
  });

  it('ignores text and a second end after the reply ended', () => {
    const r = new ReplyText();
    r.append('a');
    r.end({ note: ' (n1)' });
    expect(r.append('b')).toBe(false);
    r.end({ note: ' (n2)' });
    expect(r.content()).toBe('a (n1)');
    expect(r.noteAt).toBe(1);
  });

  it('a reply without text shows the replacement, else the note without its leading whitespace', () => {
    const replaced = new ReplyText(() => 'P: ');
    replaced.append('   ');
    replaced.end({ replacement: 'Sorry, something went wrong.', note: '\n_note_' });
    expect(replaced.content()).toBe('Sorry, something went wrong.');
    expect(replaced.noteAt).toBeUndefined();

    const noted = new ReplyText();
    noted.end({ note: '\n\n_(interrupted)_' });
    expect(noted.content()).toBe('_(interrupted)_');
    expect(noted.append('late')).toBe(false);
  });

  it('a reply without text and only whitespace to show shows nothing', () => {
    const blank = new ReplyText();
    blank.end({ replacement: '  ' });
    expect(blank.content()).toBe('');
    const none = new ReplyText();
    none.end({});
    expect(none.content()).toBe('');
  });
});

describe('MessageLedger', () => {
  it('tracks where each message starts, with the reopened fence line before it', () => {
    const l = new MessageLedger();
    const content = 'abc\n```ts\none\ntwo';
    expect(l.carryLength).toBe(0);
    expect(l.desired(content)).toBe(content);
    expect(l.toDesired(5)).toBe(5);
    // The first message took "abc\n```ts\none\n" (14), the next reopens the fence.
    l.advance(14, '```ts\n');
    expect(l.carryLength).toBe(6);
    expect(l.desired(content)).toBe('```ts\ntwo');
    expect(l.toDesired(15)).toBe(7);
    // The second took its reopened line and "tw" (8 of desired): 2 more chars of content.
    l.advance(8, '');
    expect(l.carryLength).toBe(0);
    expect(l.desired(content)).toBe('o');
    expect(l.toDesired(16)).toBe(0);
  });

  it('records each message posted and written, and starts the next one fresh', () => {
    const l = new MessageLedger();
    expect(l.msg).toEqual({ id: undefined, sent: '', final: false, lastWriteAt: 0, createdAt: 0, steps: 0 });
    l.posted('m1', 100);
    l.wrote('hello', false, 150);
    expect(l.msg).toEqual({ id: 'm1', sent: 'hello', final: false, lastWriteAt: 150, createdAt: 100, steps: 0 });
    l.wrote('hello!', true, 200);
    expect(l.msg).toEqual({ id: 'm1', sent: 'hello!', final: true, lastWriteAt: 200, createdAt: 100, steps: 0 });
    expect(l.part).toBe(0);
    l.nextMessage();
    expect(l.part).toBe(1);
    expect(l.msg).toEqual({ id: undefined, sent: '', final: false, lastWriteAt: 0, createdAt: 0, steps: 0 });
    l.posted('m2', 300);
    expect(l.ids).toEqual(['m1', 'm2']);
  });
});
