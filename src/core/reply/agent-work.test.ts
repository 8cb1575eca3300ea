import { describe, expect, it } from 'vitest';
import { AgentWork, agentAppendix, cleanTitle, MAX_SOURCES, MAX_STEPS, safeUrl } from './agent-work.js';

// What one reply keeps of an agent's work: bounded, deduplicated, never a link a user should not
// follow, and the list after the answer in the one Markdown form every sink renders.

const on = { steps: true, sources: true };

describe('AgentWork', () => {
  it('a step updates by id, keeps its title when an update has none, and notifies only on change', () => {
    const w = new AgentWork(on);
    let changes = 0;
    w.onSteps(() => changes++);
    w.step({ id: 'a', title: 'Searching the web', state: 'running' });
    w.step({ id: 'a', title: 'Searching the web', state: 'running' });
    w.step({ id: 'a', title: '', state: 'done' });
    expect(w.steps).toEqual([{ id: 'a', title: 'Searching the web', state: 'done' }]);
    expect(changes).toBe(2);
    expect(w.running()).toBeUndefined();
  });

  it('keeps at most MAX_STEPS, forgetting finished ones first', () => {
    const w = new AgentWork(on);
    for (let i = 0; i < MAX_STEPS + 5; i++)
      w.step({ id: `s${i}`, title: `tool ${i}`, state: i === 0 ? 'running' : 'done' });
    expect(w.steps).toHaveLength(MAX_STEPS);
    expect(w.steps[0]?.id).toBe('s0'); // the running one stays
    expect(w.steps.at(-1)?.id).toBe(`s${MAX_STEPS + 4}`);
  });

  it('sources: http(s) only, each once, at most MAX_SOURCES; off keeps none', () => {
    const w = new AgentWork(on);
    w.source({ url: 'javascript:alert(1)' });
    w.source({ url: 'ftp://example.com/x' });
    w.source({ url: 'https://example.com/a', title: 'A [b] <c>' });
    w.source({ url: 'https://example.com/a', title: 'again' });
    for (let i = 0; i < MAX_SOURCES + 3; i++) w.source({ url: `https://example.com/${i}` });
    expect(w.sources).toHaveLength(MAX_SOURCES);
    expect(w.sources[0]).toEqual({ url: 'https://example.com/a', title: 'A b c' });
    const off = new AgentWork({ steps: false, sources: false });
    off.source({ url: 'https://example.com/a' });
    off.step({ id: 'a', title: 't', state: 'running' });
    expect([off.sources, off.steps]).toEqual([[], []]);
  });

  it('the appendix: a numbered list of links in angle brackets, then the files the sink does not show', () => {
    const w = new AgentWork(on);
    w.source({ url: 'https://example.com/a', title: 'Example' });
    w.source({ url: 'https://docs.example.org/p?q=1' });
    w.file({ name: 'chart.png', mime: 'image/png', url: 'https://cdn.example.com/c.png' });
    w.file({ name: 'x.bin', size: 2048, data: new Uint8Array(2048) });
    expect(agentAppendix(w, (f) => f.mime === 'image/png')).toBe(
      '\n\n**Sources**\n1. [Example](<https://example.com/a>)\n2. [docs.example.org](<https://docs.example.org/p?q=1>)' +
        '\n\n📎 x.bin (2 KB) (not attached)',
    );
  });

  it('titles are one line without link brackets; URLs that would end a link early are refused', () => {
    expect(cleanTitle('a\nb\t[c](d) `e`')).toBe('a b c(d) e');
    expect(cleanTitle('x'.repeat(200))).toHaveLength(80);
    expect(safeUrl('https://example.com/a b')).toBe('https://example.com/a%20b');
    expect(safeUrl('http://example.com/', true)).toBeUndefined();
    expect(safeUrl('not a url')).toBeUndefined();
  });
});
