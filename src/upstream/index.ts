import type { ChatService } from '../core/chat-port.js';
import { FormAService } from './form-a.js';
import { FormBService } from './form-b.js';
import type { UpstreamClientOptions } from './http.js';

// The upstream chat service behind the core's ChatService port, Form A or Form B by config.

export type { ChatForm, UpstreamClientOptions } from './http.js';
export type { RetryOptions, Sleep } from './http.js';

export function createChatService(cfg: UpstreamClientOptions): ChatService {
  return cfg.form === 'b' ? new FormBService(cfg) : new FormAService(cfg);
}
