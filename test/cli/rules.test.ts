/**
 * `news-alerts rules …` end to end against moto server: what the run accepts the CLI accepts,
 * a file with any problem is refused whole with its line, field and reason (nothing written),
 * and every write records who and when, bumps the version and shows the previous one.
 */
import { NumberValue, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DynamoRuleHistory } from '#aws/dynamo-rule-history';
import { exampleAuthor } from '#sandbox/examples';
import { ConcurrentChangeError } from '../../cli/errors.ts';
import { getItem, listItems, writeItems } from '../../cli/items.ts';
import { displayWidth } from '../../cli/output.ts';
import { type CliSandbox, cliInProcess, cliWithEditBeforeWrite, setByHand, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
const rulesTable = () => ({ tableName: sandbox.descriptor.names.rulesTable, keyName: 'ruleId', noun: 'rule' });
const storedRules = async () =>
  (await listItems(sandbox.stack.clients.documents, rulesTable())).sort((a, b) =>
    String(a.ruleId).localeCompare(String(b.ruleId)),
  );

// A sandbox of its own for every test: each starts from the example set, whatever ran before it
// (the tests pass in any order, e.g. with --sequence.shuffle).
beforeEach(async () => {
  sandbox = await startCliSandbox();
});
afterEach(async () => {
  await sandbox?.stop();
});

const goodFile = `# proposed rules for the chips and quake desks
rules:
  - ruleId: chips-wafer
    audienceId: chips-team
    description: Wafer and foundry news
    keywords: [wafer, foundry]
  - ruleId: quakes
    audienceId: quake-oncall
    description: Earthquakes and tsunamis
    keywords: [earthquake, tsunami, 地震, 지진]
    urgent: true
`;

const badFile = `rules:
  - ruleId: fine-rule
    audienceId: chips-team
    keywords: [chip]
  - ruleId: typo
    audienceId: chips-team
    keyword: [wafer]
    mediaa: [x]
  - ruleId: empty-term
    audienceId: markets-desk
    categories:
      - "002*"
      - ""
  - ruleId: ghost
    audienceId: no-such-audience
    keywords: [x]
`;

describe('rules list and show', () => {
  it('lists every rule with the run’s verdict, and shows one; an unknown rule is exit 3', async () => {
    const list = await sandbox.cli(['--json', 'rules', 'list']);
    expect(list.code, list.stderr).toBe(0);
    const rows = list.json<{ ruleId: string; valid: boolean; problem?: string }[]>();
    expect(rows.map((row) => row.ruleId)).toEqual([
      'chips-category',
      'chips-keywords',
      'markets-chip-exports',
      'markets-finance',
      'markets-rates',
      'partner-elections',
      'quakes',
      'typo-rule',
    ]);
    // The example set's typo, judged with the run's own words.
    expect(rows.find((row) => row.ruleId === 'typo-rule')).toMatchObject({
      valid: false,
      problem: expect.stringContaining('unknown attribute "keyword" (did you mean "keywords"?)'),
    });
    expect(rows.filter((row) => !row.valid)).toHaveLength(1);

    const table = await sandbox.cli(['rules', 'list', '--audience', 'markets-desk']);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('markets-rates');
    expect(table.stdout).toContain('categories 002*; keywords "interest rate", inflation');
    expect(table.stdout).not.toContain('quakes');

    const show = await sandbox.cli(['--json', 'rules', 'show', 'markets-finance']);
    expect(show.json()).toMatchObject({ ruleId: 'markets-finance', excludeKeywords: ['rumor'] });
    const invalidShow = await sandbox.cli(['--json', 'rules', 'show', 'typo-rule']);
    expect(invalidShow.json()).toEqual({
      ruleId: 'typo-rule',
      audienceId: 'chips-team',
      version: 1,
      updatedBy: exampleAuthor,
      keyword: ['wafer'],
      fingerprint: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
    });
    expect(invalidShow.stderr).toContain('rule typo-rule is INVALID: unknown attribute');

    const missing = await sandbox.cli(['rules', 'show', 'no-such-rule']);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('rule no-such-rule does not exist (news-alerts');
    expect(missing.stderr).not.toContain('did you mean');
  });

  it('an id with a typo is named with the stored id it is closest to', async () => {
    const [show, enable, subscriptions, explain] = await Promise.all([
      sandbox.cli(['rules', 'show', 'Quake']),
      sandbox.cli(['rules', 'enable', 'markets-rate', 'chips-keyword', 'zz-nothing-like-it']),
      sandbox.cli(['subscriptions', 'list', 'markets-dsk']),
      sandbox.cli(['rules', 'explain', 'quakes', '--audience', 'quake-oncal', '--title', 'x']),
    ]);
    expect(show.code).toBe(3);
    expect(show.stderr).toContain('rule Quake does not exist; did you mean "quakes"? (news-alerts');
    expect(enable.code).toBe(3);
    expect(enable.stderr).toContain(
      'rule markets-rate, chips-keyword, zz-nothing-like-it does not exist (did you mean "markets-rates" for "markets-rate", "chips-keywords" for "chips-keyword"?); nothing was changed',
    );
    expect(subscriptions.code).toBe(3);
    expect(subscriptions.stderr).toContain('audience markets-dsk does not exist in');
    expect(subscriptions.stderr).toContain('did you mean "markets-desk"?');
    expect(explain.code).toBe(3);
    expect(explain.stderr).toContain('did you mean "quake-oncall"?');
  });

  it('a rule id given twice to enable, disable or delete is refused up front, naming it; nothing is changed', async () => {
    const before = await storedRules();
    const [disable, enable, deleteAsked, deleteYes] = await Promise.all([
      sandbox.cli(['rules', 'disable', 'quakes', 'markets-rates', 'quakes']),
      sandbox.cli(['rules', 'enable', 'chips-category', 'chips-category']),
      sandbox.cli(['rules', 'delete', 'quakes', 'quakes']),
      sandbox.cli(['rules', 'delete', 'markets-rates', 'quakes', 'markets-rates', 'quakes', '--yes']),
    ]);
    expect(disable.code, disable.stderr).toBe(2);
    expect(disable.stderr).toContain(
      'rule quakes is given more than once; give each rule once (quakes markets-rates); nothing was changed',
    );
    // The argument is blamed, not the rule (it is valid).
    expect(enable.code, enable.stderr).toBe(2);
    expect(enable.stderr).toContain(
      'rule chips-category is given more than once; give each rule once (chips-category)',
    );
    expect(enable.stderr).not.toContain('appears twice');
    // Refused before the question, which would otherwise be asked about a list the write refuses.
    expect(deleteAsked.code, deleteAsked.stderr).toBe(2);
    expect(deleteAsked.stderr).toContain('rule quakes is given more than once');
    expect(deleteAsked.stderr).not.toContain('--yes');
    expect(deleteYes.code, deleteYes.stderr).toBe(2);
    expect(deleteYes.stderr).toContain('rule markets-rates, quakes are given more than once');
    expect(deleteYes.stderr).toContain('nothing was deleted');
    expect(await storedRules()).toEqual(before);
  });

  it('at COLUMNS=60 the table never splits a word: rows too wide for the columns print as blocks', async () => {
    const narrow = await sandbox.cli(['--output', 'table', 'rules', 'list'], { env: { COLUMNS: '60' } });
    expect(narrow.code, narrow.stderr).toBe(0);
    for (const line of narrow.stdout.trimEnd().split('\n')) expect(displayWidth(line), line).toBeLessThanOrEqual(60);
    expect(narrow.stdout).not.toMatch(/semiconduc(?!tor)/);
    expect(narrow.stdout).toMatch(/^CRITERIA +keywords semiconductor, /m);
    expect(narrow.stdout).toMatch(/^RULE +markets-chip-exports$/m);
  });

  it('VERSION and UPDATED: the examples show their first version and author; an item saved by hand shows "-"', async () => {
    // As an ops person saves a rule in the DynamoDB console: no version, no updatedBy/updatedAt.
    await sandbox.stack.clients.documents.send(
      new PutCommand({
        TableName: sandbox.descriptor.names.rulesTable,
        Item: { ruleId: 'by-hand', audienceId: 'chips-team', keywords: ['wafer'] },
      }),
    );
    const [tsv, audiences] = await Promise.all([
      sandbox.cli(['--output', 'tsv', 'rules', 'list']),
      sandbox.cli(['--output', 'tsv', 'audiences', 'list']),
    ]);
    expect(tsv.code, tsv.stderr).toBe(0);
    const [head = '', ...lines] = tsv.stdout.trimEnd().split('\n');
    const columns = head.split('\t');
    const cell = (line: string, column: string) => line.split('\t')[columns.indexOf(column)];
    expect(columns).toEqual(expect.arrayContaining(['RULE', 'VERSION', 'UPDATED']));
    const examples = lines.filter((line) => cell(line, 'RULE') !== 'by-hand');
    expect(examples).toHaveLength(8);
    for (const line of examples) {
      expect(cell(line, 'VERSION'), line).toBe('1');
      expect(cell(line, 'UPDATED'), line).toBe(exampleAuthor);
    }
    const byHand = lines.find((line) => cell(line, 'RULE') === 'by-hand') ?? '';
    expect([cell(byHand, 'VERSION'), cell(byHand, 'UPDATED')]).toEqual(['-', '-']);

    const [audienceHead = '', ...audienceLines] = audiences.stdout.trimEnd().split('\n');
    const version = audienceHead.split('\t').indexOf('VERSION');
    expect(audienceLines.map((line) => line.split('\t')[version])).toEqual(['1', '1', '1', '1']);
  });
});

describe('rules validate and put from files', () => {
  it('refuses a file with invalid rules and an unknown audience, naming line, field and reason, and writes nothing', async () => {
    const before = await storedRules();
    const path = sandbox.file('bad.yaml', badFile);
    const results = await Promise.all([
      sandbox.cli(['rules', 'validate', path]),
      sandbox.cli(['rules', 'put', '--file', path]),
    ]);
    for (const result of results) {
      expect(result.code, result.stderr).toBe(2);
      // Each unknown attribute on its own line, naming itself only (each line named both).
      expect(result.stderr).toMatch(
        /bad\.yaml:7: rule "typo": unknown attribute "keyword" \(did you mean "keywords"\?\)\n/,
      );
      expect(result.stderr).toMatch(
        /bad\.yaml:8: rule "typo": unknown attribute "mediaa" \(did you mean "media"\?\)\n/,
      );
      expect(result.stderr).toContain(`bad.yaml:13: rule "empty-term": categories[1]: must not be empty`);
      expect(result.stderr).toContain(
        `bad.yaml:15: rule "ghost": audienceId: no valid audience "no-such-audience" exists; create it or fix the rule's audienceId`,
      );
      expect(result.stderr).not.toContain('fine-rule');
    }
    // The valid rule of the file was not written either.
    expect(await storedRules()).toEqual(before);
  });

  it('put --file - names its input stdin throughout and lists the problems in line order, whichever check found them', async () => {
    const before = await storedRules();
    // The unknown audience is found after every rule's shape is checked, yet it comes first.
    const input = `rules:
  - ruleId: ghost
    audienceId: no-such-audience
    keywords: [x]
  - ruleId: typo
    audienceId: chips-team
    keyword: [wafer]
`;
    const put = await sandbox.cli(['rules', 'put', '--file', '-'], { input });
    expect(put.code, put.stderr).toBe(2);
    const lines = put.stderr.trim().split('\n');
    expect(lines[0]).toBe('news-alerts: stdin: 3 problem(s); nothing was written');
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^news-alerts: +stdin:3: rule "ghost": audienceId: no valid audience "no-such-audience"/),
      expect.stringMatching(/^news-alerts: +stdin:5: rule "typo": categories: the rule has no categories/),
      expect.stringMatching(/^news-alerts: +stdin:7: rule "typo": unknown attribute "keyword"/),
    ]);
    expect(await storedRules()).toEqual(before);
  });

  it('refuses malformed YAML and JSON with the line of the syntax error', async () => {
    const before = await storedRules();
    const [yaml, json, shape] = await Promise.all([
      sandbox.cli([
        'rules',
        'put',
        '-f',
        sandbox.file('broken.yaml', 'rules:\n  - ruleId: x\n    audienceId: [chips\n'),
      ]),
      sandbox.cli([
        'rules',
        'validate',
        sandbox.file('broken.json', '[\n  {"ruleId": "x",\n   "audienceId": "chips-team",}\n]'),
      ]),
      sandbox.cli(['rules', 'put', '-f', sandbox.file('scalar.yaml', 'just a string\n')]),
    ]);
    expect(yaml.code).toBe(2);
    expect(yaml.stderr).toMatch(/broken\.yaml is not valid YAML; nothing was written/);
    expect(yaml.stderr).toMatch(/broken\.yaml:4:\d+: /);

    expect(json.code).toBe(2);
    expect(json.stderr).toMatch(/broken\.json:3:\d+: .*JSON/);

    expect(shape.code).toBe(2);
    expect(shape.stderr).toContain('must hold one rule (an object), a list of them, or {"rules": [...]}');
    expect(await storedRules()).toEqual(before);
  });

  it('validate shows what a good file would change without writing; put writes it with who, when and version', async () => {
    const path = sandbox.file('good.yaml', goodFile);
    const before = await storedRules();
    const validate = await sandbox.cli(['--json', 'rules', 'validate', path]);
    expect(validate.code, validate.stderr).toBe(0);
    expect(validate.json()).toMatchObject({
      valid: true,
      rules: [
        { ruleId: 'chips-wafer', status: 'new' },
        { ruleId: 'quakes', status: 'changes description, keywords' },
      ],
    });
    expect(await storedRules()).toEqual(before);

    const put = await sandbox.cli(['rules', 'put', '--file', path], { env: { NEWS_ALERTS_ACTOR: 'alice@ops' } });
    expect(put.code, put.stderr).toBe(0);
    expect(put.stdout).toContain('created chips-wafer (version 1)');
    // The example rule's first version, written by the sandbox: the previous state is shown.
    expect(put.stdout).toContain(`updated quakes: version 1 → 2; previous: version 1, by ${exampleAuthor}`);
    expect(put.stdout).toContain('keywords: ["earthquake","地震","지진"] → ["earthquake","tsunami","地震","지진"]');
    const stored = await getItem(sandbox.stack.clients.documents, rulesTable(), 'quakes');
    expect(stored).toMatchObject({
      version: 2,
      updatedBy: 'alice@ops',
      keywords: ['earthquake', 'tsunami', '地震', '지진'],
    });
    expect(Date.now() - Date.parse(String(stored?.updatedAt))).toBeLessThan(5 * 60_000);

    // The same file again changes nothing; --actor wins over the variable.
    const again = await sandbox.cli(['--json', '--actor', 'bob', 'rules', 'put', '--file', path], {
      env: { NEWS_ALERTS_ACTOR: 'alice@ops' },
    });
    expect(again.json<{ results: { action: string }[] }>().results.map((result) => result.action)).toEqual([
      'unchanged',
      'unchanged',
    ]);

    // An edit made from an export of version 1 is refused once the table holds version 2.
    const edited = goodFile.replace('description: Wafer and foundry news', 'description: Wafers');
    const bump = await sandbox.cli(['--actor', 'bob', 'rules', 'put', '-f', sandbox.file('edit.yaml', edited)]);
    expect(bump.stdout).toContain('updated chips-wafer: version 1 → 2; previous: version 1');
    expect(bump.stdout).toContain('description: "Wafer and foundry news" → "Wafers"');
    expect(await getItem(sandbox.stack.clients.documents, rulesTable(), 'chips-wafer')).toMatchObject({
      version: 2,
      updatedBy: 'bob',
    });
    const stale = await sandbox.cli([
      'rules',
      'put',
      '-f',
      sandbox.file(
        'stale.json',
        JSON.stringify({ ruleId: 'chips-wafer', audienceId: 'chips-team', keywords: ['x'], version: 1 }),
      ),
    ]);
    // A version conflict (the file is fine, the table moved on) is exit 1, as the README's table says.
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain(
      'stale.json:1: rule "chips-wafer": the file was made from version 1, but the table holds version 2',
    );
    expect(await getItem(sandbox.stack.clients.documents, rulesTable(), 'chips-wafer')).toMatchObject({
      version: 2,
      description: 'Wafers',
    });
  });

  it('a rule exported with show --json can be piped back into put --file -', async () => {
    const show = await sandbox.cli(['--json', 'rules', 'show', 'markets-rates']);
    const exported = { ...show.json(), description: 'Rates, inflation and central banks' };
    const put = await sandbox.cli(['--actor', 'carol', 'rules', 'put', '--file', '-'], {
      input: JSON.stringify(exported),
    });
    expect(put.code, put.stderr).toBe(0);
    expect(put.stdout).toContain('updated markets-rates');
    expect(await getItem(sandbox.stack.clients.documents, rulesTable(), 'markets-rates')).toMatchObject({
      description: 'Rates, inflation and central banks',
      updatedBy: 'carol',
    });
  });
});

describe('rules put from flags, enable, disable, delete', () => {
  it('creates a rule from flags, refuses an invalid one, disables, enables and deletes with versions', async () => {
    const created = await sandbox.cli([
      '--actor',
      'dana',
      'rules',
      'put',
      'rate-cuts',
      '--audience',
      'markets-desk',
      '--categories',
      '002*',
      '--keywords',
      'rate cut',
      // A list option stays repeatable (a one-value option given twice is refused: exit-codes.test.ts).
      '--keywords',
      'rate hike',
      '--disabled',
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(await getItem(sandbox.stack.clients.documents, rulesTable(), 'rate-cuts')).toMatchObject({
      audienceId: 'markets-desk',
      enabled: false,
      categories: ['002*'],
      keywords: ['rate cut', 'rate hike'],
      version: 1,
      updatedBy: 'dana',
    });

    const [noCriteria, unknownAudience] = await Promise.all([
      sandbox.cli(['rules', 'put', 'flood', '--audience', 'markets-desk']),
      sandbox.cli(['rules', 'put', 'lost', '--audience', 'nobody', '--keywords', 'x']),
    ]);
    expect(noCriteria.code).toBe(2);
    expect(noCriteria.stderr).toContain('the rule has no categories, keywords, media or statuses');
    expect(unknownAudience.code).toBe(2);
    expect(unknownAudience.stderr).toContain('no valid audience "nobody" exists');
    expect(await getItem(sandbox.stack.clients.documents, rulesTable(), 'flood')).toBeUndefined();
    expect(await getItem(sandbox.stack.clients.documents, rulesTable(), 'lost')).toBeUndefined();

    const enable = await sandbox.cli(['rules', 'enable', 'rate-cuts']);
    expect(enable.stdout).toContain('enabled rate-cuts: version 1 → 2');
    const disable = await sandbox.cli(['--json', 'rules', 'disable', 'rate-cuts', 'chips-category']);
    expect(disable.json()).toMatchObject({
      results: [
        { ruleId: 'rate-cuts', action: 'disabled', version: 3, previousVersion: 2 },
        { ruleId: 'chips-category', action: 'disabled', version: 2, previousVersion: 1 },
      ],
    });
    // Enabling a rule the run would reject is refused with the reason.
    const [invalid, missing, unconfirmed] = await Promise.all([
      sandbox.cli(['rules', 'enable', 'typo-rule']),
      sandbox.cli(['rules', 'disable', 'no-such-rule']),
      sandbox.cli(['rules', 'delete', 'rate-cuts']),
    ]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('unknown attribute "keyword"');
    expect(missing.code).toBe(3);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('Pass --yes to confirm');
    expect(await getItem(sandbox.stack.clients.documents, rulesTable(), 'rate-cuts')).toBeDefined();
    const deleted = await sandbox.cli(['rules', 'delete', 'rate-cuts', '--yes']);
    expect(deleted.code).toBe(0);
    expect(deleted.stderr).toContain('deleted rate-cuts (was version 3');
    expect(await getItem(sandbox.stack.clients.documents, rulesTable(), 'rate-cuts')).toBeUndefined();
  });

  it('create refuses a rule that exists; update changes only the attributes given and keeps the others', async () => {
    const [exists, created, missing] = await Promise.all([
      sandbox.cli(['rules', 'create', 'markets-rates', '--audience', 'markets-desk', '--keywords', 'x']),
      sandbox.cli([
        '--actor',
        'erin',
        'rules',
        'create',
        'wafer-news',
        '--audience',
        'chips-team',
        '--keywords',
        'wafer',
      ]),
      sandbox.cli(['rules', 'update', 'no-such-rule', '--keywords', 'x']),
    ]);
    expect(exists.code).toBe(2);
    expect(exists.stderr).toContain(
      `rule "markets-rates" already exists; change it with 'news-alerts --sandbox-file ${sandbox.descriptorPath} rules update markets-rates'`,
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('created wafer-news (version 1)');
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('rule no-such-rule does not exist');

    const updated = await sandbox.cli([
      'rules',
      'update',
      'markets-rates',
      '--keywords',
      'rate cut',
      '--disable',
      '--clear',
      'description',
    ]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).toContain('updated markets-rates: version 1 → 2');
    const stored = await getItem(sandbox.stack.clients.documents, rulesTable(), 'markets-rates');
    expect(stored).toMatchObject({
      audienceId: 'markets-desk',
      categories: ['002*'],
      keywords: ['rate cut'],
      enabled: false,
      version: 2,
    });
    expect(stored).not.toHaveProperty('description');
    const [clearKey, invalid] = await Promise.all([
      sandbox.cli(['rules', 'update', 'markets-rates', '--clear', 'audienceId']),
      sandbox.cli(['rules', 'update', 'markets-rates', '--clear', 'categories,keywords']),
    ]);
    expect(clearKey.code).toBe(2);
    expect(clearKey.stderr).toContain('--clear audienceId: audienceId is required');
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('the rule has no categories, keywords, media or statuses');
  });

  it('update repairs a rule whose stored item has an attribute no rule has: the refusal says how, --clear removes it', async () => {
    // typo-rule (sandbox/examples.ts) was saved by hand with `keyword`; runs skip it.
    const refused = await sandbox.cli(['rules', 'update', 'typo-rule', '--keywords', 'wafer']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('unknown attribute "keyword"');
    expect(refused.stderr).toContain('Add --clear keyword to this command to remove them');
    expect(refused.stderr).toContain(`rules export typo-rule`);
    expect(await getItem(sandbox.stack.clients.documents, rulesTable(), 'typo-rule')).toHaveProperty('keyword');

    const repaired = await sandbox.cli(['rules', 'update', 'typo-rule', '--clear', 'keyword', '--keywords', 'wafer']);
    expect(repaired.code, repaired.stderr).toBe(0);
    // It lists what the repair changed, not the defaults the broken item left out (enabled, urgent, matchAll).
    const changed = repaired.stdout
      .split('\n')
      .filter((line) => line.startsWith('  ') && !line.includes('repairs the stored rule'))
      .map((line) => line.trim().split(':')[0]);
    expect(changed.sort()).toEqual(['keyword', 'keywords']);
    expect(repaired.stdout).toContain('  repairs the stored rule, which the run skips: ');
    const stored = await getItem(sandbox.stack.clients.documents, rulesTable(), 'typo-rule');
    expect(stored).toMatchObject({ keywords: ['wafer'] });
    expect(stored).not.toHaveProperty('keyword');

    // Only an attribute the stored item has, or a rule attribute, can be cleared.
    const unknown = await sandbox.cli(['rules', 'update', 'typo-rule', '--clear', 'keywordz']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--clear keywordz: not a rule attribute you can clear');
  });

  it('an update that changes no attribute still repairs a rule whose only fault is a version written as text', async () => {
    const documents = sandbox.stack.clients.documents;
    await documents.send(
      new PutCommand({
        TableName: rulesTable().tableName,
        Item: { ruleId: 'text-version-only', audienceId: 'chips-team', keywords: ['wafer'], version: '3' },
      }),
    );
    // validate says a file of the same content would repair it, not that it is unchanged.
    const file = sandbox.file(
      'text-version-only.json',
      JSON.stringify({ ruleId: 'text-version-only', audienceId: 'chips-team', keywords: ['wafer'] }),
    );
    const validated = await sandbox.cli(['rules', 'validate', file]);
    expect(validated.code, validated.stderr).toBe(0);
    expect(validated.stdout).toContain('repairs the stored rule, which the run skips');
    // --enable changes nothing the run reads (enabled is true by default): the write is the repair.
    const repaired = await sandbox.cli(['rules', 'update', 'text-version-only', '--enable']);
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(repaired.stdout).toContain('updated text-version-only');
    expect(repaired.stdout).toContain('repairs the stored rule, which the run skips: version');
    const stored = await getItem(documents, rulesTable(), 'text-version-only');
    expect(typeof stored?.version).toBe('number');
    expect((await sandbox.cli(['rules', 'update', 'text-version-only', '--enable'])).stdout).toContain(
      'unchanged text-version-only',
    );
  });

  it('a version written by hand that is not a number ("3") does not lock the rule: update takes over from it', async () => {
    const documents = sandbox.stack.clients.documents;
    await documents.send(
      new PutCommand({
        TableName: rulesTable().tableName,
        Item: { ruleId: 'text-version', audienceId: 'chips-team', keywords: ['wafer'], version: '3' },
      }),
    );
    const updated = await sandbox.cli(['rules', 'update', 'text-version', '--description', 'Wafer news']);
    expect(updated.code, updated.stderr).toBe(0);
    const stored = await getItem(documents, rulesTable(), 'text-version');
    expect(stored).toMatchObject({ description: 'Wafer news', keywords: ['wafer'] });
    expect(typeof stored?.version).toBe('number');
    // The lock still holds: a write read before someone changed the text version is refused.
    await documents.send(
      new PutCommand({
        TableName: rulesTable().tableName,
        Item: { ruleId: 'text-version-2', audienceId: 'chips-team', keywords: ['wafer'], version: 'x' },
      }),
    );
    const read = await getItem(documents, rulesTable(), 'text-version-2');
    await documents.send(
      new PutCommand({
        TableName: rulesTable().tableName,
        Item: { ruleId: 'text-version-2', audienceId: 'chips-team', keywords: ['chip'], version: 'y' },
      }),
    );
    await expect(
      writeItems(
        documents,
        rulesTable(),
        { puts: [{ id: 'text-version-2', item: { audienceId: 'chips-team', keywords: ['vote'] }, previous: read }] },
        { actor: 'racer', now: Date.now() },
      ),
    ).rejects.toThrow(ConcurrentChangeError);
    expect(await getItem(documents, rulesTable(), 'text-version-2')).toMatchObject({ keywords: ['chip'] });
  });

  it('a write that lost a race to another edit fails with nothing written (optimistic lock)', async () => {
    const documents = sandbox.stack.clients.documents;
    const read = await getItem(documents, rulesTable(), 'partner-elections');
    // Someone else saves the rule after we read it...
    await sandbox.cli(['rules', 'disable', 'partner-elections']);
    const current = await getItem(documents, rulesTable(), 'partner-elections');
    // ...so our write, based on the stale read, must not land, and neither may its companion.
    await expect(
      writeItems(
        documents,
        rulesTable(),
        {
          puts: [
            { id: 'partner-elections', item: { audienceId: 'partner-feed', keywords: ['vote'] }, previous: read },
            { id: 'companion', item: { audienceId: 'partner-feed', keywords: ['poll'] }, previous: undefined },
          ],
        },
        { actor: 'racer', now: Date.now() },
      ),
    ).rejects.toThrow(ConcurrentChangeError);
    expect(await getItem(documents, rulesTable(), 'partner-elections')).toEqual(current);
    expect(await getItem(documents, rulesTable(), 'companion')).toBeUndefined();
  });

  /**
   * Stores markets-rates with `attributes` as the DynamoDB console would (no check), then: `rules
   * list` shows it valid with `problem` as a warning, and another edit of it is not blocked.
   */
  async function expectStoredWarning(attributes: Record<string, unknown>, problem: string): Promise<void> {
    const documents = sandbox.stack.clients.documents;
    const stored = (await getItem(documents, rulesTable(), 'markets-rates')) ?? {};
    await documents.send(new PutCommand({ TableName: rulesTable().tableName, Item: { ...stored, ...attributes } }));
    const listed = await sandbox.cli(['--json', 'rules', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    const row = listed
      .json<{ ruleId: string; valid: boolean; problem?: string }[]>()
      .find((r) => r.ruleId === 'markets-rates');
    expect(row?.valid).toBe(true);
    expect(row?.problem).toContain(problem);
    const described = await sandbox.cli(['rules', 'update', 'markets-rates', '--description', 'Rates']);
    expect(described.code, described.stderr).toBe(0);
    expect(described.stderr).toContain('stored already, so kept');
  }

  it('a keyword in query syntax: refused where a person writes it, a warning on a stored rule, which still runs and can be edited', async () => {
    const documents = sandbox.stack.clients.documents;
    // Saved in the DynamoDB console before the check existed: the run matches the keyword literally.
    await expectStoredWarning({ keywords: ['rates', '"interest rate"'] }, 'write interest rate without quotes');
    const shown = await sandbox.cli(['rules', 'show', 'markets-rates']);
    expect(shown.stdout).not.toContain('INVALID');
    expect(shown.stdout).toContain('the run matches it as written');

    // A keyword the write adds is refused with the advice, in every write path.
    const [added, created, validated] = await Promise.all([
      sandbox.cli(['rules', 'update', 'markets-rates', '--keywords', 'rates,chips OR memory']),
      sandbox.cli(['rules', 'create', 'wire', '--audience', 'chips-team', '--keywords', 'NOT rumor']),
      sandbox.cli(['rules', 'validate', '-'], {
        input: JSON.stringify({
          ruleId: 'wire',
          audienceId: 'chips-team',
          excludeKeywords: ['semicond*'],
          matchAll: true,
        }),
      }),
    ]);
    expect(added.code).toBe(2);
    expect(added.stderr).toContain(
      'keywords[1]: "chips OR memory": OR joins terms only in a query; write the alternatives as separate keywords ("chips", "memory")',
    );
    expect(created.code).toBe(2);
    expect(created.stderr).toContain('keywords[0]: "NOT rumor": NOT is an operator only in a query');
    expect(validated.code).toBe(2);
    expect(validated.stderr).toContain('excludeKeywords[0]: "semicond*": a keyword has no wildcard');

    // What only looks like syntax is written as it stands.
    const tags = await sandbox.cli([
      'rules',
      'create',
      'wire',
      '--audience',
      'chips-team',
      '--keywords',
      '(속보),(2nd LD),NOT GUILTY,TO BE OR NOT TO BE',
    ]);
    expect(tags.code, tags.stderr).toBe(0);
    expect(await getItem(documents, rulesTable(), 'wire')).toMatchObject({
      keywords: ['(속보)', '(2nd LD)', 'NOT GUILTY', 'TO BE OR NOT TO BE'],
    });
  });

  it('a typed dash in a query where - (NOT) was meant: refused where a person writes it, a warning on a stored rule, which still runs and can be edited', async () => {
    const documents = sandbox.stack.clients.documents;
    // Saved before the check existed: the run reads –rumor as text, as it always did.
    await expectStoredWarning({ query: 'chips \u2013rumor' }, 'write -rumor with an ASCII hyphen-minus for NOT');

    // One the write adds is refused with the ASCII form; a minus sign before a figure is not.
    const [added, created, figure] = await Promise.all([
      sandbox.cli(['rules', 'update', 'markets-rates', '--query', 'chips \u2013rumor \u2014(a OR b)']),
      sandbox.cli(['rules', 'create', 'wire', '--audience', 'chips-team', '--query', '반도체 \u2013삼성']),
      sandbox.cli(['rules', 'validate', '-'], {
        input: JSON.stringify({
          ruleId: 'wire',
          audienceId: 'chips-team',
          query: 'x \u2013$10 \u2212.5% \u2014\u00bd',
        }),
      }),
    ]);
    expect(added.code).toBe(2);
    expect(added.stderr).toContain('write -(a OR b) with an ASCII hyphen-minus for NOT');
    expect(added.stderr).not.toContain('write -rumor');
    expect(created.code).toBe(2);
    expect(created.stderr).toContain('write -삼성 with an ASCII hyphen-minus for NOT');
    expect(figure.code, figure.stderr).toBe(0);
    expect(await getItem(documents, rulesTable(), 'wire')).toBeUndefined();
  });

  it('refuses a description or keyword with a control or text-direction character, and takes tab, line breaks and joiners', async () => {
    const create = (...flags: string[]) =>
      sandbox.cli(['rules', 'create', 'ctl-rule', '--audience', 'chips-team', ...flags]);
    const [description, keyword] = await Promise.all([
      create('--keywords', 'chip', '--description', 'Chips\u001b[2J'),
      create('--keywords', 'chip,wafer\u009bx'),
    ]);
    expect(description.code).toBe(2);
    expect(description.stderr).toContain(
      'description holds a control or text-direction character (U+001B at character 6)',
    );
    expect(keyword.code).toBe(2);
    expect(keyword.stderr).toContain('keywords[1] holds a control or text-direction character (U+009B at character 6)');
    expect(await getItem(sandbox.stack.clients.documents, rulesTable(), 'ctl-rule')).toBeUndefined();
    // Tab and line breaks are text; a zero-width non-joiner is part of Persian words.
    const plain = await create('--keywords', 'می\u200cخواهم', '--description', 'two\nlines');
    expect(plain.code, plain.stderr).toBe(0);
  });

  it('a query word that looks like a mistyped operator (or, ADN) is saved as written, with a warning naming the operator', async () => {
    const created = await sandbox.cli([
      'rules',
      'create',
      'lookalike',
      '--audience',
      'chips-team',
      '--query',
      'semiconductor or chip ADN export',
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain(
      'warning: rule "lookalike": query: "or" (column 15) is read as a word to find in the article, not as an operator; did you mean OR?',
    );
    expect(created.stderr).toContain('"ADN" (column 23) is read as a word to find in the article');
    expect(await getItem(sandbox.stack.clients.documents, rulesTable(), 'lookalike')).toMatchObject({
      query: 'semiconductor or chip ADN export',
    });
    // Said once: an edit that leaves the query as it is says nothing more of it.
    const edited = await sandbox.cli(['rules', 'update', 'lookalike', '--description', 'Chips']);
    expect(edited.code, edited.stderr).toBe(0);
    expect(edited.stderr).not.toContain('did you mean');
  });

  it('put --file refuses a file that would undo an edit made in the DynamoDB console since its version, and takes one made after it', async () => {
    const documents = sandbox.stack.clients.documents;
    const exportRule = async () => {
      const exported = await sandbox.cli(['rules', 'export', 'markets-finance', '--format', 'json']);
      expect(exported.code, exported.stderr).toBe(0);
      const [rule] = (JSON.parse(exported.stdout) as { rules: Record<string, unknown>[] }).rules;
      return rule as Record<string, unknown>;
    };
    const putRule = (rule: Record<string, unknown>) =>
      sandbox.cli(['rules', 'put', '--file', '-'], { input: JSON.stringify({ rules: [rule] }) });
    // Version 2, recorded in the rule's history as the CLI wrote it.
    expect((await sandbox.cli(['rules', 'update', 'markets-finance', '--description', 'Finance desk'])).code).toBe(0);
    // A file without the fingerprint (written by hand, or exported before export wrote one) is
    // judged against the version as its history recorded it.
    const { fingerprint, ...file } = await exportRule();
    expect(fingerprint).toEqual(expect.any(String));
    expect(file.version).toBe(2);
    // Someone edits the item in the DynamoDB console (a string set, as the console writes it); the
    // version stays 2.
    const stored = (await getItem(documents, rulesTable(), 'markets-finance')) ?? {};
    const consoleEdit = { ...stored, excludeKeywords: new Set(['rumor', 'opinion']) };
    await documents.send(new PutCommand({ TableName: rulesTable().tableName, Item: consoleEdit }));

    // The file, made from version 2 before the edit and changed meanwhile, would undo the edit.
    const refused = await putRule({ ...file, urgent: true });
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain(
      'rule "markets-finance": version 2 was edited outside the CLI after it was recorded (excludeKeywords: ["rumor"] → ["opinion","rumor"]), and the file, made from version 2, would undo that edit; export it again with',
    );
    const json = await sandbox.cli(['--json', 'rules', 'put', '--file', '-'], {
      input: JSON.stringify({ rules: [{ ...file, urgent: true }] }),
    });
    expect(json.json<{ error: { code: string } }>().error.code).toBe('conflict');
    expect(await getItem(documents, rulesTable(), 'markets-finance')).toEqual(consoleEdit);

    // Exported again after the edit, the same change goes through and keeps the console's edit.
    const { fingerprint: _, ...again } = await exportRule();
    expect(again.version).toBe(2);
    const taken = await putRule({ ...again, urgent: true });
    expect(taken.code, taken.stderr).toBe(0);
    expect(await getItem(documents, rulesTable(), 'markets-finance')).toMatchObject({
      excludeKeywords: expect.arrayContaining(['opinion', 'rumor']),
      urgent: true,
      version: 3,
    });
  });

  it('put --file reads the history of only the rules it changes (a rule left as stored undoes no edit)', async () => {
    const documents = sandbox.stack.clients.documents;
    // Every rule as stored, with its version and without a fingerprint: each judged by its history.
    const rules = (await storedRules())
      .filter((rule) => rule.ruleId !== 'typo-rule')
      .map((rule) =>
        Object.fromEntries(
          Object.entries(rule).map(([name, value]) => [name, value instanceof Set ? [...value] : value]),
        ),
      );
    const file = sandbox.file(
      'rules.json',
      JSON.stringify({ rules: rules.map((rule) => (rule.ruleId === 'quakes' ? { ...rule, urgent: false } : rule)) }),
    );
    const historyReads: string[] = [];
    const put = await cliInProcess(sandbox, ['rules', 'put', '--file', file], (command) => {
      const partition = command instanceof QueryCommand ? command.input.ExpressionAttributeValues?.[':pk'] : undefined;
      if (typeof partition === 'string' && partition.startsWith('rule-history#')) historyReads.push(partition);
    });
    expect(put.code, put.output).toBe(0);
    expect(put.output).toContain('updated quakes: version 1 → 2');
    // The changed rule's history is read (and trimmed after the write); no other rule's is.
    expect(new Set(historyReads)).toEqual(new Set(['rule-history#quakes']));
    expect(await getItem(documents, rulesTable(), 'quakes')).toMatchObject({ urgent: false, version: 2 });
  });

  it('put --file judges a file by the fingerprint export wrote: any change since is a conflict, none since passes', async () => {
    const documents = sandbox.stack.clients.documents;
    const exportRule = async () => {
      const exported = await sandbox.cli(['rules', 'export', 'markets-finance', '--format', 'json']);
      expect(exported.code, exported.stderr).toBe(0);
      return (JSON.parse(exported.stdout) as { rules: Record<string, unknown>[] }).rules[0] as Record<string, unknown>;
    };
    const putRule = (rule: Record<string, unknown>) =>
      sandbox.cli(['--json', 'rules', 'put', '--file', '-'], { input: JSON.stringify({ rules: [rule] }) });
    const consoleEdit = async (change: Record<string, unknown>) => {
      const stored = (await getItem(documents, rulesTable(), 'markets-finance')) ?? {};
      await documents.send(new PutCommand({ TableName: rulesTable().tableName, Item: { ...stored, ...change } }));
    };
    // Version 2, recorded with description x and keywords as a list.
    const v2 = await sandbox.cli([
      'rules',
      'update',
      'markets-finance',
      '--description',
      'x',
      '--keywords',
      'bank,loan',
    ]);
    expect(v2.code, v2.stderr).toBe(0);

    // (a) Edited in the console, exported after, and the same attribute changed again in the file: written.
    await consoleEdit({ excludeKeywords: new Set(['rumor', 'opinion']) });
    const afterEdit = await exportRule();
    const changedAgain = await putRule({ ...afterEdit, excludeKeywords: ['rumor', 'opinion', 'gossip'] });
    expect(changedAgain.code, changedAgain.stderr).toBe(0);
    expect(await getItem(documents, rulesTable(), 'markets-finance')).toMatchObject({
      excludeKeywords: ['rumor', 'opinion', 'gossip'],
      version: 3,
    });

    // (b) The console rewrites a list as a string set of the same values: no change to the rule.
    const beforeRewrite = await exportRule();
    await consoleEdit({ keywords: new Set(['loan', 'bank']) });
    const rewritten = await putRule({ ...beforeRewrite, urgent: true });
    expect(rewritten.code, rewritten.stderr).toBe(0);
    expect(await getItem(documents, rulesTable(), 'markets-finance')).toMatchObject({ urgent: true, version: 4 });

    // (c) Description x, the console sets y, the file is exported (y), the console sets x back:
    // the file would write y over x, so it is a conflict, though x is what history recorded.
    await consoleEdit({ description: 'y' });
    const withY = await exportRule();
    expect(withY.description).toBe('y');
    await consoleEdit({ description: 'x' });
    const undoing = await putRule({ ...withY, statuses: ['published'] });
    expect(undoing.code, undoing.stderr).toBe(1);
    expect(undoing.json<{ error: { code: string } }>().error.code).toBe('conflict');
    expect(undoing.stderr).toContain(
      'rule "markets-finance": the stored rule changed since the export, or the file\'s fingerprint was edited',
    );
    expect(await getItem(documents, rulesTable(), 'markets-finance')).toMatchObject({ description: 'x', version: 4 });
    // Exported again, the change goes through; the fingerprint is never stored.
    const fresh = await exportRule();
    const taken = await putRule({ ...fresh, statuses: ['published'] });
    expect(taken.code, taken.stderr).toBe(0);
    const stored = await getItem(documents, rulesTable(), 'markets-finance');
    expect(stored).toMatchObject({ description: 'x', statuses: ['published'], version: 5 });
    expect(stored).not.toHaveProperty('fingerprint');
  });

  it('a hand-edited fingerprint: one of the right form is a conflict that does not claim the rule was edited; a malformed one says so and what to do', async () => {
    const exported = await sandbox.cli(['rules', 'export', 'markets-finance', '--format', 'json']);
    expect(exported.code, exported.stderr).toBe(0);
    const rule = (JSON.parse(exported.stdout) as { rules: Record<string, unknown>[] }).rules[0] ?? {};
    expect(rule.fingerprint).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const putRule = (fingerprint: string) =>
      sandbox.cli(['--json', 'rules', 'put', '--file', '-'], {
        input: JSON.stringify({ rules: [{ ...rule, fingerprint, description: 'edited' }] }),
      });
    const [wrong, malformed] = await Promise.all([putRule('A'.repeat(22)), putRule('abc')]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("the stored rule changed since the export, or the file's fingerprint was edited");
    expect(wrong.stderr).not.toContain('edited in the DynamoDB console');
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('fingerprint "abc" is malformed');
    expect(malformed.stderr).toContain('remove the fingerprint line to put the file by its version');
    expect(await getItem(sandbox.stack.clients.documents, rulesTable(), 'markets-finance')).not.toMatchObject({
      description: 'edited',
    });
  });

  it('show --json carries the fingerprint export writes: piped into put --file, a console edit since is a conflict', async () => {
    const documents = sandbox.stack.clients.documents;
    const shown = await sandbox.cli(['--json', 'rules', 'show', 'markets-finance']);
    expect(shown.code, shown.stderr).toBe(0);
    const file = shown.json<Record<string, unknown>>();
    const exported = await sandbox.cli(['rules', 'export', 'markets-finance', '--format', 'json']);
    expect(file.fingerprint).toBe(
      (JSON.parse(exported.stdout) as { rules: { fingerprint: string }[] }).rules[0]?.fingerprint,
    );
    // Edited in the DynamoDB console (version kept), then the shown file is put back with a change.
    const stored = (await getItem(documents, rulesTable(), 'markets-finance')) ?? {};
    await documents.send(
      new PutCommand({ TableName: rulesTable().tableName, Item: { ...stored, description: 'console' } }),
    );
    const put = await sandbox.cli(['--json', 'rules', 'put', '--file', '-'], {
      input: JSON.stringify({ ...file, urgent: true }),
    });
    expect(put.code, put.stderr).toBe(1);
    expect(put.stderr).toContain("the stored rule changed since the export, or the file's fingerprint was edited");
    expect(await getItem(documents, rulesTable(), 'markets-finance')).toMatchObject({ description: 'console' });
  });

  it('a fingerprint stored on the rule item (an export pasted into the DynamoDB console) blocks neither update nor enable, and is not written back', async () => {
    const documents = sandbox.stack.clients.documents;
    const exported = await sandbox.cli(['rules', 'export', 'markets-finance', '--format', 'json']);
    expect(exported.code, exported.stderr).toBe(0);
    const pasted = (JSON.parse(exported.stdout) as { rules: Record<string, unknown>[] }).rules[0] ?? {};
    // Pasted, then edited there: the pasted fingerprint is no longer the stored content's.
    await documents.send(
      new PutCommand({
        TableName: rulesTable().tableName,
        Item: { ...pasted, enabled: false, description: 'pasted' },
      }),
    );
    const enabled = await sandbox.cli(['rules', 'enable', 'markets-finance']);
    expect(enabled.code, enabled.stderr).toBe(0);
    expect(enabled.stderr).not.toContain('fingerprint');
    const updated = await sandbox.cli(['rules', 'update', 'markets-finance', '--description', 'edited']);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stderr).not.toContain('fingerprint');
    const stored = await getItem(documents, rulesTable(), 'markets-finance');
    expect(stored).toMatchObject({ description: 'edited', enabled: true });
    expect(stored).not.toHaveProperty('fingerprint');
  });

  it('a put guarded by content fails when the item was edited in the DynamoDB console after the read, version kept', async () => {
    const documents = sandbox.stack.clients.documents;
    const read = await getItem(documents, rulesTable(), 'markets-finance');
    // Unedited, the stored lists and string set compare equal: the guarded write lands.
    const [written] = await writeItems(
      documents,
      rulesTable(),
      {
        puts: [{ id: 'markets-finance', item: { audienceId: 'markets-desk', keywords: ['bank'] }, previous: read }],
      },
      { actor: 'racer', now: Date.now() },
    );
    expect(written?.version).toBe(2);
    const second = await getItem(documents, rulesTable(), 'markets-finance');
    // Then someone edits it in the DynamoDB console after our read, keeping the version...
    await documents.send(
      new PutCommand({ TableName: rulesTable().tableName, Item: { ...second, keywords: ['bank', 'lender'] } }),
    );
    const edited = await getItem(documents, rulesTable(), 'markets-finance');
    // ...so the write based on the read must not land.
    await expect(
      writeItems(
        documents,
        rulesTable(),
        {
          puts: [
            {
              id: 'markets-finance',
              item: { audienceId: 'markets-desk', keywords: ['loan'] },
              previous: second,
            },
          ],
        },
        { actor: 'racer', now: Date.now() },
      ),
    ).rejects.toThrow(ConcurrentChangeError);
    expect(await getItem(documents, rulesTable(), 'markets-finance')).toEqual(edited);
  });

  it('rules update refuses when the rule is edited in the DynamoDB console between its read and its write, version kept, and keeps that edit', async () => {
    const documents = sandbox.stack.clients.documents;
    const before = await getItem(documents, rulesTable(), 'markets-finance');
    // The update keeps the keywords it read: written over the edit, it would take 'lender' out again.
    const updated = await cliWithEditBeforeWrite(
      sandbox,
      { table: 'rules', id: 'markets-finance', name: 'keywords', value: ['bank', 'lender'] },
      ['rules', 'update', 'markets-finance', '--description', 'edited'],
    );
    expect(updated.edited).toBe(true);
    expect(updated.code, updated.output).toBe(1);
    expect(updated.output).toContain('rule markets-finance changed since it was read; nothing');
    expect(await getItem(documents, rulesTable(), 'markets-finance')).toEqual({
      ...before,
      keywords: ['bank', 'lender'],
    });
  });

  it('rules disable refuses when the rule is edited in the DynamoDB console between its read and its write, and keeps that edit out of its own history entry', async () => {
    const documents = sandbox.stack.clients.documents;
    const before = await getItem(documents, rulesTable(), 'markets-finance');
    const disabled = await cliWithEditBeforeWrite(
      sandbox,
      { table: 'rules', id: 'markets-finance', name: 'keywords', value: ['bank', 'lender'] },
      ['rules', 'disable', 'markets-finance'],
    );
    expect(disabled.edited).toBe(true);
    expect(disabled.code, disabled.output).toBe(1);
    expect(disabled.output).toContain('rule markets-finance changed since it was read; nothing was written');
    // Written, the history would say the disable set the keywords: its entry is the rule it read with enabled set.
    expect(await getItem(documents, rulesTable(), 'markets-finance')).toEqual({
      ...before,
      keywords: ['bank', 'lender'],
    });
    const again = await sandbox.cli(['rules', 'disable', 'markets-finance']);
    expect(again.code, again.stderr).toBe(0);
    expect(await getItem(documents, rulesTable(), 'markets-finance')).toMatchObject({
      keywords: ['bank', 'lender'],
      enabled: false,
    });
  });

  it('rules disable still writes a rule holding an attribute no reader can read (compared by its type)', async () => {
    await setByHand(sandbox, 'rules', 'markets-rates', 'description', { toString: 'typed by hand' });
    const disabled = await sandbox.cli(['rules', 'disable', 'markets-rates']);
    expect(disabled.code, disabled.stderr).toBe(0);
    const stored = (await storedRules()).find((rule) => rule.ruleId === 'markets-rates');
    expect(stored?.enabled).toBe(false);
  });

  it('any put made from a read is guarded by content without being asked: an edit by hand after the read refuses it, a NULL saved by hand does not', async () => {
    const documents = sandbox.stack.clients.documents;
    const audiences = { tableName: sandbox.descriptor.names.audiencesTable, keyName: 'audienceId', noun: 'audience' };
    for (const [table, id] of [
      [rulesTable(), 'markets-rates'],
      [audiences, 'chips-team'],
    ] as const) {
      // A NULL written by hand is compared by its type (DynamoDB's = does not take NULL).
      await setByHand(sandbox, table === audiences ? 'audiences' : 'rules', id, 'notes', null);
      const read = await getItem(documents, table, id);
      expect(read?.notes).toBeNull();
      const [written] = await writeItems(
        documents,
        table,
        { puts: [{ id, item: { ...read, notes: 'saved' }, previous: read }] },
        { actor: 'racer', now: Date.now() },
      );
      expect(written?.action).toBe('updated');
      const second = await getItem(documents, table, id);
      // An attribute added by hand after the read (the version kept) is an edit the write would undo.
      const added = table === audiences ? 'dailyBudget' : 'description';
      await setByHand(
        sandbox,
        table === audiences ? 'audiences' : 'rules',
        id,
        added,
        table === audiences ? 7 : 'by hand',
      );
      const edited = await getItem(documents, table, id);
      await expect(
        writeItems(
          documents,
          table,
          { puts: [{ id, item: { ...second, notes: 'again' }, previous: second }] },
          { actor: 'racer', now: Date.now() },
        ),
      ).rejects.toThrow(ConcurrentChangeError);
      expect(await getItem(documents, table, id)).toEqual(edited);
    }
  });

  it('rules restore refuses when the rule is edited by hand between its read and its write, and keeps that edit', async () => {
    const documents = sandbox.stack.clients.documents;
    expect((await sandbox.cli(['rules', 'update', 'markets-finance', '--description', 'v2'])).code).toBe(0);
    const restored = await cliWithEditBeforeWrite(
      sandbox,
      { table: 'rules', id: 'markets-finance', name: 'keywords', value: ['bank', 'lender'] },
      ['rules', 'restore', 'markets-finance', '--version', '1', '--yes'],
    );
    expect(restored.edited).toBe(true);
    expect(restored.code, restored.output).toBe(1);
    expect(restored.output).toContain('changed since it was read');
    expect(await getItem(documents, rulesTable(), 'markets-finance')).toMatchObject({
      description: 'v2',
      keywords: ['bank', 'lender'],
      version: 2,
    });
  });

  it('a rule with an attribute no reader can read, or a version JavaScript cannot hold exactly, is repaired by a write, not refused for ever', async () => {
    const documents = sandbox.stack.clients.documents;
    // A map with a key named like an Object.prototype member, typed in the DynamoDB console:
    // the CLI cannot read the attribute, and put --file is how the rule is repaired.
    await setByHand(sandbox, 'rules', 'markets-rates', 'description', { toString: 'typed by hand' });
    const stored = (await storedRules()).find((rule) => rule.ruleId === 'markets-rates') ?? {};
    const { version: _version, updatedAt: _at, updatedBy: _by, ...content } = stored;
    const repaired = await sandbox.cli(['rules', 'put', '--file', '-'], {
      input: JSON.stringify({ rules: [{ ...content, description: 'Rates desk' }] }),
    });
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(await getItem(documents, rulesTable(), 'markets-rates')).toMatchObject({ description: 'Rates desk' });

    // A version saved by hand as 2.00000000000000000001 reads as 2.
    await setByHand(sandbox, 'rules', 'partner-elections', 'version', NumberValue.from('2.00000000000000000001'));
    const updated = await sandbox.cli(['rules', 'update', 'partner-elections', '--description', 'Elections']);
    expect(updated.code, updated.stderr).toBe(0);
    expect(await getItem(documents, rulesTable(), 'partner-elections')).toMatchObject({
      description: 'Elections',
      version: 3,
    });
  });

  it('writes 50 rules and their history in one transaction, and names what a larger file wrote before a conflict stopped it', async () => {
    const { documents } = sandbox.stack.clients;
    const table = {
      ...rulesTable(),
      history: new DynamoRuleHistory({ documents, tableName: sandbox.descriptor.names.stateTable }),
    };
    const audit = { actor: 'bulk', now: Date.now() };
    const put = (prefix: string) => (index: number) => ({
      id: `${prefix}-${String(index).padStart(3, '0')}`,
      item: { audienceId: 'partner-feed', keywords: [`k${index}`] },
      previous: undefined,
    });
    const range = (count: number) => Array.from({ length: count }, (_, index) => index);
    // Someone else creates the 50th rule meanwhile: none of the 50 lands.
    await writeItems(documents, table, { puts: [put('bulk')(49)] }, audit);
    await expect(writeItems(documents, table, { puts: range(50).map(put('bulk')) }, audit)).rejects.toThrow(
      /rule bulk-049 changed since it was read; nothing of this batch was written\. /,
    );
    expect(await getItem(documents, table, 'bulk-000')).toBeUndefined();
    // 60: the first transaction holds 50; the 56th conflicts in the second, which names the 50 written.
    await writeItems(documents, table, { puts: [put('wide')(55)] }, audit);
    const error = await writeItems(documents, table, { puts: range(60).map(put('wide')) }, audit).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ConcurrentChangeError);
    expect(String((error as Error).message)).toContain(
      `(the first 50 were written before, in earlier transactions: ${range(50)
        .map((index) => put('wide')(index).id)
        .join(', ')})`,
    );
    expect(await getItem(documents, table, 'wide-049')).toBeDefined();
    expect(await getItem(documents, table, 'wide-050')).toBeUndefined();
  });

  it('keeps each transaction under DynamoDB’s 4 MB, and names what was written when a later one fails for any reason', async () => {
    const { documents } = sandbox.stack.clients;
    const table = {
      ...rulesTable(),
      history: new DynamoRuleHistory({ documents, tableName: sandbox.descriptor.names.stateTable }),
    };
    // 40 rules of about 60 KB: 4.8 MB with their history copies, more than one transaction holds.
    const puts = Array.from({ length: 40 }, (_, index) => ({
      id: `big-${String(index).padStart(2, '0')}`,
      item: { audienceId: 'partner-feed', keywords: Array.from({ length: 60 }, (_, k) => `${'w'.repeat(995)}${k}`) },
      previous: undefined,
    }));
    const trimmed: string[] = [];
    const trim = table.history.trim.bind(table.history);
    table.history.trim = (ruleId) => {
      trimmed.push(ruleId);
      return trim(ruleId);
    };
    const sent: number[] = [];
    let failSecond = true;
    // DynamoDB's throttling cannot be asked of moto: the second transaction is refused here, as DynamoDB would.
    const recording = new Proxy(documents, {
      get(target, property, receiver) {
        if (property !== 'send') return Reflect.get(target, property, receiver);
        return async (command: { input: { TransactItems?: { Put?: { Item?: Record<string, unknown> } }[] } }) => {
          const items = command.input.TransactItems;
          if (items !== undefined) {
            sent.push(items.reduce((sum, entry) => sum + Buffer.byteLength(JSON.stringify(entry.Put?.Item ?? {})), 0));
            if (sent.length === 2 && failSecond) {
              failSecond = false;
              throw Object.assign(new Error('Throughput exceeds the current capacity of your table'), {
                name: 'ProvisionedThroughputExceededException',
                $fault: 'client',
              });
            }
          }
          return target.send(command as never);
        };
      },
    });
    const error = await writeItems(recording, table, { puts }, { actor: 'bulk', now: Date.now() }).catch(
      (caught: unknown) => caught,
    );
    expect(sent.length).toBe(2);
    expect(sent[0]).toBeLessThan(4 * 1024 * 1024);
    expect(String((error as Error).message)).toMatch(
      /^could not write rules big-\d\d to big-39: .*Throughput exceeds.*\(the first \d+ were written before/,
    );
    const first = Number(/the first (\d+) were written/.exec(String((error as Error).message))?.[1]);
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(40);
    expect(await getItem(documents, table, puts[first - 1]?.id ?? '')).toBeDefined();
    expect(await getItem(documents, table, puts[first]?.id ?? '')).toBeUndefined();
    // The rules written have their history trimmed (to the newest versions kept), as after any write.
    expect(trimmed).toEqual(puts.slice(0, first).map((put) => put.id));
  });
});

describe('rules with a query', () => {
  const badQueries = `rules:
  - ruleId: chips-query
    audienceId: chips-team
    query: (semiconductor OR chip
  - ruleId: chips-ko
    audienceId: chips-team
    query: "title:(반도체 OR 메모리 수출"
  - ruleId: only-not
    audienceId: chips-team
    query: -rumor
`;

  it('refuses a query that does not parse, with its line, column and a caret under it; --json carries the column', async () => {
    const before = await storedRules();
    const path = sandbox.file('queries.yaml', badQueries);
    const [validate, put, create, json, flags] = await Promise.all([
      sandbox.cli(['rules', 'validate', path]),
      sandbox.cli(['rules', 'put', '--file', path]),
      sandbox.cli(['rules', 'create', '--file', path]),
      sandbox.cli(['--json', 'rules', 'validate', path]),
      sandbox.cli(['rules', 'put', 'flag-rule', '--audience', 'chips-team', '--query', '(semiconductor OR chip']),
    ]);
    for (const result of [validate, put, create]) {
      expect(result.code, result.stderr).toBe(2);
      // The query echoed under the message, the caret under column 23 (just after its end).
      expect(result.stderr).toContain(
        `queries.yaml:4: rule "chips-query": query: expected ')' at column 23 to close the '(' at column 1\n    (semiconductor OR chip\n${' '.repeat(4 + 22)}^\n`,
      );
      // Column 21 of a query whose Hangul takes two columns each: the caret at display column 28.
      expect(result.stderr).toContain(
        `queries.yaml:7: rule "chips-ko": query: expected ')' at column 21 to close the '(' at column 7\n    title:(반도체 OR 메모리 수출\n${' '.repeat(4 + 28)}^\n`,
      );
      expect(result.stderr).toContain('queries.yaml:10: rule "only-not": query: the query has no term every match');
    }
    expect(json.code).toBe(2);
    const failure = json.json<{ problems: { message: string; column?: number; expected?: string }[] }>();
    expect(failure.problems).toEqual(
      expect.arrayContaining([
        {
          message: `${path}:4: rule "chips-query": query: expected ')' at column 23 to close the '(' at column 1`,
          column: 23,
          expected: "')'",
        },
        {
          message: `${path}:7: rule "chips-ko": query: expected ')' at column 21 to close the '(' at column 7`,
          column: 21,
          expected: "')'",
        },
      ]),
    );
    expect(flags.code).toBe(2);
    expect(flags.stderr).toContain(
      `command line: rule "flag-rule": query: expected ')' at column 23 to close the '(' at column 1\n    (semiconductor OR chip\n`,
    );
    expect(await storedRules()).toEqual(before);
  });

  it('writes a query from flags, lists it, changes it with update and removes it with --clear', async () => {
    const create = await sandbox.cli([
      'rules',
      'create',
      'chips-query',
      '--audience',
      'chips-team',
      '--keywords',
      'wafer',
      '--query',
      'semiconductor NEAR/3 export*',
    ]);
    expect(create.code, create.stderr).toBe(0);
    const stored = () => getItem(sandbox.stack.clients.documents, rulesTable(), 'chips-query');
    expect(await stored()).toMatchObject({ keywords: ['wafer'], query: 'semiconductor NEAR/3 export*' });

    const list = await sandbox.cli(['rules', 'list', '--audience', 'chips-team']);
    expect(list.stdout).toContain('keywords wafer; query semiconductor NEAR/3 export*');

    const update = await sandbox.cli(['rules', 'update', 'chips-query', '--query', '(반도체 OR "memory chip") -rumor']);
    expect(update.code, update.stderr).toBe(0);
    expect(update.stdout).toContain('query: "semiconductor NEAR/3 export*" → "(반도체 OR \\"memory chip\\") -rumor"');
    expect(await stored()).toMatchObject({ keywords: ['wafer'], query: '(반도체 OR "memory chip") -rumor' });

    const clear = await sandbox.cli(['rules', 'update', 'chips-query', '--clear', 'query']);
    expect(clear.code, clear.stderr).toBe(0);
    expect(await stored()).not.toHaveProperty('query');

    // A query alone is a criterion: a rule needs nothing else.
    const alone = await sandbox.cli(['rules', 'put', 'ko-only', '--audience', 'chips-team', '--query', '반도체 수출']);
    expect(alone.code, alone.stderr).toBe(0);
  });
});
