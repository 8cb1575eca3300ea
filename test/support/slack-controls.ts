// The tests' own idea of what Slack would read as a mention or broadcast in a message's text,
// independent of src/connectors/slack/render.ts (which must never be the oracle for itself):
// a `<` right before `!`, `@` or `#` (`<!here>`, `<@U1>`, `<#C1>`, `<!subteam^S1>`), or
// `@channel` / `@here` / `@everyone` in any case, as a whole word.

export function slackWouldPing(text: string): boolean {
  return /<[!@#]/.test(text) || /@(channel|here|everyone)(?![\p{L}\p{N}_])/iu.test(text);
}
