import { performance } from 'node:perf_hooks';
import type { DecodeCounter } from '../src/upstream/event-rules.js';
import { createDecoder } from '../src/upstream/stream-reader.js';

// The upstream stream decoders alone, in process: a body built in memory, cut into chunks
// beforehand, then timed through push() and finish(). Work must grow with the bytes, whatever
// the chunking (issue 12: 20,000 small application/json chunks used to cost 16 s).

export type DecodeFormat = 'sse' | 'ndjson' | 'json' | 'json-pretty' | 'text';

export interface DecodeFigure {
  format: DecodeFormat;
  bytes: number;
  chunks: number;
  ms: number;
  msPerMb: number;
  /** JSON.parse calls and characters looked at, from the decoder's counter. */
  parses: number;
  scanned: number;
}

const CONTENT_TYPE: Record<DecodeFormat, string> = {
  sse: 'text/event-stream',
  ndjson: 'application/x-ndjson',
  json: 'application/json',
  'json-pretty': 'application/json',
  text: 'text/plain; charset=utf-8',
};

/** One unit of each format's body; `json-pretty` is one document whose lines close with `}`. */
function unit(format: DecodeFormat, i: number): string {
  const t = `wörd ${i % 100} `;
  switch (format) {
    case 'sse':
      return `data: ${JSON.stringify({ type: 'delta', delta: t })}\n\n`;
    case 'ndjson':
    case 'json':
      return `${JSON.stringify({ delta: t })}\n`;
    case 'json-pretty':
      return `  {"n": ${i}, "t": "${t}"},\n`;
    case 'text':
      return t;
  }
}

function body(format: DecodeFormat, totalBytes: number): Uint8Array {
  const parts: string[] = [];
  let size = 0;
  if (format === 'json-pretty') parts.push('{"data": {"items": [\n');
  for (let i = 0; size < totalBytes; i++) {
    const u = unit(format, i);
    parts.push(u);
    size += Buffer.byteLength(u);
  }
  if (format === 'json-pretty') parts.push('  {}\n], "response": "whole"}}\n');
  return new TextEncoder().encode(parts.join(''));
}

function cut(bytes: Uint8Array, chunkSize: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += chunkSize) out.push(bytes.subarray(at, at + chunkSize));
  return out;
}

function time(format: DecodeFormat, chunks: Uint8Array[]): DecodeFigure {
  const counter: DecodeCounter = { scanned: 0, parses: 0 };
  const decoder = createDecoder(CONTENT_TYPE[format], { counter });
  const bytes = chunks.reduce((n, c) => n + c.byteLength, 0);
  const t0 = performance.now();
  let events = 0;
  for (const c of chunks) events += decoder.push(c).length;
  events += decoder.finish().length;
  const ms = performance.now() - t0;
  if (events === 0) throw new Error(`decode bench: ${format} gave no events`);
  return {
    format,
    bytes,
    chunks: chunks.length,
    ms: round(ms),
    msPerMb: round(ms / (bytes / 2 ** 20)),
    parses: counter.parses,
    scanned: counter.scanned,
  };
}

/** Decode `totalBytes` of `format` in chunks of `chunkSize` bytes; the time and ms per MB. */
export function decodeBenchmark(format: DecodeFormat, totalBytes: number, chunkSize: number): DecodeFigure {
  return time(format, cut(body(format, totalBytes), chunkSize));
}

/**
 * `count` chunks of streamed application/json, each one line of a pretty-printed document that
 * closes with `}` (the shape that was re-parsed from the start at every chunk).
 */
export function jsonChunksBenchmark(count: number): DecodeFigure {
  const lines = ['{"data": {"items": [\n'];
  for (let i = 0; i < count - 2; i++) lines.push(`  {"n": ${i}}\n`);
  lines.push('  {}], "response": "whole"}}\n');
  const enc = new TextEncoder();
  return time(
    'json-pretty',
    lines.map((l) => enc.encode(l)),
  );
}

export interface DecodingResult {
  /** 4 MB of each format in 256-byte chunks, then in 16-byte chunks. */
  formats: DecodeFigure[];
  /** 20,000 application/json chunks. */
  json20k: DecodeFigure;
  json20kTargetMs: number;
}

export function runDecoding(): DecodingResult {
  const formats: DecodeFigure[] = [];
  const formatsList: DecodeFormat[] = ['sse', 'ndjson', 'json', 'json-pretty', 'text'];
  // One warm-up pass so the figures are not the JIT's.
  for (const f of formatsList) decodeBenchmark(f, 256 * 1024, 256);
  for (const chunk of [256, 16]) for (const f of formatsList) formats.push(decodeBenchmark(f, 4 * 2 ** 20, chunk));
  return { formats, json20k: jsonChunksBenchmark(20_000), json20kTargetMs: 200 };
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}
