// Injected faults: a queue of rules, each good for `times` matching requests.
import type { ApiForm, ChatEndpoint, Fault } from './types.js';

interface Armed {
  fault: Fault;
  left: number;
}

export class FaultQueue {
  private armed: Armed[] = [];

  add(fault: Fault): void {
    const times = fault.times ?? 1;
    if (!Number.isInteger(times) || times < 1) throw new Error('fault.times must be a positive integer');
    if (fault.status !== undefined && (!Number.isInteger(fault.status) || fault.status < 100 || fault.status > 599)) {
      throw new Error('fault.status must be an HTTP status');
    }
    if (
      fault.status === undefined &&
      fault.cut === undefined &&
      fault.stall === undefined &&
      fault.error === undefined
    ) {
      throw new Error('a fault needs status, cut, stall or error');
    }
    this.armed.push({ fault: { ...fault }, left: times });
  }

  /** The first armed fault matching this request, consumed once; undefined when none. */
  take(form: ApiForm, endpoint: ChatEndpoint, botId: string | undefined): Fault | undefined {
    const i = this.armed.findIndex(({ fault }) => matches(fault, form, endpoint, botId));
    const hit = this.armed[i];
    if (!hit) return undefined;
    hit.left -= 1;
    if (hit.left <= 0) this.armed.splice(i, 1);
    return hit.fault;
  }

  clear(): void {
    this.armed = [];
  }

  get size(): number {
    return this.armed.length;
  }
}

function matches(f: Fault, form: ApiForm, endpoint: ChatEndpoint, botId: string | undefined): boolean {
  const ep = f.endpoint ?? 'any';
  if (ep === 'any' ? endpoint !== 'send' && endpoint !== 'stream' : ep !== endpoint) return false;
  if (f.form !== undefined && f.form !== form) return false;
  if (f.botId !== undefined && f.botId !== botId) return false;
  return true;
}

const B_CODES: Record<number, string> = {
  400: 'INVALID_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  410: 'SESSION_EXPIRED',
  413: 'PAYLOAD_TOO_LARGE',
  429: 'RATE_LIMITED',
  500: 'BOT_ERROR',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
};

/** The Form B code for a status when none is given. */
export function codeForStatus(status: number): string {
  return B_CODES[status] ?? (status >= 500 ? 'BOT_ERROR' : 'INVALID_REQUEST');
}

const MESSAGES: Record<number, string> = {
  401: 'Invalid or missing API key',
  429: 'Rate limit exceeded, retry later',
  500: 'Internal bot error',
  503: 'Service unavailable',
};

export function messageForStatus(status: number): string {
  return MESSAGES[status] ?? `Emulated error ${status}`;
}
