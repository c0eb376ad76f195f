/**
 * The email functions' own check of PREFERENCES_URL: the stack checks emailPreferencesUrl at synth,
 * and the functions refuse at cold start what a hand-edited variable could still bring (a query or
 * fragment, after which `/p/<token>` would make every link of every email a broken one).
 */
import { describe, expect, it } from 'vitest';
import { loadEmailConfig } from '../../functions/email/config.ts';

const environment = {
  SUBSCRIBERS_TABLE_NAME: 'subscribers',
  AUDIENCES_TABLE_NAME: 'audiences',
  AUDIENCE_TOPIC_PREFIX: 'news-alerts',
  LINK_KEY_SECRET_ID: 'news-alerts/link-key',
};

describe('PREFERENCES_URL', () => {
  it('is taken without its trailing slashes', () => {
    const config = loadEmailConfig(
      { ...environment, PREFERENCES_URL: 'https://prefs.example.org/email//' },
      'preferences',
    );
    expect(config.preferencesUrl).toBe('https://prefs.example.org/email');
  });

  it.each(['https://prefs.example.org/x?a=1', 'https://prefs.example.org/x#top', 'https://prefs.example.org/?'])(
    'refuses %s: a query or fragment would swallow every link',
    (url) => {
      expect(() => loadEmailConfig({ ...environment, PREFERENCES_URL: url }, 'preferences')).toThrow(
        'PREFERENCES_URL: must not have a query or fragment',
      );
    },
  );
});
