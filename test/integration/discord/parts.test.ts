import { expect, it } from 'vitest';
import { type PartWrite, writeSequenceProblems } from './parts.js';

// The write-sequence check is itself an oracle: it must flag what a reader would see as wrong,
// and pass what a correct writer does (a full part's cut moving back to a paragraph, the moved
// text opening the next part).

const post = (messageId: string, content: string): PartWrite => ({ method: 'POST', messageId, content, status: 200 });
const edit = (messageId: string, content: string): PartWrite => ({ method: 'PATCH', messageId, content, status: 200 });

it('passes growing edits and a cut that moves its tail into the next part', () => {
  expect(
    writeSequenceProblems([
      post('1', 'One.'),
      edit('1', 'One.\n\nTwo three'),
      edit('1', 'One.'),
      post('2', 'Two three four.'),
      edit('2', 'Two three four. Five.'),
    ]),
  ).toEqual([]);
});

it('flags text taken back that no later part shows, a repeated write and an edit of an earlier part', () => {
  expect(writeSequenceProblems([post('1', 'One two'), edit('1', 'One'), post('2', 'three')])).toEqual([
    'write 1 takes back text: "One two" is no longer shown',
  ]);
  expect(writeSequenceProblems([post('1', 'One'), edit('1', 'One')])).toEqual([
    'write 1 repeats the text already shown',
  ]);
  expect(writeSequenceProblems([post('1', 'One'), post('2', 'Two'), edit('1', 'One more')])).toEqual([
    'write 2 edits part 0 after a later part was posted',
  ]);
});
