/**
 * Trimming a rule's history (functions/aws/dynamo-rule-history.ts) deletes the versions beyond the
 * newest ones it keeps, re-sending what DynamoDB hands back unprocessed after a backoff, and gives
 * up with a StateStoreError that says how many were left instead of re-sending at once forever
 * (it once looped on UnprocessedItems with no wait and no bound).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { HISTORY_LIMITS } from '#core/workbench/rule-history';
import { StateStoreError } from '../../functions/aws/dynamo-batch.ts';
import { DynamoRuleHistory, historyPartition } from '../../functions/aws/dynamo-rule-history.ts';

type Request = { DeleteRequest: { Key: { pk: string; sk: string } } };

/** A document client holding `versions` history keys of rule r1; `unprocessed` decides what each write leaves. */
function fakeDocuments(versions: number, unprocessed: (requests: readonly Request[], call: number) => Request[]) {
  const deleted = new Set<string>();
  let writes = 0;
  const items = Array.from({ length: versions }, (_, i) => ({
    pk: historyPartition('r1'),
    sk: `v#${String(versions - i).padStart(9, '0')}#0000`,
  }));
  const documents = {
    async send(command: { constructor: { name: string }; input: Record<string, unknown> }) {
      if (command.constructor.name === 'QueryCommand') return { Items: items };
      const requests = (command.input.RequestItems as Record<string, Request[]>).state as Request[];
      writes += 1;
      const left = unprocessed(requests, writes);
      for (const request of requests) if (!left.includes(request)) deleted.add(request.DeleteRequest.Key.sk);
      return left.length === 0 ? {} : { UnprocessedItems: { state: left } };
    },
  } as unknown as DynamoDBDocumentClient;
  return { documents, deleted, writes: () => writes };
}

describe('rule history trim', () => {
  const kept = HISTORY_LIMITS.versionsPerRule;

  it('deletes every version past the kept ones, sending the unprocessed ones again after a wait', async () => {
    const fake = fakeDocuments(kept + 30, (requests, call) => (call === 1 ? requests.slice(0, 5) : []));
    const waits: number[] = [];
    const history = new DynamoRuleHistory({
      documents: fake.documents,
      tableName: 'state',
      sleep: async (ms) => void waits.push(ms),
    });

    expect(await history.trim('r1')).toBe(30);
    expect(fake.deleted.size).toBe(30);
    expect(waits).toHaveLength(1);
  });

  it('gives up on deletes DynamoDB never processes, with a StateStoreError, after a bounded number of waits', async () => {
    const fake = fakeDocuments(kept + 3, (requests) => [...requests]);
    const waits: number[] = [];
    const history = new DynamoRuleHistory({
      documents: fake.documents,
      tableName: 'state',
      sleep: async (ms) => void waits.push(ms),
    });

    const failure = history.trim('r1');
    await expect(failure).rejects.toBeInstanceOf(StateStoreError);
    await expect(failure).rejects.toThrow('3 of 3 item(s) in state were still unprocessed');
    expect(fake.writes()).toBeGreaterThan(1);
    expect(waits).toHaveLength(fake.writes() - 1);
  });
});
