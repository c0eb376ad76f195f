/**
 * DynamoDB request recorders and faults for tests against moto: SDK middleware on a document
 * client, so the store under test runs unchanged while a test counts its requests or plays
 * DynamoDB throttling.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  type BatchGetCommandInput,
  type BatchGetCommandOutput,
  type BatchWriteCommandInput,
  type BatchWriteCommandOutput,
  GetCommand,
} from '@aws-sdk/lib-dynamodb';

/** An item as the table holds it (strongly consistent), bypassing the store under test. */
export async function rawItem(documents: DynamoDBDocumentClient, table: string, key: { pk: string; sk: string }) {
  const { Item } = await documents.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }));
  return Item;
}

export interface BatchCall {
  readonly command: string;
  readonly size: number;
}

/** Records every DynamoDB request and, for batch requests, how many items or keys it carried. */
export function recordCalls(documents: DynamoDBDocumentClient): BatchCall[] {
  const calls: BatchCall[] = [];
  documents.middlewareStack.add(
    (next, context) => async (args) => {
      const requestItems = (args.input as { RequestItems?: Record<string, unknown[] | { Keys?: unknown[] }> })
        .RequestItems;
      const size = Object.values(requestItems ?? {}).reduce<number>(
        (sum, value) => sum + (Array.isArray(value) ? value.length : (value.Keys?.length ?? 0)),
        0,
      );
      calls.push({ command: context.commandName ?? 'unknown', size });
      return await next(args);
    },
    { step: 'initialize', name: 'recordCalls' },
  );
  return calls;
}

/**
 * Throttling as DynamoDB reports it: for the next `times` batch requests, only the first half of
 * the items (or keys, rounded down) reaches the table and the rest comes back as
 * UnprocessedItems/UnprocessedKeys. A lone item is handed back without reaching the table at all
 * (as on an internal processing failure). Add it after `recordCalls` so that one sees what the
 * store sent.
 */
export function withholdHalf(documents: DynamoDBDocumentClient, times: number): { withheld: number } {
  const stats = { withheld: 0 };
  let remaining = times;
  const split = <T>(items: readonly T[]) => {
    const keep = items.slice(0, Math.floor(items.length / 2));
    const withheld = items.slice(keep.length);
    stats.withheld += withheld.length;
    return { keep, withheld };
  };
  documents.middlewareStack.add(
    (next, context) => async (args) => {
      if (remaining <= 0) return await next(args);
      if (context.commandName === 'BatchWriteItemCommand') {
        remaining -= 1;
        const input = args.input as BatchWriteCommandInput;
        const [table, requests] = Object.entries(input.RequestItems ?? {})[0]!;
        const { keep, withheld } = split(requests);
        const result =
          keep.length > 0
            ? await next({ ...args, input: { ...input, RequestItems: { [table]: keep } } })
            : { output: { $metadata: {} }, response: undefined };
        const output = result.output as BatchWriteCommandOutput;
        output.UnprocessedItems = { [table]: [...(output.UnprocessedItems?.[table] ?? []), ...withheld] };
        return result;
      }
      if (context.commandName === 'BatchGetItemCommand') {
        remaining -= 1;
        const input = args.input as BatchGetCommandInput;
        const [table, request] = Object.entries(input.RequestItems ?? {})[0]!;
        const { keep, withheld } = split(request.Keys ?? []);
        const result =
          keep.length > 0
            ? await next({ ...args, input: { ...input, RequestItems: { [table]: { ...request, Keys: keep } } } })
            : { output: { $metadata: {} }, response: undefined };
        const output = result.output as BatchGetCommandOutput;
        output.UnprocessedKeys = { [table]: { ...request, Keys: withheld } };
        return result;
      }
      return await next(args);
    },
    { step: 'initialize', name: 'withholdHalf' },
  );
  return stats;
}
