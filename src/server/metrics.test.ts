import { describe, expect, it } from 'vitest';
import { bucketLabel } from './labels.js';
import { createMetrics } from './metrics.js';

describe('metrics', () => {
  it('keeps a private registry per instance, with the process metrics', async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.replyStarted('slack');
    expect(await a.text()).toContain('bridge_replies_started_total{platform="slack"} 1');
    expect(await b.text()).not.toContain('bridge_replies_started_total{platform="slack"}');
    expect(await b.text()).toContain('process_cpu_user_seconds_total');
  });

  it('records every BridgeMetrics call as its series', async () => {
    const m = createMetrics({ defaultMetrics: false });
    m.replyInterrupted('discord');
    m.platformFirstText('discord', 0.004);
    m.upstreamError('429', 'RATE_LIMITED');
    m.duplicateDelivery('slack');
    m.inFlight(2);
    const text = await m.text();
    expect(text).toContain('bridge_replies_interrupted_total{platform="discord"} 1');
    expect(text).toContain('bridge_platform_first_text_seconds_bucket{le="0.005",platform="discord"} 1');
    expect(text).toContain('bridge_platform_first_text_seconds_bucket{le="30",platform="discord"} 1');
    expect(text).toContain('bridge_upstream_errors_total{status="429",code="RATE_LIMITED"} 1');
    expect(text).toContain('bridge_dedup_hits_total{platform="slack"} 1');
    expect(text).toContain('bridge_replies_in_flight 2');
  });

  it('an outage of the store: messages held now, and deliveries refused by reason, from zero at start', async () => {
    const m = createMetrics({ defaultMetrics: false, platforms: ['discord'] });
    let text = await m.text();
    expect(text).toContain('bridge_held_events 0');
    expect(text).toContain('bridge_refused_deliveries_total{platform="discord",reason="hold_full"} 0');
    m.heldEvents(3);
    m.deliveryRefused('discord', 'hold_full');
    text = await m.text();
    expect(text).toContain('bridge_held_events 3');
    expect(text).toContain('bridge_refused_deliveries_total{platform="discord",reason="hold_full"} 1');
  });

  it('strips ids from rate-limit buckets', () => {
    expect(bucketLabel('discord:channel:123456789012345678')).toBe('discord:channel');
    expect(bucketLabel('slack:T01ABCDEF:chat.update')).toBe('slack:chat.update');
    expect(bucketLabel('slack:T1:C2:chat.postMessage')).toBe('slack:chat.postMessage');
    expect(bucketLabel('discord:global')).toBe('discord:global');
    expect(bucketLabel('')).toBe('unknown');
  });

  it('bounds the number of label values that come from outside', async () => {
    const m = createMetrics({ defaultMetrics: false });
    for (let i = 0; i < 500; i++) m.upstreamError('400', `CODE_${i}`);
    const lines = (await m.text()).split('\n').filter((l) => l.startsWith('bridge_upstream_errors_total{'));
    expect(lines.length).toBeLessThanOrEqual(51);
    expect(lines.some((l) => l.includes('code="other"'))).toBe(true);
  });

  it('shows the replica’s budget share, 1 from start-up', async () => {
    const m = createMetrics({ defaultMetrics: false });
    expect(await m.text()).toContain('bridge_budget_share 1');
    m.budgetShare(1 / 3);
    expect(await m.text()).toMatch(/bridge_budget_share 0\.333/);
  });

  it('counts the replies in post-once mode per platform', async () => {
    const m = createMetrics({ defaultMetrics: false, platforms: ['slack'] });
    m.postOnce('slack', 1);
    m.postOnce('slack', 1);
    m.postOnce('slack', -1);
    expect(await m.text()).toContain('bridge_replies_post_once{platform="slack"} 1');
  });

  it('the outcome and 429 series of each configured platform exist with value 0 from start-up', async () => {
    const text = await createMetrics({ defaultMetrics: false, platforms: ['slack', 'discord'] }).text();
    for (const platform of ['slack', 'discord']) {
      expect(text).toContain(`bridge_replies_started_total{platform="${platform}"} 0`);
      expect(text).toContain(`bridge_replies_finished_total{platform="${platform}"} 0`);
      expect(text).toContain(`bridge_replies_interrupted_total{platform="${platform}"} 0`);
      expect(text).toContain(`bridge_replies_failed_total{platform="${platform}",reason="internal"} 0`);
      expect(text).toContain(`bridge_replies_post_once{platform="${platform}"} 0`);
    }
    expect(text).toContain('bridge_platform_rate_limited_total{platform="slack",bucket="slack:update"} 0');
    expect(text).toContain('bridge_platform_rate_limited_total{platform="discord",bucket="discord:global"} 0');
    // nothing for a platform that is not configured
    const slackOnly = await createMetrics({ defaultMetrics: false, platforms: ['slack'] }).text();
    expect(slackOnly).not.toContain('platform="discord"');
  });
});
