import { AGENT_TOOLS } from '../../src/emulator/agent-replies.js';

// The emulator's `[agent]` reply as the platform and playground tests ask for it in each agent
// protocol, and what every one of them expects the user to see of it. Imported as a namespace
// (`agent.ask(protocol)`).

/** The agent protocols the emulator speaks (`seed`: the seed's own named events). */
export const PROTOCOLS = ['responses', 'chat-completions', 'ai-sdk', 'ag-ui', 'anthropic', 'seed'] as const;

/** The message asking for it, paced so each step runs for a while (several edit intervals), the text in two pieces. */
export const ask = (protocol: string) =>
  `${protocol === 'seed' ? '' : `[protocol ${protocol}] `}[agent] [chunks 2] [delay 400]`;

/** Its two sources after the answer, as the bridge writes them in Markdown. */
export const SOURCES_MD =
  '\n\n**Sources**\n1. [Streaming replies](<https://example.com/docs/streaming>)\n2. [Weather in Paris](<https://example.org/weather/paris>)';

/** The protocols name a step by its tool; the seed's `status` events carry a title for people. */
export const stepTitles = (protocol: string) => AGENT_TOOLS.map((t) => (protocol === 'seed' ? t.title : t.name));

/** AI SDK's `file` part carries no name: the bridge names the CSV by its type. */
export const fileName = (protocol: string) => (protocol === 'ai-sdk' ? 'file.csv' : 'table.csv');
