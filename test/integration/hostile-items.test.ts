/**
 * Issue 10, item 4: items written by hand straight into DynamoDB (an attribute named
 * `__proto__`, `constructor`, odd types, nesting past DynamoDB's limit) are each skipped with
 * their key and reason and counted, while every other rule still runs. Before the fix one such
 * item made `unmarshall` throw inside the Scan and no run alerted anyone.
 */
import { type AttributeValue, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { firstWindowStart, startTestStack, type TestStack } from '#test/run-harness';

/** Items as the console's JSON view or `put-item` writes them: JSON.parse keeps `__proto__` a key. */
const hostile = (json: string): Record<string, AttributeValue> => JSON.parse(json) as Record<string, AttributeValue>;

const hostileRules = [
  '{"ruleId":{"S":"proto-rule"},"audienceId":{"S":"quake-oncall"},"keywords":{"SS":["earthquake"]},"__proto__":{"S":"x"}}',
  '{"ruleId":{"S":"constructor-rule"},"audienceId":{"S":"quake-oncall"},"keywords":{"SS":["earthquake"]},"constructor":{"M":{"prototype":{"M":{"polluted":{"BOOL":true}}}}}}',
  '{"ruleId":{"S":"nested-proto"},"audienceId":{"S":"quake-oncall"},"keywords":{"L":[{"M":{"__proto__":{"M":{"polluted":{"BOOL":true}}}}}]}}',
];
const hostileAudiences = [
  '{"audienceId":{"S":"proto-audience"},"topicArn":{"S":"arn:aws:sns:us-east-1:123456789012:x"},"__proto__":{"M":{"polluted":{"BOOL":true}}}}',
];

describe('hand-written hostile items', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('an item with an attribute named __proto__ is skipped and counted; every other rule still alerts', async () => {
    stack = await startTestStack();
    const { dynamo } = stack.clients;
    for (const item of hostileRules) {
      await dynamo.send(new PutItemCommand({ TableName: stack.config.tables.rules, Item: hostile(item) }));
    }
    for (const item of hostileAudiences) {
      await dynamo.send(new PutItemCommand({ TableName: stack.config.tables.audiences, Item: hostile(item) }));
    }

    const summary = await stack.run();

    expect(summary.status).toBe('completed');
    // typo-rule of the examples plus the three above; the one hostile audience.
    expect(summary.invalidRules).toBe(4);
    expect(summary.invalidAudiences).toBe(1);
    const warnings = stack.log.lines.filter((line) => line.includes('skipped an invalid item'));
    for (const key of ['proto-rule', 'constructor-rule', 'nested-proto', 'proto-audience']) {
      expect(warnings.find((line) => line.includes(`"${key}"`))).toMatch(/__proto__|constructor/);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await stack.verifyExactlyOnce(firstWindowStart(stack))).toEqual({
      missing: [],
      unexpected: [],
      duplicates: [],
    });
    expect((await stack.deliveredSoFar()).length).toBeGreaterThan(0);
  });
});
