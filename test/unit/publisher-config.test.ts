import { describe, expect, it } from 'vitest';
import { alertRunEnvironment } from '#alert-run/config';
import { ConfigError } from '#core/errors';
import { loadPublisherConfig, publisherEnvironment } from '../../functions/publisher/config.ts';

const failure = (env: Record<string, string>): Error => {
  try {
    loadPublisherConfig(env);
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the configuration to be refused');
};

describe('publisher function configuration', () => {
  it('applies the documented defaults, the same as the alert function for the settings both read', () => {
    const config = loadPublisherConfig({ STATE_TABLE_NAME: 'state' });
    expect(config).toEqual({
      stateTableName: 'state',
      ledgerRetentionDays: 14,
      snsConcurrency: 8,
      ledgerFlushDelayMs: 100,
      maxReceiveCount: 3,
    });
    const documented = Object.fromEntries(publisherEnvironment.map((variable) => [variable.name, variable]));
    expect(documented.WORK_MAX_RECEIVE_COUNT?.default).toBe(String(config.maxReceiveCount));
    expect(documented.SNS_CONCURRENCY?.default).toBe(String(config.snsConcurrency));
    expect(documented.LEDGER_RETENTION_DAYS?.default).toBe(String(config.ledgerRetentionDays));
    expect(documented.LEDGER_FLUSH_DELAY_MS?.default).toBe(String(config.ledgerFlushDelayMs));
    // Shared settings are documented once, in the alert function's list.
    for (const name of ['STATE_TABLE_NAME', 'LEDGER_RETENTION_DAYS', 'SNS_CONCURRENCY', 'LEDGER_FLUSH_DELAY_MS']) {
      expect(documented[name]).toEqual(alertRunEnvironment.find((variable) => variable.name === name));
    }
  });

  it('reads the values the stack sets', () => {
    expect(
      loadPublisherConfig({
        STATE_TABLE_NAME: ' state ',
        LEDGER_RETENTION_DAYS: '30',
        SNS_CONCURRENCY: '16',
        LEDGER_FLUSH_DELAY_MS: '0',
        WORK_MAX_RECEIVE_COUNT: '5',
      }),
    ).toEqual({
      stateTableName: 'state',
      ledgerRetentionDays: 30,
      snsConcurrency: 16,
      ledgerFlushDelayMs: 0,
      maxReceiveCount: 5,
    });
  });

  it('fails the cold start naming the variable that is missing or wrong', () => {
    const missing = failure({});
    expect(missing).toBeInstanceOf(ConfigError);
    expect(missing.message).toMatch(/^invalid publisher function configuration: STATE_TABLE_NAME/);
    for (const value of ['0', '1001', '2.5', 'three']) {
      const error = failure({ STATE_TABLE_NAME: 'state', WORK_MAX_RECEIVE_COUNT: value });
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toContain('WORK_MAX_RECEIVE_COUNT');
    }
    expect(failure({ STATE_TABLE_NAME: 'state', SNS_CONCURRENCY: '65' }).message).toContain('SNS_CONCURRENCY');
    expect(failure({ STATE_TABLE_NAME: '  ' }).message).toContain('STATE_TABLE_NAME');
  });
});
