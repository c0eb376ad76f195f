/**
 * Counts and times the requests a real AWS SDK v3 client sends, with a middleware in the
 * `deserialize` step: it runs once per HTTP attempt (inside the SDK's own retries), so a retried
 * call counts as the requests it really cost. The same pattern as test/support/sns-faults.ts,
 * without faults. For a DynamoDB document client, install it on the DynamoDBClient it wraps (they
 * share one middleware stack).
 */
import { Buffer } from 'node:buffer';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';

/** One HTTP request as the client sent it. */
export interface RecordedRequest {
  /** `DynamoDB`, `SNS`, ... (the name passed to {@link recordRequests}). */
  readonly service: string;
  /** The SDK command, e.g. `BatchGetItemCommand`, `PublishBatchCommand`. */
  readonly command: string;
  /** `performance.now()` when the request left and when its response was read. */
  readonly start: number;
  readonly end: number;
  /**
   * How many items the request carried: keys of a BatchGetItem, write requests of a
   * BatchWriteItem, entries of a PublishBatch; 1 for anything else.
   */
  readonly items: number;
  /** SNS: the topic; otherwise undefined. */
  readonly topicArn?: string | undefined;
  /** PublishBatch: UTF-8 bytes of Message + Subject over all entries (what SNS's 256 KiB limit counts). */
  readonly bytes: number;
  /** The request failed (an SDK exception or a network error). */
  readonly failed: boolean;
}

/** The recorder installed on a client. */
export interface RequestRecorder {
  readonly requests: RecordedRequest[];
  uninstall(): void;
}

type RequestItems = Record<string, unknown[] | { Keys?: unknown[] }>;

/** UTF-8 bytes of the messages of a PublishBatch request; 0 for anything else. */
export function messageBytesOf(command: string, input: unknown): number {
  if (command !== 'PublishBatchCommand') return 0;
  const entries =
    (input as { PublishBatchRequestEntries?: { Message?: string; Subject?: string }[] }).PublishBatchRequestEntries ??
    [];
  return entries.reduce(
    (sum, entry) =>
      sum + Buffer.byteLength(entry.Message ?? '', 'utf8') + Buffer.byteLength(entry.Subject ?? '', 'utf8'),
    0,
  );
}

/** Items a request carries (see {@link RecordedRequest.items}). */
export function itemsOf(command: string, input: unknown): number {
  const fields = (typeof input === 'object' && input !== null ? input : {}) as {
    RequestItems?: RequestItems;
    PublishBatchRequestEntries?: unknown[];
  };
  if (command === 'BatchGetItemCommand' || command === 'BatchWriteItemCommand') {
    let count = 0;
    for (const value of Object.values(fields.RequestItems ?? {})) {
      count += Array.isArray(value) ? value.length : (value.Keys?.length ?? 0);
    }
    return count;
  }
  if (command === 'PublishBatchCommand') return fields.PublishBatchRequestEntries?.length ?? 0;
  return 1;
}

let installed = 0;

/**
 * Installs a recorder on `client` (a DynamoDBClient, which also records its document client, or an
 * SNSClient); every request from then on is appended to `requests`.
 */
export function recordRequests(client: DynamoDBClient | SNSClient, service: string): RequestRecorder {
  const requests: RecordedRequest[] = [];
  const track = async <T>(commandName: string | undefined, input: unknown, send: () => Promise<T>): Promise<T> => {
    const command = commandName ?? 'unknown';
    const start = performance.now();
    let failed = true;
    try {
      const result = await send();
      failed = false;
      return result;
    } finally {
      requests.push({
        service,
        command,
        start,
        end: performance.now(),
        items: itemsOf(command, input),
        bytes: messageBytesOf(command, input),
        topicArn: (input as { TopicArn?: string } | undefined)?.TopicArn,
        failed,
      });
    }
  };
  const options = { step: 'deserialize', name: `newsAlertsBenchRecorder${++installed}`, priority: 'low' } as const;
  // The same middleware for both clients; the branches only give TypeScript each client's types.
  if (client instanceof SNSClient) {
    client.middlewareStack.add(
      (next, context) => (args) => track(context.commandName, args.input, () => next(args)),
      options,
    );
  } else {
    client.middlewareStack.add(
      (next, context) => (args) => track(context.commandName, args.input, () => next(args)),
      options,
    );
  }
  return { requests, uninstall: () => void client.middlewareStack.remove(options.name) };
}
