/**
 * The target flags a suggested command carries (cli/hints.ts): the same sandbox or stack as the
 * command that suggests it, quoted for the shell.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { hint, newsAlerts, setHintTarget, targetSelector } from '../../cli/hints.ts';

afterEach(() => setHintTarget({}));

describe('targetSelector', () => {
  it('names the sandbox by --local or its descriptor, and a stack only by what differs from the defaults', () => {
    expect(targetSelector({ local: true, stack: 'NewsAlerts' })).toBe('--local ');
    expect(targetSelector({ local: true, sandboxFile: '/tmp/sb/sandbox.json' })).toBe(
      '--sandbox-file /tmp/sb/sandbox.json ',
    );
    expect(targetSelector({ sandboxFile: "/tmp/it's mine/sandbox.json" })).toBe(
      "--sandbox-file '/tmp/it'\\''s mine/sandbox.json' ",
    );
    expect(targetSelector({ stack: 'NewsAlerts' })).toBe('');
    expect(targetSelector({ stack: 'NewsAlertsStaging', region: 'ap-northeast-2', profile: 'ops' })).toBe(
      '--stack NewsAlertsStaging --region ap-northeast-2 --profile ops ',
    );
  });

  it('hints carry the target this process was given', () => {
    expect(hint('rules list')).toBe('news-alerts rules list');
    setHintTarget({ local: true, stack: 'NewsAlerts' });
    expect(hint('subscriptions add x')).toBe('news-alerts --local subscriptions add x');
    expect(`${newsAlerts()} run`).toBe('news-alerts --local run');
  });
});
