import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatOf } from './stream-reader.js';
import { decodeAll, decodeSplit } from '../../test/support/upstream.js';

const SSE = 'text/event-stream; charset=utf-8';
const NDJSON = 'application/x-ndjson';
const text = (t: string) => ({ type: 'text', text: t });
const end = { type: 'end' };

describe('content types', () => {
  it('picks the reader by media type, parameters and case ignored', () => {
    expect(formatOf('text/event-stream')).toBe('sse');
    expect(formatOf('Text/Event-Stream; charset=UTF-8')).toBe('sse');
    expect(formatOf('application/x-ndjson')).toBe('ndjson');
    expect(formatOf('application/jsonl')).toBe('ndjson');
    expect(formatOf('application/json; charset=utf-8')).toBe('json');
    expect(formatOf('text/plain')).toBe('text');
    expect(formatOf(undefined)).toBe('text');
    expect(formatOf('application/octet-stream')).toBe('text');
  });
});

describe('SSE', () => {
  it('reads JSON deltas, ids at the start and in the closing event', () => {
    const body =
      'data: {"type":"start","conversationId":"c1"}\n\n' +
      'data: {"type":"delta","delta":"Hel"}\n\n' +
      'data: {"type":"delta","delta":"lo"}\n\n' +
      'data: {"type":"done","conversationId":"c1","messageId":"m9"}\n\n';
    expect(decodeAll(SSE, body)).toEqual([
      { type: 'ids', conversationId: 'c1' },
      text('Hello'),
      { type: 'ids', messageId: 'm9' },
      end,
    ]);
  });

  it('joins multi-line data with LF and skips comments, ids, retry and unknown fields', () => {
    const body = ': keep-alive\nid: 7\nretry: 100\nfoo: bar\ndata: line one\ndata:line two\ndata: \n\ndata: [DONE]\n\n';
    expect(decodeAll(SSE, body)).toEqual([text('line one\nline two\n'), end]);
  });

  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ])('accepts %s line ends', (_name, nl) => {
    const body = `data: a${nl}data: b${nl}${nl}event: delta${nl}data: {"text":"c"}${nl}${nl}: note${nl}data: [DONE]${nl}${nl}`;
    expect(decodeAll(SSE, body)).toEqual([text('a\nbc'), end]);
  });

  it('delivers a CR-terminated event at once, before the next byte arrives', async () => {
    const { SseDecoder } = await import('./stream-reader.js');
    const d = new SseDecoder();
    expect(d.push(new TextEncoder().encode('data: x\r\r'))).toEqual([text('x')]);
    expect(d.push(new TextEncoder().encode('\ndata: y\r\n\r\n'))).toEqual([text('y')]);
  });

  it.each(['done', 'end', 'complete', 'stop', 'DONE'])('an event named %s ends the stream', (name) => {
    expect(decodeAll(SSE, `data: a\n\nevent: ${name}\ndata: whatever\n\ndata: after\n\n`)).toEqual([text('a'), end]);
  });

  it.each([
    '{"done":true}',
    '{"type":"done"}',
    '{"type":"end"}',
    '{"type":"complete","response":"the whole reply again"}',
  ])('JSON %s ends the stream without adding text', (json) => {
    expect(decodeAll(SSE, `data: {"delta":"a"}\n\ndata: ${json}\n\ndata: {"delta":"b"}\n\n`)).toEqual([text('a'), end]);
  });

  it('an event named error is an error with its message', () => {
    expect(decodeAll(SSE, 'data: a\n\nevent: error\ndata: overloaded\n\ndata: b\n\n')).toEqual([
      text('a'),
      { type: 'error', message: 'overloaded' },
    ]);
    expect(decodeAll(SSE, 'event: error\ndata: {"message":"boom","code":"E1"}\n\n')).toEqual([
      { type: 'error', message: 'boom', code: 'E1' },
    ]);
  });

  it('JSON with an error field or type error is an error', () => {
    expect(decodeAll(SSE, 'data: {"error":"bad"}\n\n')).toEqual([{ type: 'error', message: 'bad' }]);
    expect(decodeAll(SSE, 'data: {"error":{"code":"BOT_ERROR","message":"bot failed"}}\n\n')).toEqual([
      { type: 'error', message: 'bot failed', code: 'BOT_ERROR' },
    ]);
    expect(decodeAll(SSE, 'data: {"type":"error","message":"nope"}\n\n')).toEqual([{ type: 'error', message: 'nope' }]);
    // A null error is no error.
    expect(decodeAll(SSE, 'data: {"error":null,"delta":"ok"}\n\n')).toEqual([text('ok'), end]);
  });

  it('takes the first string among the text keys, in the contract order', () => {
    const cases: [string, string][] = [
      ['{"delta":"1","content":"x","text":"x"}', '1'],
      ['{"content":"2","text":"x"}', '2'],
      ['{"text":"3","token":"x"}', '3'],
      ['{"token":"4","response":"x"}', '4'],
      ['{"response":"5","chunk":"x"}', '5'],
      ['{"chunk":"6"}', '6'],
      ['{"data":{"delta":"7"}}', '7'],
      ['{"data":{"chunk":"8"}}', '8'],
      ['{"choices":[{"delta":{"content":"9"}}]}', '9'],
      ['{"delta":{"text":"10"}}', '10'],
      ['{"delta":42,"content":"11"}', '11'],
      ['{"content":"12","data":{"delta":"x"}}', '12'],
    ];
    for (const [json, want] of cases) expect(decodeAll(SSE, `data: ${json}\n\n`), json).toEqual([text(want), end]);
  });

  it('an empty text yields nothing, and a JSON without text yields nothing', () => {
    expect(decodeAll(SSE, 'data: {"delta":"","content":"not this"}\n\ndata: {"type":"ping"}\n\n')).toEqual([end]);
  });

  it('non-JSON data is itself the text, including JSON that is not an object', () => {
    expect(decodeAll(SSE, 'data: 42\n\ndata: "q"\n\ndata: [1]\n\ndata: {broken\n\n')).toEqual([
      text('42"q"[1]{broken'),
      end,
    ]);
  });

  it('reads ids at top level or under data, in every spelling, and repeats no unchanged id', () => {
    const body =
      'data: {"conversation_id":"c1","delta":"a"}\n\n' +
      'data: {"conversation_id":"c1","delta":"b"}\n\n' +
      'data: {"data":{"sessionId":"s2","message_id":7}}\n\n' +
      'data: {"session_id":"s3"}\n\n' +
      'data: {"data":{"messageId":"m4"}}\n\n';
    expect(decodeAll(SSE, body)).toEqual([
      { type: 'ids', conversationId: 'c1' },
      text('ab'),
      { type: 'ids', conversationId: 's2', messageId: '7' },
      { type: 'ids', conversationId: 's3' },
      { type: 'ids', messageId: 'm4' },
      end,
    ]);
  });

  it('skips keep-alive events and keeps an event that the body ends without a blank line', () => {
    expect(decodeAll(SSE, 'event: ping\ndata: ping\n\ndata: last')).toEqual([text('last'), end]);
  });
});

describe('JSON lines', () => {
  it('reads NDJSON by the same rules', () => {
    const body =
      '{"delta":"a"}\n\n{"delta":"b"}\r\n{"done":true,"conversation_id":"c","message_id":"m"}\n{"delta":"late"}\n';
    expect(decodeAll(NDJSON, body)).toEqual([text('ab'), { type: 'ids', conversationId: 'c', messageId: 'm' }, end]);
  });

  it('application/jsonl, a last line without LF, an error line, a non-JSON line', () => {
    expect(decodeAll('application/jsonl', '{"text":"x"}\nplain\n{"token":"y"}')).toEqual([text('xplainy'), end]);
    expect(decodeAll(NDJSON, '{"delta":"a"}\n{"error":"bad","code":"X"}\n')).toEqual([
      text('a'),
      { type: 'error', message: 'bad', code: 'X' },
    ]);
  });

  it('streamed application/json: one object a line, or one pretty-printed object', () => {
    expect(decodeAll('application/json', '{"delta":"a"}\n{"delta":"b"}\n')).toEqual([text('ab'), end]);
    const pretty = JSON.stringify(
      { success: true, data: { response: 'whole {reply}\n}', conversationId: 'c7' } },
      null,
      2,
    );
    expect(decodeAll('application/json', pretty)).toEqual([
      { type: 'ids', conversationId: 'c7' },
      text('whole {reply}\n}'),
      end,
    ]);
    expect(decodeAll('application/json', 'not json\nat all')).toEqual([text('not json\nat all'), end]);
  });
});

describe('JSON behind a preamble', () => {
  const lines = '{"delta":"Hel"}\n{"delta":"lo"}\n{"done":true,"conversation_id":"c"}\n';
  it.each(['application/json', NDJSON, 'application/jsonl'])(
    '%s: a first line that is no JSON is dropped when JSON lines follow',
    (type) => {
      for (const preamble of [")]}'\n", ")]}',\r\n", 'Welcome to the chat service v2\n', "\n  )]}'\n\n"])
        expect(decodeAll(type, preamble + lines)).toEqual([text('Hello'), { type: 'ids', conversationId: 'c' }, end]);
    },
  );

  it('application/json: the object after the preamble may span lines', () => {
    const pretty = JSON.stringify({ data: { response: 'whole', conversationId: 'c9' } }, null, 2);
    expect(decodeAll('application/json', `)]}'\n${pretty}\n`)).toEqual([
      { type: 'ids', conversationId: 'c9' },
      text('whole'),
      end,
    ]);
  });

  it('a body that is text from the first line on stays text, preamble and all', () => {
    expect(decodeAll('application/json', 'Hello\n')).toEqual([text('Hello\n'), end]);
    expect(decodeAll('application/json', 'Hello\n\nthere {x}\n')).toEqual([text('Hello\n\nthere {x}\n'), end]);
    expect(decodeAll('application/json', 'Hello\n{"broken": \n}\nend')).toEqual([
      text('Hello\n{"broken": \n}\nend'),
      end,
    ]);
    expect(decodeAll(NDJSON, 'Hello\nthere\n')).toEqual([text('Hellothere'), end]);
    expect(decodeAll(NDJSON, 'only line')).toEqual([text('only line'), end]);
  });

  it('only the first line can be a preamble; a later non-JSON line is text as before', () => {
    expect(decodeAll('application/json', ')]}\'\n{"delta":"a"}\nplain\n')).toEqual([text('aplain\n'), end]);
    expect(decodeAll(NDJSON, 'x\ny\n{"delta":"a"}\n')).toEqual([text('xya'), end]);
  });

  it('a JSON array is no preamble', () => {
    expect(decodeAll(NDJSON, '[1]\n{"delta":"a"}\n')).toEqual([text('[1]a'), end]);
    expect(decodeAll('application/json', '[\n{"delta":"a"}\n]')).toEqual([text('[\n{"delta":"a"}\n]'), end]);
  });
});

describe('plain text', () => {
  it('the bytes are the text, UTF-8 decoded across chunks', () => {
    const bytes = new TextEncoder().encode('héllo 🌍 世界');
    for (let i = 1; i < bytes.length; i++)
      expect(decodeSplit('text/plain', bytes, [i])).toEqual([text('héllo 🌍 世界'), end]);
    expect(decodeAll(undefined, 'data: not SSE\n')).toEqual([text('data: not SSE\n'), end]);
    expect(decodeAll('text/plain', '')).toEqual([end]);
  });
});

// The same events for every chunking: each stream below, cut at every one and every two byte
// offsets, and at random sets of offsets.
const FIXTURES: [string, string | undefined, string][] = [
  [
    'sse-json LF',
    SSE,
    'data: {"type":"start","conversationId":"c-1"}\n\ndata: {"type":"delta","delta":"Grüße "}\n\ndata: {"delta":"🌍✨"}\n\n: c\n\ndata: {"type":"done","messageId":"m"}\n\n',
  ],
  ['sse-text CRLF', SSE, 'data: 世界\r\ndata: é\r\n\r\nevent: delta\r\ndata: 🙂\r\n\r\ndata: [DONE]\r\n\r\n'],
  ['sse CR only', SSE, 'data: a€\r\rdata: b\rdata: c\r\r: x\revent: done\rdata: {}\r\r'],
  ['sse mixed ends', SSE, 'data: 1\r\n\ndata: 2\n\r\ndata: 3\r\r\ndata: 4\n\n'],
  ['sse error', SSE, 'data: part🙂\n\nevent: error\ndata: {"error":"bad"}\n\ndata: never\n\n'],
  ['ndjson', NDJSON, '{"delta":"ä"}\r\n{"delta":"🌍"}\n\n{"done":true,"session_id":"s"}\n'],
  ['json pretty', 'application/json', '{\n  "data": {\n    "response": "ø}\\n",\n    "conversationId": "x"\n  }\n}\n'],
  ['plain', 'text/plain', 'a🌍b€c\r\nd\re'],
  ['json preamble', 'application/json', ')]}\'\r\n\n{"delta":"ä"}\r\n{\n "delta": "🌍"\n}\n'],
  ['ndjson preamble', NDJSON, 'banner v1\n{"delta":"é"}\n{"delta":"!"}\n'],
];

describe('every chunking gives the same events', () => {
  for (const [name, type, body] of FIXTURES) {
    it(name, () => {
      const bytes = new TextEncoder().encode(body);
      const whole = decodeSplit(type, bytes, []);
      expect(whole.length).toBeGreaterThan(0);
      expect(
        decodeSplit(
          type,
          bytes,
          Array.from({ length: bytes.length - 1 }, (_, i) => i + 1),
        ),
      ).toEqual(whole);
      for (let i = 1; i < bytes.length; i++) {
        expect(decodeSplit(type, bytes, [i])).toEqual(whole);
        for (let j = i + 1; j < bytes.length; j++) expect(decodeSplit(type, bytes, [i, j])).toEqual(whole);
      }
      fc.assert(
        fc.property(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }), (cuts) => {
          expect(
            decodeSplit(
              type,
              bytes,
              [...cuts].sort((a, b) => a - b),
            ),
          ).toEqual(whole);
        }),
        { numRuns: 300, seed: 4242 },
      );
    });
  }

  it('the expected events of the split fixtures', () => {
    const get = (n: string) => {
      const f = FIXTURES.find(([name]) => name === n);
      if (!f) throw new Error(n);
      return decodeAll(f[1], f[2]);
    };
    expect(get('sse-json LF')).toEqual([
      { type: 'ids', conversationId: 'c-1' },
      text('Grüße 🌍✨'),
      { type: 'ids', messageId: 'm' },
      end,
    ]);
    expect(get('sse-text CRLF')).toEqual([text('世界\né🙂'), end]);
    expect(get('sse CR only')).toEqual([text('a€b\nc'), end]);
    expect(get('sse mixed ends')).toEqual([text('1234'), end]);
    expect(get('sse error')).toEqual([text('part🙂'), { type: 'error', message: 'bad' }]);
    expect(get('ndjson')).toEqual([text('ä🌍'), { type: 'ids', conversationId: 's' }, end]);
    expect(get('json pretty')).toEqual([{ type: 'ids', conversationId: 'x' }, text('ø}\n'), end]);
    expect(get('plain')).toEqual([text('a🌍b€c\r\nd\re'), end]);
    expect(get('json preamble')).toEqual([text('ä🌍'), end]);
    expect(get('ndjson preamble')).toEqual([text('é!'), end]);
  });
});
