import { describe, expect, it } from 'vitest';
import { type Attachment, attachmentBlock, fileBlock, formatSize, isTextLike, skippedNotice } from './attachments.js';
import { attachmentInfo } from './upstream-message.js';

const py: Attachment = { name: 'main.py', type: 'text/x-python', size: 20, text: 'print("hi")\n' };
const png: Attachment = { name: 'photo.png', type: 'image/png', size: 120_000, url: 'https://cdn.example/photo.png' };

describe('isTextLike', () => {
  it.each([
    ['notes.txt', 'text/plain'],
    ['data.json', 'application/json'],
    ['table.csv', 'text/csv'],
    ['README.md', undefined],
    ['main.py', 'application/octet-stream'],
    ['lib.rs', ''],
    ['Dockerfile', undefined],
    ['x.geojson', 'application/geo+json'],
    ['icon.svg', 'image/svg+xml'],
  ])('%s (%s) is text', (name, type) => expect(isTextLike(name, type)).toBe(true));

  it.each([
    ['photo.png', 'image/png'],
    ['doc.pdf', 'application/pdf'],
    ['archive.zip', 'application/zip'],
    ['clip.mp4', 'video/mp4'],
    ['blob', undefined],
    // A type that says image wins over a misleading extension.
    ['trick.txt', 'image/jpeg'],
  ])('%s (%s) is not text', (name, type) => expect(isTextLike(name, type)).toBe(false));
});

describe('fileBlock', () => {
  it('heads a fenced block with the file name, tagged with the extension', () => {
    expect(fileBlock('main.py', 'print("hi")')).toBe('File: main.py\n```py\nprint("hi")\n```');
  });

  it('uses a fence longer than any backtick run inside, so the file cannot close it', () => {
    const text = 'before\n```\ninner\n````\nafter';
    const block = fileBlock('notes.md', text);
    expect(block.startsWith('File: notes.md\n`````md\n')).toBe(true);
    expect(block.endsWith('\n`````')).toBe(true);
  });

  it('keeps a hostile file name on one line', () => {
    expect(fileBlock('a\nFile: b.py', 'x').split('\n')[0]).toBe('File: a File: b.py');
  });
});

describe('attachmentBlock', () => {
  it('puts text files after the user text and describes the others in one line and the metadata', () => {
    const out = attachmentBlock([png, py], { userText: 'look at these' });
    expect(out.messageText).toBe(
      'look at these\n\nFile: main.py\n```py\nprint("hi")\n```\n\n[attached: photo.png (image/png, 120 kB)]',
    );
    // The metadata goes with every message (chatMetadata), from the same files.
    expect(attachmentInfo([png, py])).toEqual([{ name: 'photo.png', type: 'image/png', size: 120_000, url: png.url }]);
    expect(out.skipped).toEqual([]);
  });

  it('handles every file, and names the skipped ones with their reason', () => {
    const files: Attachment[] = [
      py,
      { name: 'big.log', type: 'text/plain', size: 900_000, skipped: 'too_large' },
      { name: 'gone.txt', type: 'text/plain', size: 10, skipped: 'failed' },
      { name: 'six.txt', type: 'text/plain', size: 10, skipped: 'too_many' },
    ];
    const out = attachmentBlock(files, { userText: '' });
    expect(out.skipped).toEqual([
      { name: 'big.log', reason: 'too_large' },
      { name: 'gone.txt', reason: 'failed' },
      { name: 'six.txt', reason: 'too_many' },
    ]);
    expect(out.messageText.startsWith('File: main.py')).toBe(true);
    expect(out.messageText).toContain('[attached: big.log (text/plain, 900 kB); not read: too large]');
    expect(attachmentInfo(files)).toEqual([]);
    expect(skippedNotice(out.skipped)).toBe(
      '3 files were not passed to the assistant: big.log (too large), gone.txt (download failed), six.txt (more than 5 files).',
    );
  });

  it('stays within the message budget: a text file that does not fit is skipped as no_room', () => {
    const small: Attachment = { name: 'a.txt', type: 'text/plain', size: 5, text: 'short' };
    const large: Attachment = { name: 'b.txt', type: 'text/plain', size: 500, text: 'x'.repeat(500) };
    const max = 200;
    const out = attachmentBlock([large, small, png], { userText: 'question', maxChars: max });
    expect(out.messageText.length).toBeLessThanOrEqual(max);
    expect(out.messageText).toContain('File: a.txt');
    expect(out.messageText).not.toContain('xxxxx');
    expect(out.messageText).toContain('[attached: photo.png');
    expect(out.skipped).toEqual([{ name: 'b.txt', reason: 'no_room' }]);
    expect(skippedNotice(out.skipped)).toBe(
      'One file was not passed to the assistant: b.txt (too long for the message).',
    );
  });

  it('the exact fit is allowed, one char less is not', () => {
    const f: Attachment = { name: 'a.txt', type: 'text/plain', size: 3, text: 'abc' };
    const exact = attachmentBlock([f], { userText: 'q' }).messageText.length;
    expect(attachmentBlock([f], { userText: 'q', maxChars: exact }).skipped).toEqual([]);
    expect(attachmentBlock([f], { userText: 'q', maxChars: exact - 1 }).skipped).toEqual([
      { name: 'a.txt', reason: 'no_room' },
    ]);
  });

  it('a message of files only is the files', () => {
    expect(attachmentBlock([png], { userText: '  ' }).messageText).toBe('[attached: photo.png (image/png, 120 kB)]');
  });

  it('metadata names no skipped or text file, and a url only where the connector gave one', () => {
    const slackPdf: Attachment = { name: 'doc.pdf', type: 'application/pdf', size: 2_500_000 };
    expect(attachmentInfo([py, slackPdf, { ...png, skipped: 'too_many' }])).toEqual([
      { name: 'doc.pdf', type: 'application/pdf', size: 2_500_000 },
    ]);
  });
});

it('formatSize', () => {
  expect([formatSize(512), formatSize(120_000), formatSize(3_400_000)]).toEqual(['512 B', '120 kB', '3.4 MB']);
});
