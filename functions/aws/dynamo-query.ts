/**
 * Reading one partition of a table page by page, the loop the adapters each wrote out: Query on
 * `pk`, strongly consistent, following LastEvaluatedKey until DynamoDB has no more. The items come
 * as an async iterable, so a caller that has enough stops iterating and no further page is read.
 */
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';

export interface PartitionQuery {
  /** Sort keys from the largest down (ScanIndexForward false); default smallest first. */
  readonly newestFirst?: boolean;
  /** Only the key attributes (`pk`, `sk`), for deletes. */
  readonly keysOnly?: boolean;
}

/** Every item whose `pk` is `pk`, in sort key order, read as the caller iterates. */
export async function* partitionItems(
  documents: DynamoDBDocumentClient,
  tableName: string,
  pk: string,
  options: PartitionQuery = {},
): AsyncGenerator<Record<string, unknown>> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const output = await documents.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: options.keysOnly ? { '#pk': 'pk', '#sk': 'sk' } : { '#pk': 'pk' },
        ExpressionAttributeValues: { ':pk': pk },
        ...(options.keysOnly ? { ProjectionExpression: '#pk, #sk' } : {}),
        ...(options.newestFirst ? { ScanIndexForward: false } : {}),
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    yield* output.Items ?? [];
    startKey = output.LastEvaluatedKey;
  } while (startKey !== undefined);
}

/** Every item of one partition, as a list (a partition known to be small). */
export async function allPartitionItems(
  documents: DynamoDBDocumentClient,
  tableName: string,
  pk: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for await (const item of partitionItems(documents, tableName, pk)) items.push(item);
  return items;
}
