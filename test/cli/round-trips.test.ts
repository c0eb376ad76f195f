/**
 * Issue 11, item 6 (and the rules/audiences parts of 3 and 10), end to end with the real CLI
 * process: what one command prints, another reads back. `export`, `list --json`, `show --json`
 * and what `delete` prints are documents `put --file -` and `validate` accept; notes go to
 * stderr so a pipe carries only the document; a typo in an audience id is "not found", not
 * "no rules"; and under `--json` a failure leaves stdout to the program's one error document.
 */

import { DeleteTopicCommand } from '@aws-sdk/client-sns';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseRule } from '#core/model';
import { getItem, type Item, listItems, withoutAudit } from '../../cli/items.ts';
import { type CliResult, type CliSandbox, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
// A sandbox of its own for every test, so each starts from the example set in any order.
beforeEach(async () => {
  sandbox = await startCliSandbox();
});
afterEach(async () => {
  await sandbox?.stop();
});

// Generous: several CLI processes in a row on a loaded 2-core machine.
const slow = 180_000;

const rulesTable = () => ({ tableName: sandbox.descriptor.names.rulesTable, keyName: 'ruleId', noun: 'rule' });
const storedRules = async (): Promise<Item[]> =>
  (await listItems(sandbox.stack.clients.documents, rulesTable())).sort((a, b) =>
    String(a.ruleId).localeCompare(String(b.ruleId)),
  );
/**
 * A stored rule as the run reads it (defaults applied, as `put` stores them), compared across a
 * delete and restore with the audit attributes and set order aside.
 */
function content(item: Item | undefined): Record<string, unknown> {
  const parsed = parseRule(item);
  if (!parsed.ok) throw new Error(`not a valid rule: ${parsed.rejected.reason}`);
  return Object.fromEntries(
    Object.entries(withoutAudit({ ...parsed.value })).map(([name, value]) => [
      name,
      value instanceof Set || Array.isArray(value) ? [...value].map(String).sort() : value,
    ]),
  );
}

/**
 * A failure under `--json`: the command itself printed nothing on stdout, so stdout is the
 * program's one error document (`{ ok: false, error, problems }`) with the message or problem.
 */
function expectJsonFailure(result: CliResult, code: number, message: string): void {
  expect(result.code, result.stderr).toBe(code);
  const document = result.json<{ ok: boolean; error: { message: string }; problems: { message: string }[] }>();
  expect(document.ok).toBe(false);
  expect([document.error.message, ...document.problems.map((problem) => problem.message)].join('\n')).toContain(
    message,
  );
}

describe('rules round trips', () => {
  it(
    'list --json, export and delete print documents that validate and put read back; notes stay off stdout',
    async () => {
      // The list's JSON is read back: only the one rule the run rejects is a problem.
      const list = await sandbox.cli(['--json', 'rules', 'list']);
      const listFile = sandbox.file('all.json', list.stdout);
      const validateList = await sandbox.cli(['rules', 'validate', listFile]);
      expect(validateList.code).toBe(2);
      // The example set's typo-rule (its two problems), at its line in the list's JSON.
      expect(validateList.stderr).toContain(`${listFile}: 2 problem(s)`);
      expect(validateList.stderr).toMatch(/all\.json:\d+: rule "typo-rule": unknown attribute "keyword"/);
      expect(validateList.stderr).toMatch(/all\.json:\d+: rule "typo-rule": categories: the rule has no categories/);
      expect(validateList.stderr).not.toMatch(/unknown attribute "(valid|item|problem)"/);

      // delete prints the deleted rule as a document on stdout, the confirmation on stderr.
      const deletedTypo = await sandbox.cli(['rules', 'delete', 'typo-rule', '--yes']);
      expect(deletedTypo.code, deletedTypo.stderr).toBe(0);
      expect(deletedTypo.stderr).toContain('deleted typo-rule');
      expect(deletedTypo.stdout).not.toContain('deleted');
      expect(parse(deletedTypo.stdout)).toEqual({
        rules: [{ ruleId: 'typo-rule', audienceId: 'chips-team', keyword: ['wafer'] }],
      });

      // export (YAML by default) → put --file -: every rule unchanged, nothing written.
      const before = await storedRules();
      const exported = await sandbox.cli(['rules', 'export']);
      expect(exported.code, exported.stderr).toBe(0);
      expect((parse(exported.stdout) as { rules: { ruleId: string }[] }).rules.map((rule) => rule.ruleId)).toEqual(
        before.map((rule) => rule.ruleId),
      );
      const [putBack, validateListAgain, exportJson, exportMissing] = await Promise.all([
        sandbox.cli(['--json', 'rules', 'put', '--file', '-'], { input: exported.stdout }),
        sandbox
          .cli(['--json', 'rules', 'list'])
          .then((again) => sandbox.cli(['--json', 'rules', 'validate', sandbox.file('valid.json', again.stdout)])),
        sandbox.cli(['rules', 'export', 'markets-rates', '--format', 'json']),
        sandbox.cli(['rules', 'export', 'markets-rates', 'no-such-rule']),
      ]);
      expect(putBack.code, putBack.stderr).toBe(0);
      expect(
        putBack.json<{ results: { action: string }[] }>().results.every((result) => result.action === 'unchanged'),
      ).toBe(true);
      expect(await storedRules()).toEqual(before);
      // A successful validate under --json prints its normal result document.
      expect(validateListAgain.code, validateListAgain.stderr).toBe(0);
      expect(validateListAgain.json()).toMatchObject({ valid: true });
      expect(exportJson.json()).toEqual({
        rules: [expect.objectContaining({ ruleId: 'markets-rates', audienceId: 'markets-desk', categories: ['002*'] })],
      });
      expect(exportMissing.code).toBe(3);
      expect(exportMissing.stderr).toContain('rule no-such-rule does not exist');

      // delete | put --file - undoes a delete, in YAML and in --json form.
      const documents = sandbox.stack.clients.documents;
      const original = await Promise.all(
        ['markets-rates', 'quakes', 'partner-elections'].map((id) => getItem(documents, rulesTable(), id)),
      );
      const [deleted, deletedJson] = await Promise.all([
        sandbox.cli(['rules', 'delete', 'markets-rates', 'quakes', '--yes']),
        sandbox.cli(['--json', 'rules', 'delete', 'partner-elections', '--yes']),
      ]);
      expect(deleted.code, deleted.stderr).toBe(0);
      expect(deletedJson.json()).toMatchObject({ results: [{ ruleId: 'partner-elections', action: 'deleted' }] });
      expect(await getItem(documents, rulesTable(), 'quakes')).toBeUndefined();
      const [restored, restoredJson] = await Promise.all([
        sandbox.cli(['--actor', 'undo', 'rules', 'put', '--file', '-'], { input: deleted.stdout }),
        sandbox.cli(['--actor', 'undo', 'rules', 'put', '--file', '-'], { input: deletedJson.stdout }),
      ]);
      expect(restored.code, restored.stderr).toBe(0);
      expect(restoredJson.code, restoredJson.stderr).toBe(0);
      const after = await Promise.all(
        ['markets-rates', 'quakes', 'partner-elections'].map((id) => getItem(documents, rulesTable(), id)),
      );
      expect(after.map(content)).toEqual(original.map(content));
      expect(after.map((item) => item?.updatedBy)).toEqual(['undo', 'undo', 'undo']);
    },
    slow,
  );

  it(
    'an unknown audience is not found (exit 3), not "no rules"; --json failures leave stdout to the error document',
    async () => {
      const broken = sandbox.file(
        'broken.yaml',
        'rules:\n  - ruleId: x\n    audienceId: chips-team\n    keyword: [a]\n',
      );
      const [noAudience, noAudienceJson, emptyAudience, validateJson, showJson] = await Promise.all([
        sandbox.cli(['rules', 'list', '--audience', 'nope']),
        sandbox.cli(['--json', 'rules', 'list', '--audience', 'nope']),
        sandbox
          .cli(['audiences', 'create', 'quiet-desk'])
          .then(() => sandbox.cli(['--json', 'rules', 'list', '--audience', 'quiet-desk'])),
        sandbox.cli(['--json', 'rules', 'validate', broken]),
        sandbox.cli(['--json', 'rules', 'show', 'nope']),
      ]);
      expect(noAudience.code).toBe(3);
      expect(noAudience.stderr).toContain('audience nope does not exist');
      expect(noAudience.stdout).toBe('');
      expectJsonFailure(noAudienceJson, 3, 'audience nope does not exist');
      // An audience that exists and has no rules is an empty list, exit 0.
      expect(emptyAudience.code, emptyAudience.stderr).toBe(0);
      expect(emptyAudience.json()).toEqual([]);
      expectJsonFailure(validateJson, 2, 'unknown attribute "keyword"');
      // Where it is, as fields a script can read (the ops guide's exit-code section promises them).
      expect(validateJson.json<{ problems: object[] }>().problems).toContainEqual(
        expect.objectContaining({ file: broken, line: 4, item: 'x', message: expect.stringContaining('"keyword"') }),
      );
      expectJsonFailure(showJson, 3, 'rule nope does not exist');
    },
    slow,
  );
});

describe('audiences round trips and states', () => {
  it(
    'export, list/show --json and delete read back with put --file; a deleted topic shows as "topic missing"; hints name the audience',
    async () => {
      const audiencesTable = () => ({
        tableName: sandbox.descriptor.names.audiencesTable,
        keyName: 'audienceId',
        noun: 'audience',
      });
      const documents = sandbox.stack.clients.documents;
      const storedAudiences = async () =>
        (await listItems(documents, audiencesTable())).sort((a, b) =>
          String(a.audienceId).localeCompare(String(b.audienceId)),
        );

      // The next step names the audience just created, on stderr (stdout is the result).
      const created = await sandbox.cli(['audiences', 'create', 'ops-desk', '--name', 'Ops desk']);
      expect(created.code, created.stderr).toBe(0);
      expect(created.stderr).toContain(
        `news-alerts --sandbox-file ${sandbox.descriptorPath} subscriptions add ops-desk --email desk@example.com`,
      );
      expect(created.stderr).not.toContain('<audienceId>');
      expect(created.stdout).not.toContain('Next');

      // export → put --file -, list --json → validate, show --json → put: nothing changes.
      const before = await storedAudiences();
      const [exported, list, show] = await Promise.all([
        sandbox.cli(['audiences', 'export']),
        sandbox.cli(['--json', 'audiences', 'list']),
        sandbox.cli(['--json', 'audiences', 'show', 'chips-team']),
      ]);
      expect(
        (parse(exported.stdout) as { audiences: { audienceId: string }[] }).audiences.map((item) => item.audienceId),
      ).toEqual(before.map((item) => item.audienceId));
      const [putExport, validateList, putShow, exportJson] = await Promise.all([
        sandbox.cli(['--json', 'audiences', 'put', '--file', '-'], { input: exported.stdout }),
        sandbox.cli(['--json', 'audiences', 'validate', sandbox.file('audiences.json', list.stdout)]),
        sandbox.cli(['--json', 'audiences', 'put', '--file', '-'], { input: show.stdout }),
        sandbox.cli(['audiences', 'export', 'ops-desk', '--format', 'json']),
      ]);
      expect(putExport.code, putExport.stderr).toBe(0);
      const actions = (result: CliResult) =>
        result.json<{ results: { action: string }[] }>().results.map((entry) => entry.action);
      expect(new Set(actions(putExport))).toEqual(new Set(['unchanged']));
      expect(validateList.code, validateList.stderr).toBe(0);
      expect(validateList.json()).toMatchObject({ valid: true });
      expect(actions(putShow)).toEqual(['unchanged']);
      expect(await storedAudiences()).toEqual(before);
      expect(exportJson.json()).toEqual({
        audiences: [expect.objectContaining({ audienceId: 'ops-desk', name: 'Ops desk', version: 1 })],
      });

      // put --file creates the new audiences (with their topic) and replaces the others.
      const putFile = sandbox.file(
        'desks.yaml',
        'audiences:\n  - audienceId: night-desk\n    name: Night desk\n  - audienceId: ops-desk\n    name: Operations\n',
      );
      const put = await sandbox.cli(['--json', 'audiences', 'put', '--file', putFile]);
      expect(put.code, put.stderr).toBe(0);
      expect(actions(put)).toEqual(['created', 'updated']);
      expect(put.stderr).toContain(
        `news-alerts --sandbox-file ${sandbox.descriptorPath} subscriptions add night-desk --email`,
      );
      expect(await getItem(documents, audiencesTable(), 'ops-desk')).toMatchObject({
        name: 'Operations',
        version: 2,
        topicArn: expect.stringMatching(/:[\w-]*audience-ops-desk$/),
      });
      expect(await getItem(documents, audiencesTable(), 'night-desk')).toMatchObject({
        topicArn: expect.stringMatching(/:[\w-]*audience-night-desk$/),
      });

      // A topic deleted behind the CLI's back: STATUS says so (list and show), not "ok".
      const marketsTopic = String((await getItem(documents, audiencesTable(), 'markets-desk'))?.topicArn);
      await sandbox.stack.clients.sns.send(new DeleteTopicCommand({ TopicArn: marketsTopic }));
      const [listMissing, tableMissing, showMissing, showText] = await Promise.all([
        sandbox.cli(['--json', 'audiences', 'list']),
        sandbox.cli(['audiences', 'list']),
        sandbox.cli(['--json', 'audiences', 'show', 'markets-desk']),
        sandbox.cli(['audiences', 'show', 'markets-desk']),
      ]);
      // The fix it names is the one the ops guide and a run's error name.
      expect(showText.stderr).toContain("audiences repair markets-desk', then");
      const rows = listMissing.json<{ audienceId: string; status: string; problem?: string }[]>();
      expect(rows.find((row) => row.audienceId === 'markets-desk')).toMatchObject({
        status: 'topic missing',
        problem: expect.stringContaining(`the topic ${marketsTopic} does not exist`),
      });
      expect(rows.find((row) => row.audienceId === 'chips-team')).toMatchObject({ status: 'ok' });
      expect(tableMissing.stdout).toMatch(/markets-desk.*topic missing/);
      expect(showMissing.json()).toMatchObject({ status: 'topic missing' });

      // delete prints the audience and its rules as one document both put verbs restore; with
      // --delete-topic the topic is made again by the convention.
      const partner = await getItem(documents, audiencesTable(), 'partner-feed');
      const deleted = await sandbox.cli([
        'audiences',
        'delete',
        'partner-feed',
        '--with-rules',
        '--delete-topic',
        '--yes',
      ]);
      expect(deleted.code, deleted.stderr).toBe(0);
      expect(deleted.stderr).toContain('deleted audience partner-feed');
      expect(deleted.stdout).not.toContain('deleted');
      const saved = sandbox.file('deleted.yaml', deleted.stdout);
      expect(parse(deleted.stdout)).toMatchObject({
        audiences: [{ audienceId: 'partner-feed' }],
        rules: [{ ruleId: 'partner-elections', audienceId: 'partner-feed' }],
      });
      const restoredAudience = await sandbox.cli(['audiences', 'put', '--file', saved]);
      expect(restoredAudience.code, restoredAudience.stderr).toBe(0);
      const restoredRules = await sandbox.cli(['rules', 'put', '--file', saved]);
      expect(restoredRules.code, restoredRules.stderr).toBe(0);
      expect(await getItem(documents, audiencesTable(), 'partner-feed')).toMatchObject({
        ...withoutAudit(partner ?? {}),
        version: 1,
      });
      expect(await getItem(documents, rulesTable(), 'partner-elections')).toMatchObject({ audienceId: 'partner-feed' });
      const topic = await sandbox.cli(['--json', 'audiences', 'show', 'partner-feed']);
      expect(topic.json()).toMatchObject({ status: 'ok' });

      const [badFile, missingExport] = await Promise.all([
        sandbox.cli([
          '--json',
          'audiences',
          'validate',
          sandbox.file('bad.yaml', 'audienceId: x-desk\nsmsMaxSegments: 40\n'),
        ]),
        sandbox.cli(['--json', 'audiences', 'export', 'nope']),
      ]);
      expectJsonFailure(badFile, 2, 'audience "x-desk": smsMaxSegments');
      expectJsonFailure(missingExport, 3, 'audience nope does not exist');
    },
    slow,
  );
});
