// What a person reads in a Discord message beyond its content: the text of its embeds (author,
// title, description, fields, footer) and of its components (button and menu labels, select
// options, text displays of components v2, nested in rows, sections and containers). A forward
// whose snapshot holds only an embed or components is read through these, not dropped.

interface EmbedJson {
  author?: { name?: string };
  title?: string;
  description?: string;
  fields?: { name?: string; value?: string }[];
  footer?: { text?: string };
}

/** Lines of the embeds' visible text, each embed a block. */
export function embedText(embeds: readonly { toJSON(): unknown }[]): string[] {
  return embeds
    .map((e) => {
      const j = e.toJSON() as EmbedJson;
      const lines = [
        j.author?.name,
        j.title,
        j.description,
        ...(j.fields ?? []).map((f) => [f.name, f.value].filter(Boolean).join(': ')),
        j.footer?.text,
      ];
      return lines.filter((l): l is string => typeof l === 'string' && l.trim() !== '').join('\n');
    })
    .filter((block) => block !== '');
}

/** Nesting depth read at most: Discord's own layouts go three or four deep. */
const MAX_DEPTH = 6;
/** Texts kept at most: a message holds a few dozen components. */
const MAX_TEXTS = 100;

/** Lines of the components' visible text, in order. */
export function componentText(components: readonly { toJSON(): unknown }[]): string[] {
  const out: string[] = [];
  const walk = (node: unknown, depth: number): void => {
    if (depth > MAX_DEPTH || out.length >= MAX_TEXTS || typeof node !== 'object' || node === null) return;
    const c = node as Record<string, unknown>;
    for (const key of ['content', 'label', 'placeholder'] as const) {
      const v = c[key];
      if (typeof v === 'string' && v.trim() !== '') out.push(v);
    }
    if (Array.isArray(c.options)) for (const o of c.options) walk(o, depth + 1);
    if (Array.isArray(c.components)) for (const child of c.components) walk(child, depth + 1);
    if (c.accessory !== undefined) walk(c.accessory, depth + 1);
  };
  for (const c of components) walk(c.toJSON(), 0);
  return out.slice(0, MAX_TEXTS);
}
