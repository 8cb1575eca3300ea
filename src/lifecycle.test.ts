import { describe, expect, it } from 'vitest';
import { errTextWithCause, startHint } from './lifecycle.js';

describe('errTextWithCause', () => {
  it("names the host of a DNS failure that Slack's client wraps away (as @slack/web-api throws it)", () => {
    // The shape @slack/web-api 7 throws for auth.test when the host does not resolve:
    // WebAPIRequestError { original: TypeError('fetch failed', { cause: getaddrinfo error }) }.
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND slack.example'), {
      code: 'ENOTFOUND',
      syscall: 'getaddrinfo',
      hostname: 'slack.example',
    });
    const err = Object.assign(new Error('A request error occurred: fetch failed'), {
      code: 'slack_webapi_request_error',
      original: new TypeError('fetch failed', { cause: dns }),
    });
    const reason = errTextWithCause(err);
    expect(reason).toBe('A request error occurred: fetch failed (host name not found: slack.example, ENOTFOUND)');
    expect(startHint('slack', reason)).toMatch(/^the host name did not resolve: check DNS .*SLACK_API_URL/);
  });

  it('blames DNS, not the token or intents, when Discord does not resolve (issue 41)', () => {
    // The reason discord.js start-up gives for a host that does not resolve.
    const reason = 'discord: could not connect: discord request failed: getaddrinfo ENOTFOUND discord.com';
    expect(startHint('discord', reason)).toMatch(/^the host name did not resolve: check DNS .*DISCORD_API_URL/);
    expect(startHint('discord', 'discord: could not connect: 401: Unauthorized')).toMatch(/^check DISCORD_BOT_TOKEN/);
  });

  it('leaves an error without a network cause as it is', () => {
    expect(errTextWithCause(new Error('An API error occurred: invalid_auth'))).toBe(
      'An API error occurred: invalid_auth',
    );
    expect(errTextWithCause('plain')).toBe('plain');
  });
});
