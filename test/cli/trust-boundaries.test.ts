/**
 * Issue 10, items 8-10, through the real `news-alerts` process against a sandbox: hostile item
 * fields and flags are printed escaped (never as terminal sequences), subscriber targets obey the
 * target-address policy (with an explicit override for a local receiver), and audience topics
 * must be in the deployment's account and region, while one broken audience never stops
 * commands about the others.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getItem } from '../../cli/items.ts';
import { type CliResult, type CliSandbox, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
/** Several CLI processes per test on a busy 2-core machine: a bound that only a hang reaches. */
const cliTest = { timeout: 180_000 };

/**
 * Anything a terminal could act on, or that hides or reorders text (newlines are line breaks, and
 * tabs the column separators of TSV tables: a tab inside a value is escaped as `\t`).
 */
const unsafe = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;
const printedSafely = (result: CliResult) =>
  !unsafe.test((result.stdout + result.stderr).replaceAll('\n', '').replaceAll('\t', ''));

const audiencesTable = () => sandbox.descriptor.names.audiencesTable;
const putAudience = (item: Record<string, unknown>) =>
  sandbox.stack.clients.documents.send(new PutCommand({ TableName: audiencesTable(), Item: item }));
const storedAudience = (id: string) =>
  getItem(
    sandbox.stack.clients.documents,
    { tableName: audiencesTable(), keyName: 'audienceId', noun: 'audience' },
    id,
  );
const topicOf = (audienceId: string): string => {
  const arn = sandbox.stack.topics.get(audienceId);
  if (!arn) throw new Error(`the sandbox has no topic for ${audienceId}`);
  return arn;
};

// A sandbox of its own for every test, so each starts from the example set in any order
// (--sequence.shuffle).
beforeEach(async () => {
  sandbox = await startCliSandbox();
});
afterEach(async () => {
  await sandbox?.stop();
});

describe('terminal injection (item 8)', () => {
  it(
    'prints hostile audience and rule fields, flags and ids escaped in tables, fields, JSON and errors',
    cliTest,
    async () => {
      const name = 'Desk\u001b[2J\u001b]0;pwned\u0007\u202egnp.exe';
      const notes = '\u001b]8;;https://evil.example/\u001b\\click here\u001b]8;;\u001b\\\u009b31m';
      await putAudience({ audienceId: 'hostile-desk', name, notes, topicArn: topicOf('markets-desk') });
      await sandbox.stack.putRules([
        {
          ruleId: 'hostile-rule',
          audienceId: 'hostile-desk',
          description: 'rates\u001b[31m red \u2066isolated\u2069\u200b',
          keywords: ['inflation'],
        },
      ]);

      const [list, show, showJson, rule, actor, unknownId] = await Promise.all([
        sandbox.cli(['audiences', 'list']),
        sandbox.cli(['audiences', 'show', 'hostile-desk']),
        sandbox.cli(['--json', 'audiences', 'show', 'hostile-desk']),
        sandbox.cli(['rules', 'show', 'hostile-rule']),
        sandbox.cli(['--actor', 'mallory\u001b]0;owned\u0007', 'audiences', 'update', 'hostile-desk', '--notes', 'x']),
        sandbox.cli(['audiences', 'show', 'no\u001b[2Jsuch']),
      ]);
      for (const result of [list, show, showJson, rule, actor, unknownId]) expect(printedSafely(result)).toBe(true);

      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toContain('Desk\\x1b[2J\\x1b]0;pwned\\x07\\u202egnp.exe');
      expect(show.code, show.stderr).toBe(0);
      expect(show.stdout).toContain('\\x1b]8;;https://evil.example/\\x1b\\click here');
      expect(show.stdout).toContain('\\x9b31m');
      expect(showJson.json()).toMatchObject({ name, notes });
      expect(rule.code, rule.stderr).toBe(0);
      expect(rule.stdout).toContain('rates\\x1b[31m red \\u2066isolated\\u2069\\u200b');
      // A name with escape sequences would be stored and shown by every later list: refused.
      expect(actor.code).toBe(2);
      expect(actor.stderr).toContain('--actor (or $NEWS_ALERTS_ACTOR) holds control or invisible characters');
      expect((await storedAudience('hostile-desk'))?.notes).toBe(notes);
      expect(unknownId.code).toBe(3);
      expect(unknownId.stderr).toContain('audience no\\x1b[2Jsuch does not exist');

      // A line break in a quoted value is printed as \n: it cannot make a line of its own that
      // reads like one of the CLI's.
      const forged = await sandbox.cli(['rules', 'show', 'x\nnews-alerts: rule x deleted OK']);
      expect(forged.code).toBe(3);
      expect(forged.stderr.split('\n').filter((line) => line.startsWith('news-alerts: rule x deleted'))).toEqual([]);
      expect(forged.stderr).toContain('x\\nnews-alerts: rule x deleted OK');
      // commander's own messages quote what it was given ('…'): the same there.
      // No quoting is trusted: a value may hold a quote of its own before its line break.
      const [command, quote, option] = await Promise.all([
        sandbox.cli(['x\nnews-alerts: rule x deleted OK']),
        sandbox.cli(["x'\nnews-alerts: rule x deleted OK"]),
        sandbox.cli(['rules', 'list', "--x'\nnews-alerts: rule x deleted OK"]),
      ]);
      for (const result of [command, quote, option]) {
        expect(result.code).toBe(2);
        expect(result.stderr.split('\n').filter((line) => line.startsWith('news-alerts: rule x deleted'))).toEqual([]);
      }
      expect(quote.stderr).toContain("x'\\nnews-alerts: rule x deleted OK");
      // commander's suggestion keeps its own line.
      const misspelt = await sandbox.cli(['rules', 'lst']);
      expect(misspelt.code).toBe(2);
      expect(misspelt.stderr.split('\n')).toContain('(Did you mean list?)');
    },
  );
});

describe('internal targets (item 9)', () => {
  it(
    'refuses metadata, loopback and credentialed webhook targets in any notation, and accepts a local receiver only with --allow-internal-target',
    cliTest,
    async () => {
      const add = (...args: string[]) => sandbox.cli(['subscriptions', 'add', 'markets-desk', ...args]);
      const slackUrl = 'https://hooks.slack.com/services/T0/B0/argv-s3cr3t';
      const [
        decimal,
        mapped,
        credentials,
        slack,
        localhost,
        allowed,
        slackOnArgv,
        urlAsAudience,
        slackEquals,
        keyEquals,
      ] = await Promise.all([
        add('--https', 'https://2852039166/latest/meta-data/'),
        add('--https', 'https://[::ffff:127.0.0.1]:8443/hook'),
        add('--https', 'https://ops:hunter2@hooks.example.com/in'),
        sandbox.cli(['subscriptions', 'add', 'quake-oncall', '--slack-webhook'], {
          input: 'https://0xa9fea9fe/services/T0/B0/s3cr3t\n',
        }),
        add('--https', 'https://localhost:8443/hook'),
        add('--https', `${sandbox.stack.receivers.webhook.url}/markets-desk`, '--allow-internal-target'),
        add('--slack-webhook', slackUrl),
        sandbox.cli(['subscriptions', 'add', '--slack-webhook', slackUrl]),
        sandbox.cli(['--json', 'subscriptions', 'add', 'markets-desk', `--slack-webhook=${slackUrl}`]),
        sandbox.cli(['--json', 'api-key', 'set', '--key=argv-s3cr3t-key']),
      ]);
      expect(decimal.code).toBe(2);
      expect(decimal.stderr).toContain('--https: the host 169.254.169.254 is a link-local address');
      expect(decimal.stderr).toContain('pass --allow-internal-target only for a local test receiver');
      expect(mapped.code).toBe(2);
      expect(mapped.stderr).toMatch(/the host \[::ffff:7f00:1\] is a loopback address, written as IPv6/);
      expect(credentials.code).toBe(2);
      expect(credentials.stderr).toContain('must not carry credentials');
      expect(credentials.stderr).not.toContain('hunter2');
      // Slack: refused, not merely warned about, and never echoed.
      expect(slack.code).toBe(2);
      expect(slack.stderr).toContain('the webhook URL the host 169.254.169.254 is a link-local address');
      expect(slack.stderr).toContain('it was not stored');
      expect(slack.stdout + slack.stderr).not.toContain('s3cr3t');
      expect(localhost.code).toBe(2);
      expect(localhost.stderr).toContain('the host localhost is a loopback host name');
      expect(allowed.code, allowed.stderr).toBe(0);
      // A URL on the command line is refused with where it must come from, and never echoed.
      expect(slackOnArgv.code).toBe(2);
      expect(slackOnArgv.stderr).toContain('read from stdin or a hidden prompt, never from the command line');
      expect(slackOnArgv.stdout + slackOnArgv.stderr).not.toContain('argv-s3cr3t');
      // Nor when it takes the audience's place, or comes as --option=value (commander quotes those).
      expect(urlAsAudience.code).toBe(2);
      expect(urlAsAudience.stderr).toContain('the audience id is a URL');
      for (const result of [urlAsAudience, slackEquals, keyEquals]) {
        expect(result.code).toBe(2);
        expect(result.stdout + result.stderr).not.toContain('argv-s3cr3t');
      }
      expect(slackEquals.json()).toMatchObject({ ok: false, error: { code: 'usage' } });
      // A webhook URL from stdin: bytes that are not UTF-8, or a character that is not ASCII, are
      // refused rather than stored as U+FFFD or percent-encoded into a URL that answers 404.
      const [latin1, accented] = await Promise.all([
        sandbox.cli(['subscriptions', 'add', 'markets-desk', '--slack-webhook'], {
          input: Buffer.from('https://hooks.slack.com/services/T0/B0/ab\xe9s3cr3t\n', 'latin1'),
        }),
        sandbox.cli(['subscriptions', 'add', 'markets-desk', '--slack-webhook'], {
          input: 'https://hooks.slack.com/services/T0/B0/ab\u00e9s3cr3t\n',
        }),
      ]);
      expect(latin1.code).toBe(2);
      expect(latin1.stderr).toContain('the input on stdin is not UTF-8 text');
      expect(accented.code).toBe(2);
      expect(accented.stderr).toContain('space, control or non-ASCII character (character 42)');
      for (const result of [latin1, accented]) expect(result.stdout + result.stderr).not.toContain('s3cr3t');
      expect(slackEquals.stderr).toContain("'--slack-webhook=…'");

      const listed = await sandbox.cli(['--json', 'subscriptions', 'list', 'markets-desk']);
      const endpoints = listed.json<{ endpoint: string }[]>().map((row) => row.endpoint);
      expect(endpoints).toContain(`${sandbox.stack.receivers.webhook.url}/…`);
      expect(endpoints.some((endpoint) => endpoint.includes('169.254') || endpoint.includes('localhost'))).toBe(false);
    },
  );
});

describe('foreign topics (item 10)', () => {
  it(
    'refuses a topic outside the stack’s account or region, or one that does not exist, with exit 2 and nothing written',
    cliTest,
    async () => {
      const before = await storedAudience('quake-oncall');
      const account = topicOf('quake-oncall').split(':')[4];
      const update = (arn: string) => sandbox.cli(['audiences', 'update', 'quake-oncall', '--topic-arn', arn]);
      const [foreignAccount, foreignRegion, missing] = await Promise.all([
        update('arn:aws:sns:us-east-1:999999999999:news-alerts-audience-quake-oncall'),
        update(`arn:aws:sns:eu-west-1:${account}:news-alerts-audience-quake-oncall`),
        update(`arn:aws:sns:us-east-1:${account}:${sandbox.prefix}audience-no-such-topic`),
      ]);
      expect(foreignAccount.code).toBe(2);
      expect(foreignAccount.stderr).toContain(`account 999999999999, not the stack's account ${account}`);
      expect(foreignAccount.stderr).toContain('nothing was written');
      expect(foreignRegion.code).toBe(2);
      expect(foreignRegion.stderr).toContain("region eu-west-1, not the stack's region us-east-1");
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('does not exist');
      expect(await storedAudience('quake-oncall')).toEqual(before);
    },
  );

  it(
    'one audience with a foreign topic (saved in the console) breaks only itself: the others are still listed and read',
    cliTest,
    async () => {
      const foreign = 'arn:aws:sns:us-east-1:999999999999:news-alerts-audience-chips-team';
      const chips = await storedAudience('chips-team');
      await putAudience({ ...chips, topicArn: foreign });

      const [pending, list, others, broken, show] = await Promise.all([
        sandbox.cli(['subscriptions', 'pending']),
        sandbox.cli(['--json', 'audiences', 'list']),
        sandbox.cli(['--json', 'subscriptions', 'list', 'markets-desk']),
        sandbox.cli(['subscriptions', 'list', 'chips-team']),
        sandbox.cli(['audiences', 'show', 'chips-team']),
      ]);
      // Partial: the readable audiences are reported, the broken one named with its reason, exit 1.
      expect(pending.code).toBe(1);
      expect(pending.stdout + pending.stderr).toContain(
        'no subscriptions of the readable audiences are waiting for confirmation',
      );
      expect(pending.stderr).toContain(`audience chips-team: its topic ${foreign} cannot be read`);
      expect(pending.stderr).toMatch(
        /1 of \d+ audience\(s\) could not be checked \(chips-team\); the others are listed/,
      );

      expect(list.code, list.stderr).toBe(0);
      const rows = list.json<{ audienceId: string; valid: boolean; problem?: string }[]>();
      expect(rows.find((row) => row.audienceId === 'chips-team')).toMatchObject({
        valid: false,
        problem: expect.stringContaining("account 999999999999, not the stack's account"),
      });
      expect(rows.find((row) => row.audienceId === 'markets-desk')).toMatchObject({ valid: true });

      expect(others.code, others.stderr).toBe(0);
      expect(others.json<unknown[]>().length).toBeGreaterThan(0);
      expect(broken.code).toBe(1);
      expect(broken.stderr).toContain(
        `point it at a topic of this stack with 'news-alerts --sandbox-file ${sandbox.descriptorPath} audiences update chips-team`,
      );
      expect(show.code, show.stderr).toBe(0);
      expect(show.stderr).toContain(`the topic ${foreign}`);
    },
  );
});
