/**
 * Fault injection for SNS PublishBatch on a real SDK client talking to moto. A middleware in the
 * `initialize` step (before the SDK's own retries, so every injected fault is seen exactly once by
 * the code under test) records each PublishBatch call, and can:
 *
 * - fail chosen entries: they are removed from the real request, so moto never delivers them, and
 *   reported back in `Failed` with the given `Code`/`SenderFault`, as SNS does on HTTP 200;
 * - fail a whole call by throwing an SDK exception (throttling, KMS, 5xx, network) before sending;
 * - run a hook after each call (to abort a signal, crash a callback, ...).
 *
 * Entries are identified by the notification's `deliveryId`, read from the structured body.
 */
import { Buffer } from 'node:buffer';
import {
  type BatchResultErrorEntry,
  InternalErrorException,
  KMSDisabledException,
  NotFoundException,
  type PublishBatchCommandInput,
  type PublishBatchCommandOutput,
  type PublishBatchRequestEntry,
  type SNSClient,
  ThrottledException,
} from '@aws-sdk/client-sns';

/** An entry of a PublishBatch request, with the delivery id read from its body. */
export interface FaultEntry {
  readonly entry: PublishBatchRequestEntry;
  /** `newsAlerts.deliveryId` of the structured body, when the body has one. */
  readonly deliveryId: string | undefined;
}

/** What the middleware knows about a call before deciding on faults. */
export interface CallContext {
  /** 0-based position among this client's PublishBatch calls. */
  readonly index: number;
  readonly topicArn: string;
  readonly entries: readonly FaultEntry[];
}

/** One PublishBatch call as the code under test made it. */
export interface PublishBatchCall {
  readonly index: number;
  readonly topicArn: string;
  /** Entries the caller put in the request. */
  readonly entries: number;
  /** UTF-8 bytes of Message + Subject over all entries, as SNS counts the 256 KiB batch limit. */
  readonly bytes: number;
  readonly deliveryIds: readonly (string | undefined)[];
  /** Delivery ids reported failed by the injected entry faults (never sent to moto). */
  readonly failedDeliveryIds: readonly (string | undefined)[];
  /** Name of the exception thrown instead of sending, if any. */
  readonly thrown: string | undefined;
  /**
   * Delivery ids the emulator answered as published (`Successful`), once the call has returned:
   * what a test expects confirmed, since moto may leave an entry out of its answer (it drops an
   * entry whose publish raised, neither successful nor failed).
   */
  readonly acceptedDeliveryIds: (string | undefined)[];
}

/** A per-entry failure as SNS reports it in `Failed`. */
export interface EntryFault {
  readonly code: string;
  readonly senderFault: boolean;
  readonly message?: string;
}

/** Which faults to inject; every part is optional (an empty plan only records calls). */
export interface SnsFaultPlan {
  /** Report this entry failed instead of sending it. */
  readonly entryFault?: (entry: FaultEntry, call: CallContext) => EntryFault | undefined;
  /** Throw this error instead of sending the call. */
  readonly callFault?: (call: CallContext) => Error | undefined;
  /** Runs after each call has completed (or thrown). */
  readonly afterCall?: (call: PublishBatchCall) => void | Promise<void>;
}

/** The installed middleware: what it recorded, and how to take it off the client. */
export interface SnsFaults {
  /** Every PublishBatch call so far, in order. */
  readonly calls: PublishBatchCall[];
  uninstall(): void;
}

/** `newsAlerts.deliveryId` from a `MessageStructure: json` body (its `sqs` part), if present. */
export function deliveryIdOf(message: string | undefined): string | undefined {
  try {
    const document = JSON.parse(message ?? '') as Record<string, unknown>;
    const structured = document.sqs ?? document.default;
    if (typeof structured !== 'string') return undefined;
    const parsed = JSON.parse(structured) as { newsAlerts?: { deliveryId?: unknown } };
    const id = parsed.newsAlerts?.deliveryId;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

const utf8 = (text: string | undefined) => Buffer.byteLength(text ?? '', 'utf8');

const middlewareName = 'newsAlertsSnsFaults';

/** Installs the recorder (and the faults of `plan`) on `client`. One per client at a time. */
export function installSnsFaults(client: SNSClient, plan: SnsFaultPlan = {}): SnsFaults {
  const calls: PublishBatchCall[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'PublishBatchCommand') return await next(args);
      const input = args.input as PublishBatchCommandInput;
      const requestEntries = input.PublishBatchRequestEntries ?? [];
      const ctx: CallContext = {
        index: calls.length,
        topicArn: input.TopicArn ?? '',
        entries: requestEntries.map((entry) => ({ entry, deliveryId: deliveryIdOf(entry.Message) })),
      };
      const thrown = plan.callFault?.(ctx);
      const kept: PublishBatchRequestEntry[] = [];
      const failed: BatchResultErrorEntry[] = [];
      const failedDeliveryIds: (string | undefined)[] = [];
      if (thrown === undefined) {
        for (const faultEntry of ctx.entries) {
          const fault = plan.entryFault?.(faultEntry, ctx);
          if (fault === undefined) kept.push(faultEntry.entry);
          else {
            failedDeliveryIds.push(faultEntry.deliveryId);
            failed.push({
              Id: faultEntry.entry.Id,
              Code: fault.code,
              Message: fault.message ?? `injected ${fault.code}`,
              SenderFault: fault.senderFault,
            });
          }
        }
      }
      const call: PublishBatchCall = {
        index: ctx.index,
        topicArn: ctx.topicArn,
        entries: requestEntries.length,
        bytes: requestEntries.reduce((sum, entry) => sum + utf8(entry.Message) + utf8(entry.Subject), 0),
        deliveryIds: ctx.entries.map((entry) => entry.deliveryId),
        failedDeliveryIds,
        thrown: thrown?.name,
        acceptedDeliveryIds: [],
      };
      calls.push(call);
      try {
        if (thrown !== undefined) throw thrown;
        if (kept.length === 0) {
          // SNS rejects an empty batch, so an all-failed call never reaches moto.
          const output: PublishBatchCommandOutput = {
            Successful: [],
            Failed: failed,
            $metadata: { httpStatusCode: 200 },
          };
          return { output, response: undefined };
        }
        const result = await next({ ...args, input: { ...input, PublishBatchRequestEntries: kept } });
        const output = result.output as PublishBatchCommandOutput;
        const byId = new Map(ctx.entries.map((entry) => [entry.entry.Id, entry.deliveryId]));
        for (const success of output.Successful ?? []) call.acceptedDeliveryIds.push(byId.get(success.Id));
        output.Failed = [...(output.Failed ?? []), ...failed];
        return result;
      } finally {
        await plan.afterCall?.(call);
      }
    },
    { step: 'initialize', name: middlewareName, override: true },
  );
  return { calls, uninstall: () => void client.middlewareStack.remove(middlewareName) };
}

/**
 * Fails each listed delivery the first `times` times it is sent (default once), then lets it
 * through: a transient per-entry failure when `senderFault` is false.
 */
export function failDeliveries(
  deliveryIds: Iterable<string>,
  fault: EntryFault,
  times = 1,
): NonNullable<SnsFaultPlan['entryFault']> {
  const remaining = new Map([...deliveryIds].map((id) => [id, times]));
  return ({ deliveryId }) => {
    const left = deliveryId === undefined ? undefined : remaining.get(deliveryId);
    if (deliveryId === undefined || left === undefined || left <= 0) return undefined;
    remaining.set(deliveryId, left - 1);
    return fault;
  };
}

/** The SNS errors the notifier must tell apart, as the SDK raises them. */
export const snsErrors = {
  throttled: () => new ThrottledException({ message: 'Rate exceeded (injected)', $metadata: { httpStatusCode: 400 } }),
  internal: () =>
    new InternalErrorException({ message: 'Internal error (injected)', $metadata: { httpStatusCode: 500 } }),
  notFound: () =>
    new NotFoundException({ message: 'Topic does not exist (injected)', $metadata: { httpStatusCode: 404 } }),
  kmsDisabled: () =>
    new KMSDisabledException({ message: 'The KMS key is disabled (injected)', $metadata: { httpStatusCode: 400 } }),
  /** A dropped connection: no HTTP status at all. */
  network: () => Object.assign(new Error('socket hang up (injected)'), { name: 'Error', code: 'ECONNRESET' }),
} as const;

/** Throws the errors in order on the first calls (`errors[i]` on call i), then sends normally. */
export function failCalls(...errors: (() => Error)[]): NonNullable<SnsFaultPlan['callFault']> {
  return ({ index }) => errors[index]?.();
}
