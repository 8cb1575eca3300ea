import { createHmac } from 'node:crypto';

/** Slack's v0 request signature: `v0=` + hex HMAC-SHA256 of `v0:{timestamp}:{body}`. */
export function signSlackRequest(secret: string, timestampSec: number, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestampSec}:${body}`).digest('hex')}`;
}
