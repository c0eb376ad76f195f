/**
 * DynamoRuleSource against moto server: rule and audience items written as an ops person writes
 * them in the console's DynamoDB JSON view (lists, string sets, numbers, and the usual mistakes).
 * Good items load, every bad one is skipped with one warning naming table, key and reason.
 */
import { type AttributeValue, BatchWriteItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoRuleSource, RuleSourceError, scanItems } from '#aws/dynamo-rule-source';
import type { RuleSet } from '#core/model';
import type { Log } from '#core/ports';
import { createTables, tableNamesFor } from '#sandbox/tables';
import { awsClients, uniquePrefix } from '#test/aws';

type Item = Record<string, AttributeValue>;

const topic = (name: string): AttributeValue => ({ S: `arn:aws:sns:eu-central-1:123456789012:${name}` });

const audienceItems: Item[] = [
  {
    audienceId: { S: 'desk' },
    name: { S: 'News desk' },
    topicArn: topic('desk'),
    timeZone: { S: 'Asia/Seoul' },
    deliveryMode: { S: 'immediate' },
    digestTimes: { L: [{ S: '08:00' }, { S: '18:30' }] },
    quietHours: { M: { start: { S: '22:00' }, end: { S: '07:00' } } },
    urgentCategories: { SS: ['001*', 'disaster'] },
    dailyBudget: { N: '50' },
    smsMaxSegments: { N: '2' },
  },
  // Disabled: valid, but its rules do not run.
  { audienceId: { S: 'markets' }, topicArn: topic('markets'), enabled: { BOOL: false } },
  // Typo'd attribute name: topicARN.
  { audienceId: { S: 'typo-topic' }, topicARN: topic('typo-topic') },
  // A time zone that does not exist.
  { audienceId: { S: 'bad-zone' }, topicArn: topic('bad-zone'), timeZone: { S: 'Mars/Olympus_Mons' } },
  // A number the document client cannot even convert (it would fail the whole Scan page).
  { audienceId: { S: 'huge-budget' }, topicArn: topic('huge-budget'), dailyBudget: { N: '12345678901234567890.5' } },
];

const ruleItems: Item[] = [
  {
    ruleId: { S: 'economy' },
    audienceId: { S: 'desk' },
    description: { S: 'Economy and rates' },
    categories: { L: [{ S: '002*' }, { S: 'Economy' }] },
    keywords: { SS: ['interest rate', 'inflation'] },
    excludeKeywords: { L: [{ S: 'sponsored' }] },
    urgent: { BOOL: true },
    version: { N: '3' },
  },
  { ruleId: { S: 'everything' }, audienceId: { S: 'desk' }, matchAll: { BOOL: true } },
  { ruleId: { S: 'chips-query' }, audienceId: { S: 'desk' }, query: { S: '(반도체 OR 메모리) 수출 -삼성' } },
  { ruleId: { S: 'switched-off' }, audienceId: { S: 'desk' }, keywords: { SS: ['x'] }, enabled: { BOOL: false } },
  { ruleId: { S: 'for-disabled-audience' }, audienceId: { S: 'markets' }, keywords: { SS: ['stocks'] } },
  // The mistakes.
  { ruleId: { S: 'typo-attribute' }, audienceId: { S: 'desk' }, keyword: { SS: ['election'] } },
  { ruleId: { S: 'wrong-type' }, audienceId: { S: 'desk' }, keywords: { SS: ['vote'] }, enabled: { S: 'yes' } },
  { ruleId: { S: 'numbers-as-keywords' }, audienceId: { S: 'desk' }, keywords: { NS: ['1', '2'] } },
  { ruleId: { S: 'no-audience' }, keywords: { SS: ['budget'] } },
  { ruleId: { S: 'unknown-audience' }, audienceId: { S: 'ghost' }, keywords: { SS: ['budget'] } },
  { ruleId: { S: 'audience-with-bad-zone' }, audienceId: { S: 'bad-zone' }, keywords: { SS: ['budget'] } },
  { ruleId: { S: 'matches-everything-by-accident' }, audienceId: { S: 'desk' } },
  { ruleId: { S: 'star-in-the-middle' }, audienceId: { S: 'desk' }, categories: { L: [{ S: '00*2' }] } },
  // Issue 12: a query typed into the console that does not parse, and one that only excludes.
  { ruleId: { S: 'unclosed-query' }, audienceId: { S: 'desk' }, query: { S: 'samsung AND (chips OR memory' } },
  { ruleId: { S: 'only-excludes-query' }, audienceId: { S: 'desk' }, query: { S: 'NOT sports' } },
];

interface Warning {
  readonly message: string;
  readonly extra: Record<string, unknown>;
}

function recordingLog(): Log & { readonly warnings: Warning[]; readonly errors: Warning[] } {
  const warnings: Warning[] = [];
  const errors: Warning[] = [];
  return {
    warnings,
    errors,
    debug() {},
    info() {},
    warn: (message, extra = {}) => warnings.push({ message, extra }),
    error: (message, extra = {}) => errors.push({ message, extra }),
  };
}

async function putAll(dynamo: DynamoDBClient, table: string, items: readonly Item[]): Promise<void> {
  for (let start = 0; start < items.length; start += 25) {
    const batch = items.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } }));
    await dynamo.send(new BatchWriteItemCommand({ RequestItems: { [table]: batch } }));
  }
}

describe('DynamoRuleSource', () => {
  const clients = awsClients();
  const names = tableNamesFor(uniquePrefix());
  const log = recordingLog();
  let ruleSet: RuleSet;

  beforeAll(async () => {
    await createTables(clients.dynamo, names);
    await putAll(clients.dynamo, names.audiences, audienceItems);
    await putAll(clients.dynamo, names.rules, ruleItems);
    const source = new DynamoRuleSource({
      documents: clients.documents,
      rulesTableName: names.rules,
      audiencesTableName: names.audiences,
      log,
    });
    ruleSet = await source.load();
  });

  const rejection = (key: string) => ruleSet.rejected.find((rejected) => rejected.key === key);

  it('loads the good audiences with lists, string sets, maps and numbers converted', () => {
    expect(ruleSet.audiences.map((audience) => audience.audienceId).sort()).toEqual(['desk', 'markets']);
    const desk = ruleSet.audiences.find((audience) => audience.audienceId === 'desk');
    expect(desk).toMatchObject({
      name: 'News desk',
      timeZone: 'Asia/Seoul',
      digestTimes: ['08:00', '18:30'],
      quietHours: { start: '22:00', end: '07:00' },
      dailyBudget: 50,
      smsMaxSegments: 2,
      enabled: true,
    });
    expect([...(desk?.urgentCategories ?? [])].sort()).toEqual(['001*', 'disaster']);
  });

  it('loads the enabled rules of enabled audiences, with defaults applied', () => {
    expect(ruleSet.rules.map((rule) => rule.ruleId).sort()).toEqual(['chips-query', 'economy', 'everything']);
    expect(ruleSet.rules.find((rule) => rule.ruleId === 'chips-query')?.query).toBe('(반도체 OR 메모리) 수출 -삼성');
    const economy = ruleSet.rules.find((rule) => rule.ruleId === 'economy');
    expect(economy).toMatchObject({
      audienceId: 'desk',
      categories: ['002*', 'Economy'],
      excludeKeywords: ['sponsored'],
      urgent: true,
      enabled: true,
      matchAll: false,
      version: 3,
    });
    expect([...(economy?.keywords ?? [])].sort()).toEqual(['inflation', 'interest rate']);
  });

  it('skips disabled rules and rules of disabled audiences without calling them errors', () => {
    expect(rejection('switched-off')).toBeUndefined();
    expect(rejection('for-disabled-audience')).toBeUndefined();
    expect(ruleSet.rules.some((rule) => rule.ruleId === 'switched-off' || rule.audienceId === 'markets')).toBe(false);
  });

  it('rejects each bad item with its key and a reason an ops person can act on', () => {
    expect(rejection('typo-topic')).toMatchObject({ table: 'audiences', reason: expect.stringContaining('topicARN') });
    expect(rejection('typo-topic')?.reason).toMatch(/topicArn/);
    expect(rejection('bad-zone')?.reason).toMatch(/^timeZone: must be an IANA time zone/);
    expect(rejection('huge-budget')?.reason).toMatch(/^dailyBudget:/);
    expect(rejection('typo-attribute')).toMatchObject({ table: 'rules', reason: expect.stringContaining('"keyword"') });
    expect(rejection('wrong-type')?.reason).toBe('enabled must be a boolean (BOOL)');
    expect(rejection('numbers-as-keywords')?.reason).toMatch(/^keywords\[0\]:/);
    expect(rejection('no-audience')?.reason).toMatch(/^audienceId is required/);
    expect(rejection('unknown-audience')?.reason).toMatch(/no valid audience "ghost"/);
    expect(rejection('audience-with-bad-zone')?.reason).toMatch(/audience "bad-zone" is invalid \(timeZone: /);
    expect(rejection('matches-everything-by-accident')?.reason).toMatch(/matchAll/);
    expect(rejection('star-in-the-middle')?.reason).toMatch(
      /^categories\[0\]: "00\*2": '\*' is only allowed at the end/,
    );
    expect(rejection('unclosed-query')?.reason).toBe("query: expected ')' at column 29 to close the '(' at column 13");
    expect(rejection('only-excludes-query')?.reason).toMatch(
      /^query: the query has no term every match must contain .*set matchAll to true$/,
    );
    expect(ruleSet.rejected.map((rejected) => `${rejected.table}:${rejected.key}`).sort()).toEqual([
      'audiences:bad-zone',
      'audiences:huge-budget',
      'audiences:typo-topic',
      'rules:audience-with-bad-zone',
      'rules:matches-everything-by-accident',
      'rules:no-audience',
      'rules:numbers-as-keywords',
      'rules:only-excludes-query',
      'rules:star-in-the-middle',
      'rules:typo-attribute',
      'rules:unclosed-query',
      'rules:unknown-audience',
      'rules:wrong-type',
    ]);
  });

  it('logs every rejected item exactly once as a warning naming table, physical table, key and reason', () => {
    expect(log.errors).toEqual([]);
    expect(log.warnings).toHaveLength(ruleSet.rejected.length);
    for (const rejected of ruleSet.rejected) {
      const tableName = rejected.table === 'rules' ? names.rules : names.audiences;
      expect(log.warnings.filter((warning) => warning.extra.key === rejected.key)).toEqual([
        {
          message: 'skipped an invalid item',
          extra: { table: rejected.table, tableName, key: rejected.key, reason: rejected.reason },
        },
      ]);
    }
  });
});

describe('DynamoRuleSource with hostile hand-written items (issue 10, item 4)', () => {
  /** JSON.parse keeps `__proto__` an own key, as the console's JSON view and `put-item` send it. */
  const raw = (json: string): Item => JSON.parse(json) as Item;
  const good: Item = { ruleId: { S: 'good' }, audienceId: { S: 'desk' }, keywords: { SS: ['rates'] } };
  const hostileRules = [
    raw('{"ruleId":{"S":"proto"},"audienceId":{"S":"desk"},"keywords":{"SS":["a"]},"__proto__":{"S":"x"}}'),
    raw(
      '{"ruleId":{"S":"proto-map"},"audienceId":{"S":"desk"},"keywords":{"SS":["a"]},"__proto__":{"M":{"polluted":{"BOOL":true}}}}',
    ),
    raw(
      '{"ruleId":{"S":"ctor"},"audienceId":{"S":"desk"},"keywords":{"SS":["a"]},"constructor":{"M":{"prototype":{"M":{"polluted":{"BOOL":true}}}}}}',
    ),
    raw('{"ruleId":{"S":"to-string"},"audienceId":{"S":"desk"},"keywords":{"SS":["a"]},"toString":{"S":"boom"}}'),
    raw('{"ruleId":{"S":"nested"},"audienceId":{"S":"desk"},"keywords":{"L":[{"M":{"__proto__":{"S":"x"}}}]}}'),
    { ruleId: { S: 'deep' }, audienceId: { S: 'desk' }, notes: nested(40) },
    { ruleId: { S: 'binary' }, audienceId: { S: 'desk' }, keywords: { BS: [new Uint8Array([1, 2])] } },
    { ruleId: { S: 'null' }, audienceId: { S: 'desk' }, keywords: { NULL: true } },
    { ruleId: { S: 'huge-number' }, audienceId: { S: 'desk' }, keywords: { SS: ['a'] }, version: { N: '1e125' } },
  ];

  function nested(depth: number): AttributeValue {
    let value: AttributeValue = { S: 'bottom' };
    for (let level = 0; level < depth; level++) value = { L: [value] };
    return value;
  }

  it('skips each hostile item with its key and reason, loads the good one, and pollutes nothing', async () => {
    const clients = awsClients();
    const names = tableNamesFor(uniquePrefix());
    await createTables(clients.dynamo, names);
    await putAll(clients.dynamo, names.audiences, [
      { audienceId: { S: 'desk' }, topicArn: topic('desk') },
      raw(
        '{"audienceId":{"S":"proto-audience"},"topicArn":{"S":"arn:aws:sns:us-east-1:123456789012:x"},"__proto__":{"M":{"polluted":{"BOOL":true}}}}',
      ),
    ]);
    await putAll(clients.dynamo, names.rules, [good, ...hostileRules]);
    const log = recordingLog();
    const source = new DynamoRuleSource({
      documents: clients.documents,
      rulesTableName: names.rules,
      audiencesTableName: names.audiences,
      log,
    });

    const ruleSet = await source.load();

    expect(ruleSet.rules.map((rule) => rule.ruleId)).toEqual(['good']);
    expect(ruleSet.audiences.map((audience) => audience.audienceId)).toEqual(['desk']);
    const reasons = new Map(ruleSet.rejected.map((rejected) => [`${rejected.table}:${rejected.key}`, rejected.reason]));
    expect([...reasons.keys()].sort()).toEqual(
      [
        'audiences:proto-audience',
        ...['proto', 'proto-map', 'ctor', 'to-string', 'nested', 'deep', 'binary', 'null', 'huge-number'].map(
          (key) => `rules:${key}`,
        ),
      ].sort(),
    );
    expect(reasons.get('rules:proto')).toMatch(/^__proto__: a name no rule or audience attribute has/);
    expect(reasons.get('rules:ctor')).toMatch(/^constructor: a name no rule/);
    expect(reasons.get('rules:to-string')).toMatch(/^toString: a name no rule/);
    expect(reasons.get('rules:nested')).toMatch(/^keywords\[0\]\.__proto__: a name no rule/);
    expect(reasons.get('rules:deep')).toMatch(/^notes(\[0\])+: nested deeper than DynamoDB's 32 levels/);
    expect(reasons.get('rules:binary')).toMatch(/^keywords\[0\]:/);
    expect(reasons.get('rules:null')).toMatch(/^keywords must be a list/);
    expect(reasons.get('rules:huge-number')).toMatch(/^version:/);
    expect(log.warnings).toHaveLength(ruleSet.rejected.length);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  });
});

describe('scanItems', () => {
  it('reads every page of a table', async () => {
    const { dynamo, documents } = awsClients();
    const names = tableNamesFor(uniquePrefix());
    await createTables(dynamo, names);
    await putAll(
      dynamo,
      names.rules,
      Array.from({ length: 7 }, (_, index) => ({ ruleId: { S: `rule-${index}` }, audienceId: { S: 'desk' } })),
    );
    // Small pages from the real table, so the paging loop has to follow LastEvaluatedKey.
    let scans = 0;
    documents.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'ScanCommand') {
          scans += 1;
          return await next({ ...args, input: { ...args.input, Limit: 2 } });
        }
        return await next(args);
      },
      { step: 'initialize', name: 'smallPages' },
    );

    const items = await scanItems(documents, names.rules);

    expect(scans).toBeGreaterThanOrEqual(4);
    expect(items.map((item) => item.ruleId).sort()).toEqual(Array.from({ length: 7 }, (_, index) => `rule-${index}`));
  });

  it('fails with an error naming the table when a table cannot be read', async () => {
    const { documents } = awsClients();
    const source = new DynamoRuleSource({
      documents,
      rulesTableName: 'no-such-rules-table',
      audiencesTableName: 'no-such-audiences-table',
      log: recordingLog(),
    });
    const attempt = source.load();
    await expect(attempt).rejects.toBeInstanceOf(RuleSourceError);
    await expect(attempt).rejects.toThrow(/no-such-(rules|audiences)-table/);
  });
});
