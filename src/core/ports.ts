// The interfaces the edges implement. The core (relay, pump, scheduler) depends only on these.
// Connectors (Slack, Discord, the test connector) provide messages and reply sinks; the store
// provides persistence; src/upstream provides the ChatService (see chat-port.ts). "Where" is one
// value, the Place (place.ts), from the connector's intake to the reply sink and the store keys.
// Each role has its own file; this index re-exports them all, so a file may import from here.

export * from './clock.js';
export * from './place.js';
export type { AgentFile, AgentStep, ContextMessage, ViewedItem } from './chat-port.js';
// A user's message and the handler it goes to.
export type * from './message-port.js';
// A place's earlier messages, read from the platform.
export type * from './history-port.js';
// Rate-limit buckets and the feed of what platforms say about them.
export * from './bucket-port.js';
// Where a reply is shown.
export type * from './sink-port.js';
// The errors a sink's write throws.
export * from './platform-errors.js';
// A platform's connection.
export type * from './connector-port.js';
// The store's ports (persistence).
export * from './store-ports.js';
// The scheduler's learned budgets across restarts.
export type * from './budget-port.js';
