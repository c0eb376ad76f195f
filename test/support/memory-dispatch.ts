/**
 * Sharded publishing in memory, for alert-run tests that are about the run's side of it: a
 * DispatchStore with the contract's semantics (one open dispatch, lease-checked open/seal/close,
 * completions counted once) and a WorkQueue that keeps the items it was given, so a test decides
 * when (and whether) the publishers process them. The moto-backed adapters have their own tests.
 */
import { DispatchOpenError, LeaseLostError } from '#core/errors';
import type {
  ClaimOutcome,
  DispatchHead,
  DispatchStore,
  EnqueueOutcome,
  Lease,
  OutboundMessage,
  WorkItem,
  WorkItemClaim,
  WorkItemRef,
  WorkItemResult,
  WorkQueue,
} from '#core/ports';
import { packWorkItems } from '#core/work-items';

type MutableHead = { -readonly [K in keyof DispatchHead]: DispatchHead[K] };

export class MemoryDispatchStore implements DispatchStore {
  readonly heads = new Map<string, MutableHead>();
  readonly completions = new Set<string>();
  openId: string | undefined;
  /** When the open pointer was written (the DynamoDB adapter keeps it on the pointer item). */
  #openedAt = 0;
  /** The lease the store accepts (tests set it to the run's; undefined accepts any). */
  constructor(readonly leaseHolder: () => string | undefined = () => undefined) {}

  #checkLease(lease: Lease, now: number): void {
    const holder = this.leaseHolder();
    if ((holder !== undefined && holder !== lease.owner) || lease.expiresAt <= now) {
      throw new LeaseLostError(`lease of ${lease.owner} lost`);
    }
  }

  async open(lease: Lease, dispatchId: string, now: number): Promise<void> {
    this.#checkLease(lease, now);
    if (this.openId !== undefined && this.openId !== dispatchId) throw new DispatchOpenError(this.openId);
    if (this.openId !== dispatchId) this.#openedAt = now;
    this.openId = dispatchId;
    if (!this.heads.has(dispatchId)) {
      this.heads.set(dispatchId, {
        dispatchId,
        openedAt: now,
        enqueued: 0,
        done: 0,
        published: 0,
        updateNotices: 0,
        alreadyDelivered: 0,
        parked: 0,
      });
    }
  }

  async countEnqueued(dispatchId: string, items: number): Promise<void> {
    const head = this.heads.get(dispatchId);
    if (head) head.enqueued += items;
  }

  async seal(
    lease: Lease,
    dispatchId: string,
    seal: { expected: number; advanceTo?: number | undefined },
    now: number,
  ): Promise<void> {
    this.#checkLease(lease, now);
    const head = this.heads.get(dispatchId);
    if (!head) return;
    head.expected = seal.expected;
    head.advanceTo = seal.advanceTo;
    head.sealedAt = now;
  }

  /**
   * As DynamoDispatchStore reads it: a pointer whose head is gone (`heads.delete`, as an item
   * deleted by hand) is an unsealed, empty dispatch as old as the pointer.
   */
  async readOpen(): Promise<DispatchHead | undefined> {
    if (this.openId === undefined) return undefined;
    return (
      (await this.read(this.openId)) ?? {
        dispatchId: this.openId,
        openedAt: this.#openedAt,
        enqueued: 0,
        done: 0,
        published: 0,
        updateNotices: 0,
        alreadyDelivered: 0,
        parked: 0,
      }
    );
  }

  async read(dispatchId: string): Promise<DispatchHead | undefined> {
    const head = this.heads.get(dispatchId);
    return head === undefined ? undefined : { ...head };
  }

  /** Claims held: `dispatchId#itemId` → owner and until. */
  readonly claims = new Map<string, { owner: string; until: number }>();
  /** Results of done items, as the DynamoDB adapter keeps them on the completion record. */
  readonly results = new Map<string, WorkItemResult>();

  async claimItems(items: readonly WorkItemRef[], claim: WorkItemClaim): Promise<ClaimOutcome[]> {
    const answers = new Map<string, ClaimOutcome>();
    return items.map((ref) => {
      const id = `${ref.dispatchId}#${ref.itemId}`;
      const earlier = answers.get(id);
      if (earlier !== undefined) return earlier;
      const result = this.results.get(id);
      const held = this.claims.get(id);
      const answer: ClaimOutcome = this.closed.has(ref.dispatchId)
        ? { state: 'closed' }
        : result !== undefined
          ? { state: 'done', result }
          : held !== undefined && held.until >= claim.now
            ? { state: 'busy' }
            : { state: 'claimed' };
      if (answer.state === 'claimed') this.claims.set(id, { owner: claim.owner, until: claim.until });
      answers.set(id, answer);
      return answer;
    });
  }

  async settleItems(
    owner: string,
    settlement: { done: readonly (WorkItemRef & { result: WorkItemResult })[]; released: readonly WorkItemRef[] },
  ): Promise<boolean[]> {
    const answers = settlement.done.map((entry) => {
      const id = `${entry.dispatchId}#${entry.itemId}`;
      if (this.claims.get(id)?.owner !== owner) return false;
      return this.#count(entry.dispatchId, entry.itemId, entry.result);
    });
    for (const ref of settlement.released) {
      const id = `${ref.dispatchId}#${ref.itemId}`;
      if (this.claims.get(id)?.owner === owner && !this.completions.has(id)) this.claims.delete(id);
    }
    return answers;
  }

  async completeItem(dispatchId: string, itemId: string, result: WorkItemResult): Promise<boolean> {
    return this.#count(dispatchId, itemId, result);
  }

  #count(dispatchId: string, itemId: string, result: WorkItemResult): boolean {
    const id = `${dispatchId}#${itemId}`;
    if (this.completions.has(id)) return false;
    this.completions.add(id);
    this.results.set(id, result);
    const head = this.heads.get(dispatchId);
    if (head) {
      head.done += 1;
      head.published += result.published;
      head.updateNotices += result.updateNotices;
      head.alreadyDelivered += result.alreadyDelivered;
      head.parked += result.parked;
    }
    return true;
  }

  /** Dispatches a run closed or gave up: their items are answered `closed`. */
  readonly closed = new Set<string>();

  async stopClaims(lease: Lease, dispatchId: string, now: number): Promise<void> {
    this.#checkLease(lease, now);
    this.closed.add(dispatchId);
  }

  async liveClaimsUntil(dispatchId: string, now: number, latest: number): Promise<number | undefined> {
    let until: number | undefined;
    for (const [id, held] of this.claims) {
      if (!id.startsWith(`${dispatchId}#`) || this.results.has(id) || held.until < now || held.until > latest) continue;
      until = Math.max(until ?? held.until, held.until);
    }
    return until;
  }

  async close(lease: Lease, dispatchId: string, _outcome: 'completed' | 'abandoned', now: number): Promise<void> {
    this.#checkLease(lease, now);
    if (this.openId === dispatchId) this.openId = undefined;
    this.closed.add(dispatchId);
  }
}

/** A WorkQueue that keeps its items until a test takes them (`take`). */
export class MemoryWorkQueue implements WorkQueue {
  readonly items: WorkItem[] = [];
  constructor(
    readonly dispatches: DispatchStore,
    readonly now: () => number,
  ) {}

  async enqueue(dispatchId: string, messages: readonly OutboundMessage[]): Promise<EnqueueOutcome> {
    const { items, tooLarge } = packWorkItems(dispatchId, messages, { now: this.now() });
    await this.dispatches.countEnqueued(dispatchId, items.length);
    this.items.push(...items);
    return {
      items: items.length,
      queued: items.flatMap((item) => item.messages),
      failed: tooLarge.map((message) => ({
        message,
        code: 'MessageTooLarge',
        reason: 'too large for a work item',
        permanent: true,
      })),
    };
  }

  /** Removes and returns every item queued so far (what SQS would hand the publishers). */
  take(): WorkItem[] {
    return this.items.splice(0, this.items.length);
  }
}
