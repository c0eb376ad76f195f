/**
 * Issue 10, items 4 and 11, end to end with the real CLI process: items written by hand into
 * DynamoDB are listed and shown as INVALID with their reason (the commands used to crash), and
 * files that break a limit are refused with exit 2 naming file, item, field and fix (they used
 * to end in a raw ValidationException or a ReferenceError, exit 1). Few processes on purpose:
 * each one costs seconds on a busy machine.
 */
import { type AttributeValue, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CliSandbox, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
// A sandbox of its own for every test, so each starts from the example set in any order
// (--sequence.shuffle).
beforeEach(async () => {
  sandbox = await startCliSandbox();
});
afterEach(async () => {
  await sandbox?.stop();
});

/** JSON.parse keeps `__proto__` an own key, as `aws dynamodb put-item --item file://…` sends it. */
const raw = (json: string): Record<string, AttributeValue> => JSON.parse(json) as Record<string, AttributeValue>;

// Generous: several CLI processes in a row on a loaded 2-core machine.
const slow = 180_000;

describe('items written by hand into DynamoDB', () => {
  it(
    'rules list/show and audiences list/show print an item with a __proto__ attribute as INVALID with the reason',
    async () => {
      const { dynamo } = sandbox.stack.clients;
      await dynamo.send(
        new PutItemCommand({
          TableName: sandbox.descriptor.names.rulesTable,
          Item: raw(
            '{"ruleId":{"S":"proto-rule"},"audienceId":{"S":"chips-team"},"keywords":{"SS":["wafer"]},"__proto__":{"S":"x"},"enabled":{"M":{"toString":{"S":"boom"}}}}',
          ),
        }),
      );
      await dynamo.send(
        new PutItemCommand({
          TableName: sandbox.descriptor.names.audiencesTable,
          Item: raw(
            '{"audienceId":{"S":"proto-audience"},"topicArn":{"S":"arn:aws:sns:us-east-1:123456789012:x"},"__proto__":{"M":{"polluted":{"BOOL":true}}},"enabled":{"M":{"start":{"S":"x"}}}}',
          ),
        }),
      );

      const [rulesList, ruleShow, audiencesList, audienceShow] = await Promise.all([
        sandbox.cli(['--json', 'rules', 'list']),
        sandbox.cli(['rules', 'show', 'proto-rule']),
        sandbox.cli(['--json', 'audiences', 'list']),
        sandbox.cli(['audiences', 'show', 'proto-audience']),
      ]);

      expect(rulesList.code, rulesList.stderr).toBe(0);
      const row = rulesList
        .json<{ ruleId: string; valid: boolean; problem: string }[]>()
        .find((entry) => entry.ruleId === 'proto-rule');
      expect(row).toMatchObject({ valid: false, problem: expect.stringMatching(/__proto__: a name no rule/) });
      expect(row?.problem).toContain('enabled.toString: a name no rule');
      // Every other rule is still judged as before.
      expect(
        rulesList.json<{ ruleId: string; valid: boolean }[]>().filter((entry) => entry.valid).length,
      ).toBeGreaterThan(0);

      expect(ruleShow.code, ruleShow.stderr).toBe(0);
      expect(ruleShow.stdout).toMatch(/INVALID: __proto__: a name no rule or audience attribute has/);

      expect(audiencesList.code, audiencesList.stderr).toBe(0);
      const audiences = audiencesList.json<{ audienceId: string; valid: boolean; problem?: string }[]>();
      expect(audiences.find((entry) => entry.audienceId === 'proto-audience')).toMatchObject({
        valid: false,
        problem: expect.stringMatching(/^__proto__: a name no rule or audience attribute has/),
      });
      expect(audiences.find((entry) => entry.audienceId === 'chips-team')).toMatchObject({ valid: true });

      expect(audienceShow.code, audienceShow.stderr).toBe(0);
      expect(audienceShow.stdout).toMatch(/INVALID: __proto__: a name no rule/);
    },
    slow,
  );
});

describe('files that break a limit', () => {
  it(
    'are refused with exit 2 naming the file, item, field and fix, and nothing is written',
    async () => {
      const tooMany = Array.from({ length: 10_000 }, (_, index) => `k${index}`);
      const file = sandbox.file(
        'limits.json',
        JSON.stringify({
          rules: [
            { ruleId: 'too-many', audienceId: 'chips-team', keywords: tooMany },
            { ruleId: '', audienceId: 'chips-team', keywords: ['wafer'] },
            {
              ruleId: 'too-big',
              audienceId: 'chips-team',
              keywords: Array.from({ length: 500 }, () => '語'.repeat(200)),
              media: Array.from({ length: 500 }, () => 'm'.repeat(200)),
              statuses: Array.from({ length: 50 }, () => 's'.repeat(200)),
            },
            { ruleId: 'invisible', audienceId: 'chips-team', keywords: ['\u200B\u200B'] },
          ],
        }),
      );
      const levels = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'];
      for (let level = 1; level < 9; level++) {
        const refs = Array.from({ length: 9 }, () => `*${String.fromCharCode(96 + level)}`).join(', ');
        levels.push(`l${level}: &${String.fromCharCode(97 + level)} [${refs}]`);
      }
      const bomb = sandbox.file('bomb.yaml', `${levels.join('\n')}\n`);

      // Saved in Latin-1: "café" once became "caf\uFFFD", a keyword nothing can match.
      const latin1 = sandbox.file(
        'latin1.yaml',
        Buffer.from('ruleId: latin1\naudienceId: chips-team\nkeywords: [caf\u00e9]\n', 'latin1'),
      );

      // An id longer than a file name can be: it is checked as an id (it crashed looking for a
      // file of that name: ENAMETOOLONG, exit 1).
      const longId = 'a'.repeat(3000);
      const [put, bombPut, emptyId, latin1Put, longRule, longAudience] = await Promise.all([
        sandbox.cli(['rules', 'put', '--file', file]),
        sandbox.cli(['rules', 'put', '--file', bomb]),
        sandbox.cli(['rules', 'put', '', '--audience', 'chips-team', '--keywords', 'wafer']),
        sandbox.cli(['rules', 'put', '--file', latin1]),
        sandbox.cli(['--json', 'rules', 'create', longId, '--audience', 'chips-team', '--keywords', 'x']),
        sandbox.cli(['--json', 'audiences', 'create', longId.slice(0, 300)]),
      ]);
      for (const [long, problem] of [
        [longRule, 'ruleId must be 1-128 characters'],
        [longAudience, 'topic name'],
      ] as const) {
        expect(long.code, long.stderr).toBe(2);
        const failure = long.json<{ error: { code: string }; problems: { message: string }[] }>();
        expect(failure.error.code).toBe('usage');
        expect(failure.problems.map(({ message }) => message).join('\n')).toContain(problem);
        expect(long.stderr).not.toContain('ENAMETOOLONG');
      }

      expect(latin1Put.code, latin1Put.stderr).toBe(2);
      expect(latin1Put.stderr).toContain(`${latin1} is not UTF-8 text; nothing was read from it`);
      expect(latin1Put.stderr).toContain(`${latin1}:3: byte 0xE9 (column 15) is not UTF-8`);

      expect(put.code, put.stderr).toBe(2);
      expect(put.stderr).toContain(`${file}: 4 problem(s); nothing was written`);
      expect(put.stderr).toContain(
        'rule "too-many": keywords: has 10000 entries; at most 500 are allowed: split them over several rules',
      );
      expect(put.stderr).toMatch(/rule rules\[1\]: ruleId must be 1-128 characters/);
      expect(put.stderr).toMatch(
        /rule "too-big": the rule is 401\.\d KB \(\d+ bytes\) as DynamoDB measures items, over its limit of 400\.0 KB/,
      );
      expect(put.stderr).toMatch(/rule "invisible": keywords\[0\]: has no visible character \(only U\+200B\)/);
      expect(put.stderr).not.toMatch(/ValidationException|must be a list/);

      expect(bombPut.code, bombPut.stderr).toBe(2);
      expect(bombPut.stderr).toContain(`${bomb}:2: aliases (*name) expand to too much data`);
      expect(bombPut.stderr).not.toContain('ReferenceError');

      expect(emptyId.code, emptyId.stderr).toBe(2);
      expect(emptyId.stderr).toContain('<ruleId> is empty: give one, or leave it out where --help says it may be');
      expect(emptyId.stderr).not.toContain('ValidationException');

      const list = await sandbox.cli(['--json', 'rules', 'list']);
      const ids = list.json<{ ruleId: string }[]>().map((entry) => entry.ruleId);
      expect(ids).not.toContain('too-many');
      expect(ids).not.toContain('too-big');
      expect(ids).not.toContain('latin1');
    },
    slow,
  );
});
