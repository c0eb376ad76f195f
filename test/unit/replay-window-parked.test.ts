/**
 * What a window replay (`replay --from`) counts among the parked alerts of an audience whose topic
 * has no subscriber (cli/replay.ts): only the alerts it could send, that is alerts of articles, read
 * from the parked body's structured document; a body it cannot read counts, to be safe.
 */
import { describe, expect, it } from 'vitest';
import { renderNotification } from '#core/render';
import { spikeAlertMatch } from '#core/spikes/alert';
import { renderSpikeAlert } from '#core/spikes/render';
import { publishedAtOfParked, windowCanSend } from '../../cli/replay.ts';
import { PUBLISHED, testArticle, testAudience, testRules } from '../support/email-fixtures.ts';
import { ratesSpike } from '../support/spike-world.ts';

describe('parked alerts a window replay could send', () => {
  it('are alerts and update notices of articles: not digests, spike alerts, nor spike alerts’ update notices', () => {
    expect(windowCanSend('id:a1')).toBe(true);
    expect(windowCanSend('url:3f2a')).toBe(true);
    expect(windowCanSend('update:story:s1#status=UPDATED')).toBe(true);
    expect(windowCanSend('digest:2026-11-20T08:00')).toBe(false);
    expect(windowCanSend('spike:rates:e1')).toBe(false);
    expect(windowCanSend('update:spike:rates:e1#status=ESCALATED')).toBe(false);
  });

  it('are dated by their article, read from the parked body; a body that does not say gives no date', () => {
    const audience = testAudience();
    const article = testArticle({ key: 'id:p1', id: 'p1', publishedAt: PUBLISHED });
    const alert = renderNotification({ audienceId: audience.audienceId, article, rules: testRules }, audience);
    expect(publishedAtOfParked(alert.body)).toBe(PUBLISHED);
    const { rule, episode } = ratesSpike(audience.audienceId, PUBLISHED);
    const spike = renderSpikeAlert(
      spikeAlertMatch({ rule, audience, alert: episode, key: 'spike:rates:e1' }),
      audience,
    );
    expect(typeof publishedAtOfParked(spike.body)).toBe('number');
    for (const body of [
      '',
      'not json',
      '{"default":1}',
      '{"default":"{}"}',
      JSON.stringify({ default: '{"newsAlerts":{"article":{"publishedAt":12}}}' }),
    ]) {
      expect(publishedAtOfParked(body), body).toBeUndefined();
    }
  });
});
