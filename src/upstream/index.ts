import type { ChatService } from '../core/chat-port.js';
import { FormAService } from './form-a.js';
import { FormBService } from './form-b.js';
import { ChatCompletionsService } from './form-chat-completions.js';
import { ResponsesService } from './form-responses.js';
import type { UpstreamClientOptions } from './http.js';

// The upstream chat service behind the core's ChatService port, by config (CHAT_API_FORM): the
// seed's Form A or Form B, or OpenAI's Chat Completions or Responses.

export type { ChatForm, OpenAiOptions, UpstreamClientOptions } from './http.js';
export type { RetryOptions, Sleep } from './http.js';

export function createChatService(cfg: UpstreamClientOptions): ChatService {
  switch (cfg.form) {
    case 'b':
      return new FormBService(cfg);
    case 'chat-completions':
      return new ChatCompletionsService(cfg);
    case 'responses':
      return new ResponsesService(cfg);
    default:
      return new FormAService(cfg);
  }
}
