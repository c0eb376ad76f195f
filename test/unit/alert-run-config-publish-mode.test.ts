/**
 * The alert function's publish mode (issue 14): PUBLISH_MODE, WORK_QUEUE_URL and
 * DISPATCH_ABANDON_AFTER_MS as the stack sets them, their defaults, and refusals that name the
 * variable. Absent PUBLISH_MODE is single mode, exactly as before sharded publishing existed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { alertRunEnvironment, defaultDispatchAbandonAfterMs, loadAlertRunConfig } from '#alert-run/config';
import { ConfigError } from '#core/errors';

const minimal = {
  NEWS_API_BASE_URL: 'https://news.example.com/v1',
  NEWS_API_KEY_SECRET_ID: 'news-alerts/api-key',
  RULES_TABLE_NAME: 'rules',
  AUDIENCES_TABLE_NAME: 'audiences',
  STATE_TABLE_NAME: 'state',
};

const queueUrl = 'https://sqs.us-east-1.amazonaws.com/123456789012/news-alerts-work';

const failure = (env: Record<string, string>): Error => {
  try {
    loadAlertRunConfig(env);
  } catch (error) {
    return error as Error;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
};

describe('publish mode of the alert function', () => {
  it('is single without PUBLISH_MODE: no queue, abandon after the documented 15 minutes', () => {
    const config = loadAlertRunConfig(minimal);
    expect(config.publishMode).toBe('single');
    expect(config.workQueueUrl).toBeUndefined();
    expect(config.run.dispatchAbandonAfterMs).toBe(15 * 60_000);
    expect(defaultDispatchAbandonAfterMs).toBe(15 * 60_000);
    const documented = Object.fromEntries(alertRunEnvironment.map((variable) => [variable.name, variable.default]));
    expect(documented.PUBLISH_MODE).toBe('single');
    expect(documented.DISPATCH_ABANDON_AFTER_MS).toBe(String(defaultDispatchAbandonAfterMs));
    expect(documented).toHaveProperty('WORK_QUEUE_URL');
  });

  it('reads sharded mode with its queue and abandon time as the stack sets them', () => {
    const config = loadAlertRunConfig({
      ...minimal,
      PUBLISH_MODE: 'sharded',
      WORK_QUEUE_URL: ` ${queueUrl} `,
      DISPATCH_ABANDON_AFTER_MS: '6780000',
    });
    expect(config.publishMode).toBe('sharded');
    expect(config.workQueueUrl).toBe(queueUrl);
    expect(config.run.dispatchAbandonAfterMs).toBe(6_780_000);
  });

  it('accepts the http:// queue URL of the local moto server', () => {
    const local = 'http://127.0.0.1:5000/123456789012/work';
    expect(loadAlertRunConfig({ ...minimal, PUBLISH_MODE: 'sharded', WORK_QUEUE_URL: local }).workQueueUrl).toBe(local);
  });

  it('ignores a queue URL left over in single mode rather than half-using it', () => {
    const config = loadAlertRunConfig({ ...minimal, PUBLISH_MODE: 'single', WORK_QUEUE_URL: queueUrl });
    expect(config.publishMode).toBe('single');
    expect(config.workQueueUrl).toBeUndefined();
  });

  it('refuses sharded mode without a queue URL, naming both variables', () => {
    for (const url of [undefined, '', '   ']) {
      const error = failure({
        ...minimal,
        PUBLISH_MODE: 'sharded',
        ...(url === undefined ? {} : { WORK_QUEUE_URL: url }),
      });
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toContain('WORK_QUEUE_URL is required');
      expect(error.message).toContain('PUBLISH_MODE');
    }
  });

  it('refuses a queue URL that is not one, without echoing it', () => {
    for (const url of ['news-alerts-work', 'ftp://sqs.example.com/1/work', 'arn:aws:sqs:us-east-1:123456789012:work']) {
      const error = failure({ ...minimal, PUBLISH_MODE: 'sharded', WORK_QUEUE_URL: url });
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toContain('WORK_QUEUE_URL must be an SQS queue URL');
      expect(error.message).not.toContain(url);
    }
  });

  it('refuses any other PUBLISH_MODE, naming the variable and the choices', () => {
    fc.assert(
      fc.property(
        fc.string().filter((value) => value !== 'single' && value !== 'sharded'),
        (mode) => {
          const error = failure({ ...minimal, PUBLISH_MODE: mode, WORK_QUEUE_URL: queueUrl });
          expect(error).toBeInstanceOf(ConfigError);
          expect(error.message).toContain('PUBLISH_MODE');
          expect(error.message).toContain('"single" or "sharded"');
        },
      ),
    );
  });

  it('refuses an abandon time under a minute or that is no whole number, naming the variable', () => {
    for (const value of ['59999', '0', '-1', 'soon', '90000.5']) {
      const error = failure({ ...minimal, DISPATCH_ABANDON_AFTER_MS: value });
      expect(error, value).toBeInstanceOf(ConfigError);
      expect(error.message).toContain('DISPATCH_ABANDON_AFTER_MS');
    }
  });
});
