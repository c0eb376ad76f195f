import { describe, expect, it } from 'vitest';
import { alertRunEnvironment, loadAlertRunConfig } from '#alert-run/config';
import { ConfigError } from '#core/errors';

const minimal = {
  NEWS_API_BASE_URL: 'https://news.example.com/v1',
  NEWS_API_KEY_SECRET_ID: 'news-alerts/api-key',
  RULES_TABLE_NAME: 'rules',
  AUDIENCES_TABLE_NAME: 'audiences',
  STATE_TABLE_NAME: 'state',
};

const failure = (env: Record<string, string>): Error => {
  try {
    loadAlertRunConfig(env);
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the configuration to be refused');
};

describe('alert function configuration', () => {
  it('applies the documented defaults', () => {
    const config = loadAlertRunConfig(minimal);
    expect(config.provider.baseUrl).toBe('https://news.example.com/v1');
    expect(config.provider.pageSize).toBe(100);
    expect(config.provider.timeZone).toBe('UTC');
    expect(config.run.lateArrivalMs).toBe(60 * 60_000);
    expect(config.run.leaseDurationMs).toBe(960_000);
    expect(config.secretCacheSeconds).toBe(300);
    expect(config.tables).toEqual({ rules: 'rules', audiences: 'audiences', state: 'state' });
    const documented = Object.fromEntries(alertRunEnvironment.map((variable) => [variable.name, variable.default]));
    expect(documented.NEWS_API_PAGE_SIZE).toBe(String(config.provider.pageSize));
    expect(documented.LATE_ARRIVAL_MINUTES).toBe(String(config.run.lateArrivalMs / 60_000));
  });

  it('refuses an internal provider base URL at cold start unless NEWS_API_ALLOW_INTERNAL_TARGET is true (target-address policy)', () => {
    for (const url of [
      'https://169.254.169.254/latest',
      'https://127.0.0.1:8443',
      'https://[::1]/v1',
      'https://2852039166/',
    ]) {
      const error = failure({ ...minimal, NEWS_API_BASE_URL: url });
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toContain('NEWS_API_BASE_URL');
      expect(error.message).toContain('NEWS_API_ALLOW_INTERNAL_TARGET');
    }
    const allowed = loadAlertRunConfig({
      ...minimal,
      NEWS_API_BASE_URL: 'https://127.0.0.1:8443',
      NEWS_API_ALLOW_INTERNAL_TARGET: 'true',
    });
    expect(allowed.provider.baseUrl).toBe('https://127.0.0.1:8443');
    expect(failure({ ...minimal, NEWS_API_ALLOW_INTERNAL_TARGET: 'yes' }).message).toContain(
      'NEWS_API_ALLOW_INTERNAL_TARGET',
    );
  });

  it('reads DEFAULT_LOCALE (en-US unset, canonical form) and refuses one without shipped messages at cold start', () => {
    expect(loadAlertRunConfig(minimal).run.defaultLocale).toBe('en-US');
    expect(loadAlertRunConfig({ ...minimal, DEFAULT_LOCALE: 'ko-kr' }).run.defaultLocale).toBe('ko-KR');
    expect(loadAlertRunConfig({ ...minimal, DEFAULT_LOCALE: 'ja-JP' }).run.defaultLocale).toBe('ja-JP');
    for (const value of ['fr-FR', 'ko_KR', 'x']) {
      const error = failure({ ...minimal, DEFAULT_LOCALE: value });
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toContain('DEFAULT_LOCALE: ');
      expect(error.message).toContain(`got ${JSON.stringify(value)}`);
      expect(error.message).toContain('(en, ko, ja)');
    }
  });

  it('refuses an http:// base URL, naming the variable and the fix', () => {
    const error = failure({ ...minimal, NEWS_API_BASE_URL: 'http://news.example.com' });
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain('NEWS_API_BASE_URL');
    expect(error.message).toContain('https://');
  });

  it('names every missing variable at once', () => {
    const error = failure({ NEWS_API_BASE_URL: 'https://news.example.com' });
    for (const name of ['NEWS_API_KEY_SECRET_ID', 'RULES_TABLE_NAME', 'AUDIENCES_TABLE_NAME', 'STATE_TABLE_NAME']) {
      expect(error.message).toContain(name);
    }
  });

  it('names a bad number and a bad mapping', () => {
    expect(failure({ ...minimal, NEWS_API_PAGE_SIZE: 'lots' }).message).toContain('NEWS_API_PAGE_SIZE');
    const mapping = failure({ ...minimal, NEWS_API_RESPONSE_MAPPING: '{articles: data}' });
    expect(mapping.message).toContain('NEWS_API_RESPONSE_MAPPING');
  });

  it('refuses margins in the wrong order and a ledger shorter than the re-read overlap', () => {
    expect(failure({ ...minimal, SOFT_MARGIN_SECONDS: '5', HARD_MARGIN_SECONDS: '10' }).message).toContain(
      'SOFT_MARGIN_SECONDS',
    );
    expect(failure({ ...minimal, LEDGER_RETENTION_DAYS: '2', LATE_ARRIVAL_MINUTES: '600' }).message).toContain(
      'LEDGER_RETENTION_DAYS',
    );
  });

  it('documents every variable it reads', () => {
    const names = new Set(alertRunEnvironment.map((variable) => variable.name));
    const config = loadAlertRunConfig({ ...minimal, NEWS_API_CA_PEM: '-----BEGIN CERTIFICATE-----' });
    expect(config.provider.caPem).toContain('BEGIN CERTIFICATE');
    for (const name of [...Object.keys(minimal), 'NEWS_API_CA_PEM', 'NEWS_API_RESPONSE_MAPPING', 'SNS_CONCURRENCY']) {
      expect(names.has(name)).toBe(true);
    }
  });
});
