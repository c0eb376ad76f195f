/**
 * Reading a partition page by page (functions/aws/dynamo-query.ts): every page in order, each
 * request starting where the last one ended, no request past the last page or after the caller
 * stops, and a key-only projection that names only what it uses (DynamoDB refuses an expression
 * attribute name no expression uses).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { partitionItems } from '../../functions/aws/dynamo-query.ts';

/** A client whose partition `p` holds `pages` pages of items, and the Query inputs it received. */
function pagedDocuments(pages: readonly (readonly Record<string, unknown>[])[]) {
  const inputs: Record<string, unknown>[] = [];
  const documents = {
    async send(command: { input: Record<string, unknown> }) {
      inputs.push(command.input);
      const start = command.input.ExclusiveStartKey as { page: number } | undefined;
      const index = start === undefined ? 0 : start.page;
      const last = index >= pages.length - 1;
      return { Items: pages[index] ?? [], ...(last ? {} : { LastEvaluatedKey: { page: index + 1 } }) };
    },
  } as unknown as DynamoDBDocumentClient;
  return { documents, inputs };
}

const pages = [[{ sk: 'a' }, { sk: 'b' }], [], [{ sk: 'c' }]];

describe('partitionItems', () => {
  it('yields every page in order, each request starting where the last ended, and none past the last', async () => {
    const { documents, inputs } = pagedDocuments(pages);
    const items: unknown[] = [];
    for await (const item of partitionItems(documents, 'state', 'p', { newestFirst: true })) items.push(item);

    expect(items).toEqual([{ sk: 'a' }, { sk: 'b' }, { sk: 'c' }]);
    expect(inputs.map((input) => input.ExclusiveStartKey)).toEqual([undefined, { page: 1 }, { page: 2 }]);
    expect(inputs[0]).toMatchObject({
      TableName: 'state',
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': 'pk' },
      ExpressionAttributeValues: { ':pk': 'p' },
      ScanIndexForward: false,
      ConsistentRead: true,
    });
    expect(inputs[0]).not.toHaveProperty('ProjectionExpression');
  });

  it('reads no further page once the caller stops', async () => {
    const { documents, inputs } = pagedDocuments(pages);
    for await (const item of partitionItems(documents, 'state', 'p')) {
      expect(item).toEqual({ sk: 'a' });
      break;
    }
    expect(inputs).toHaveLength(1);
    expect(inputs[0]).not.toHaveProperty('ScanIndexForward');
  });

  it('reads only the keys when asked, naming #sk only then', async () => {
    const { documents, inputs } = pagedDocuments([[{ pk: 'p', sk: 'a' }]]);
    for await (const _ of partitionItems(documents, 'state', 'p', { keysOnly: true })) {
      // drained
    }
    expect(inputs[0]).toMatchObject({
      ProjectionExpression: '#pk, #sk',
      ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
    });
  });
});
