import type { FakeGateway } from './gateway.js';
import { HttpError, contentTooLong, notFound } from './http-util.js';
import { channelJson, messageJson } from './payloads.js';
import type { FakeRateLimiter } from './rate-limit.js';
import { ChannelKind, type FakeDiscordState, type FakeMessage } from './state.js';
import { NonceMemory } from './nonce.js';
import { embedsOf } from './embeds.js';
import { uploadedOf } from './attachments.js';

// Message writes of the bot: channel messages, threads, interaction responses and follow-ups.
// Create and edit in one channel share a bucket (as observed on Discord); a webhook token has its own.

type Out = { status: number; body: unknown; headers?: Record<string, string> };

const MAX_CONTENT = 2000;

export class MessageWrites {
  /** `enforce_nonce` on creates (nonce.ts). */
  private readonly nonces = new NonceMemory();

  constructor(
    private readonly state: FakeDiscordState,
    private readonly limiter: FakeRateLimiter,
    private readonly gateway: FakeGateway,
  ) {}

  create(channelId: string | undefined, body: Record<string, unknown>): Out {
    const channel = channelId === undefined ? undefined : this.state.channels.get(channelId);
    if (!channel) throw notFound(10003, 'Unknown Channel');
    const headers = this.take(`msgs:${channel.id}`, 'channel-messages');
    const earlier = this.nonces.find(this.state.botUser.id, body);
    const again = earlier === undefined ? undefined : this.state.messages.get(earlier);
    if (again !== undefined) return { status: 200, body: messageJson(again, this.state), headers };
    const content = this.content(body);
    const embeds = embedsOf(body);
    const files = uploadedOf(body);
    const m: FakeMessage = {
      id: this.state.nextId(),
      channelId: channel.id,
      ...(channel.guildId === undefined ? {} : { guildId: channel.guildId }),
      authorId: this.state.botUser.id,
      content,
      allowedMentions: body.allowed_mentions,
      messageReference: body.message_reference,
      ...(Array.isArray(body.components) ? { components: body.components as unknown[] } : {}),
      ...(embeds !== undefined ? { embeds } : {}),
      ...(files !== undefined ? { files } : {}),
      createdAt: Date.now(),
      edits: 0,
    };
    this.state.messages.set(m.id, m);
    this.nonces.remember(this.state.botUser.id, body, m.id);
    const json = messageJson(m, this.state);
    this.echo(json);
    return { status: 200, body: json, headers };
  }

  edit(channelId: string | undefined, messageId: string | undefined, body: Record<string, unknown>): Out {
    const m = messageId === undefined ? undefined : this.state.messages.get(messageId);
    if (!m || m.channelId !== channelId) throw notFound(10008, 'Unknown Message');
    const headers = this.take(`msgs:${m.channelId}`, 'channel-messages');
    if (m.authorId !== this.state.botUser.id) {
      throw new HttpError(403, { code: 50005, message: 'Cannot edit a message authored by another user' });
    }
    this.applyEdit(m, body);
    return { status: 200, body: messageJson(m, this.state), headers };
  }

  remove(channelId: string | undefined, messageId: string | undefined): Out {
    const m = messageId === undefined ? undefined : this.state.messages.get(messageId);
    if (!m || m.channelId !== channelId) throw notFound(10008, 'Unknown Message');
    this.state.messages.delete(m.id);
    return { status: 204, body: null };
  }

  startThread(channelId: string | undefined, messageId: string | undefined, body: Record<string, unknown>): Out {
    const m = messageId === undefined ? undefined : this.state.messages.get(messageId);
    if (!m || m.channelId !== channelId) throw notFound(10008, 'Unknown Message');
    if (this.state.channels.has(m.id)) {
      throw new HttpError(400, { code: 160004, message: 'A thread has already been created for this message' });
    }
    const name = typeof body.name === 'string' ? body.name : '';
    if (name.length < 1 || name.length > 100) {
      throw new HttpError(400, { code: 50035, message: 'Invalid Form Body', errors: { name: {} } });
    }
    // A thread started from a message has the message's id.
    const thread = {
      id: m.id,
      type: ChannelKind.PublicThread,
      ...(m.guildId === undefined ? {} : { guildId: m.guildId }),
      name,
      parentId: m.channelId,
      ownerId: this.state.botUser.id,
    };
    this.state.channels.set(thread.id, thread);
    const json = channelJson(thread, this.state);
    this.safeDispatch('THREAD_CREATE', { ...json, newly_created: true });
    return { status: 201, body: json };
  }

  interactionCallback(id: string | undefined, token: string | undefined, body: Record<string, unknown>, url: URL): Out {
    const i = id === undefined ? undefined : this.state.interactions.get(id);
    if (!i || i.token !== token) throw notFound(10062, 'Unknown interaction');
    if (i.callbackType !== undefined) {
      throw new HttpError(400, { code: 40060, message: 'Interaction has already been acknowledged.' });
    }
    const type = Number(body.type);
    const data = (body.data as Record<string, unknown> | undefined) ?? {};
    i.callbackType = type;
    i.ephemeral = ((Number(data.flags) || 0) & 64) !== 0;
    if (typeof data.content === 'string') i.callbackContent = data.content;
    let msg: FakeMessage | undefined;
    if (type === 4 || type === 5) {
      // Type 4 shows the content now; type 5 ("thinking") makes an empty original to edit later.
      const content = type === 4 ? this.content(data) : '';
      msg = this.newInteractionMessage(i.id, i.channelId, i.guildId, content, data.allowed_mentions, i.ephemeral);
      i.originalMessageId = msg.id;
    }
    if (url.searchParams.get('with_response') === 'true') {
      return {
        status: 200,
        body: {
          interaction: {
            id: i.id,
            type: 2,
            activity_instance_id: null,
            response_message_id: msg?.id ?? null,
            response_message_loading: type === 5,
            response_message_ephemeral: i.ephemeral,
          },
          resource: { type, ...(msg ? { message: messageJson(msg, this.state) } : {}) },
        },
      };
    }
    return { status: 204, body: null };
  }

  followUp(token: string | undefined, body: Record<string, unknown>): Out {
    const i = token === undefined ? undefined : this.state.interactionByToken(token);
    if (!i || i.callbackType === undefined) throw notFound(10015, 'Unknown Webhook');
    const headers = this.take(`wh:${i.id}`, 'webhook');
    const content = this.content(body);
    const ephemeral = ((Number(body.flags) || 0) & 64) !== 0;
    const m = this.newInteractionMessage(i.id, i.channelId, i.guildId, content, body.allowed_mentions, ephemeral);
    if (Array.isArray(body.components)) m.components = body.components as unknown[];
    return { status: 200, body: messageJson(m, this.state), headers };
  }

  webhookEdit(token: string | undefined, which: string | undefined, body: Record<string, unknown>): Out {
    const m = this.webhookMessage(token, which);
    const headers = this.take(`wh:${m.interactionId}`, 'webhook');
    this.applyEdit(m, body);
    return { status: 200, body: messageJson(m, this.state), headers };
  }

  webhookDelete(token: string | undefined, which: string | undefined): Out {
    const m = this.webhookMessage(token, which);
    this.state.messages.delete(m.id);
    return { status: 204, body: null };
  }

  webhookGet(token: string | undefined, which: string | undefined): Out {
    return { status: 200, body: messageJson(this.webhookMessage(token, which), this.state) };
  }

  private webhookMessage(token: string | undefined, which: string | undefined): FakeMessage {
    const i = token === undefined ? undefined : this.state.interactionByToken(token);
    if (!i) throw notFound(10015, 'Unknown Webhook');
    const id = which === '@original' ? i.originalMessageId : which;
    const m = id === undefined ? undefined : this.state.messages.get(id);
    if (!m || m.interactionId !== i.id) throw notFound(10008, 'Unknown Message');
    return m;
  }

  private newInteractionMessage(
    interactionId: string,
    channelId: string,
    guildId: string | undefined,
    content: string,
    allowedMentions: unknown,
    ephemeral: boolean,
  ): FakeMessage {
    const m: FakeMessage = {
      id: this.state.nextId(),
      channelId,
      ...(guildId === undefined ? {} : { guildId }),
      authorId: this.state.botUser.id,
      content,
      allowedMentions,
      interactionId,
      ephemeral,
      createdAt: Date.now(),
      edits: 0,
    };
    this.state.messages.set(m.id, m);
    return m;
  }

  private applyEdit(m: FakeMessage, body: Record<string, unknown>): void {
    const embeds = embedsOf(body);
    if ('content' in body) m.content = this.content(body);
    if (Array.isArray(body.components)) m.components = body.components as unknown[];
    if (embeds !== undefined) m.embeds = embeds;
    const files = uploadedOf(body);
    if (files !== undefined) m.files = [...(m.files ?? []), ...files];
    m.allowedMentions = body.allowed_mentions;
    m.editedAt = Date.now();
    m.edits += 1;
  }

  private content(body: Record<string, unknown>): string {
    const c = typeof body.content === 'string' ? body.content : '';
    if (c.length > MAX_CONTENT) throw contentTooLong();
    // Discord trims content: whitespace alone is an empty message, refused on create and edit.
    if (c.trim().length === 0 && !Array.isArray(body.embeds)) {
      throw new HttpError(400, { code: 50006, message: 'Cannot send an empty message' });
    }
    return c;
  }

  private take(key: string, hash: string): Record<string, string> {
    const v = this.limiter.take(key, hash);
    if (!v.allowed) {
      this.state.rateLimitHits += 1;
      throw new HttpError(
        429,
        { message: 'You are being rate limited.', retry_after: v.retryAfter, global: false },
        v.headers,
      );
    }
    return v.headers;
  }

  /** Discord sends the bot its own messages too; the connector must ignore them. */
  private echo(json: Record<string, unknown>): void {
    this.safeDispatch('MESSAGE_CREATE', json);
  }

  private safeDispatch(t: string, d: Record<string, unknown>): void {
    if (this.gateway.hasSession) this.gateway.dispatch(t, d);
  }
}
