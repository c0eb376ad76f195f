/**
 * A MemoryStateStore whose held notifications behave as DynamoStateStore's do (ports.ts): the
 * holding index kept by holdNotifications, claimRelease and setHoldingAudience (its oldest
 * `heldAt` only ever lowered by a hold, its reasons added to), release claims that refuse a second
 * claim at the same instant, and finishRelease deleting the released items, marking their ledger
 * entries released, then deleting the claim. For unit tests of the release step and of whole
 * alert runs across several runs; test/integration/state-store-holds.test.ts checks the real one.
 *
 * `crashAt` makes the next call of one step throw once, after doing nothing (a claim, a finish)
 * or after deleting the items but before the claim is gone (`finish-after-items`): a run that
 * crashes there, and the next run that must finish its work.
 */
import {
  type DigestRelease,
  deliveryId,
  type HeldNotification,
  type HeldState,
  type HoldingAudience,
  type HoldReason,
  ReleaseClaimConflictError,
  type ReleasedNotification,
} from '#core/ports';
import { MemoryStateStore } from './fake-ports.ts';

/** Where the store fails once, to play a crash between release steps. */
export type HoldCrash = 'claim' | 'finish' | 'finish-after-items';

export class MemoryHoldingStateStore extends MemoryStateStore {
  readonly holding = new Map<
    string,
    { oldestHeldAt?: number | undefined; reasons: Set<HoldReason>; lastReleaseAt?: number | undefined }
  >();
  readonly releases = new Map<string, DigestRelease>();
  crashAt: HoldCrash | undefined;

  #crash(step: HoldCrash): void {
    if (this.crashAt !== step) return;
    this.crashAt = undefined;
    throw new Error(`crash at ${step} (test)`);
  }

  override async holdNotifications(records: readonly HeldNotification[]): Promise<void> {
    await super.holdNotifications(records);
    for (const record of records) {
      const entry = this.#entry(record.key.audienceId);
      entry.oldestHeldAt = Math.min(entry.oldestHeldAt ?? record.heldAt, record.heldAt);
      entry.reasons.add(record.reason);
    }
  }

  #entry(audienceId: string) {
    let entry = this.holding.get(audienceId);
    if (entry === undefined) {
      entry = { reasons: new Set() };
      this.holding.set(audienceId, entry);
    }
    return entry;
  }

  override async listHoldingAudiences(): Promise<HoldingAudience[]> {
    return [...this.holding].map(([audienceId, entry]) => ({
      audienceId,
      oldestHeldAt: entry.oldestHeldAt ?? 0,
      reasons: entry.oldestHeldAt === undefined ? [] : [...entry.reasons].sort(),
      lastReleaseAt: entry.lastReleaseAt,
    }));
  }

  override async readHeld(audienceId: string): Promise<HeldState> {
    return {
      items: [...this.held.values()].filter((item) => item.key.audienceId === audienceId),
      releases: [...this.releases.values()].filter((release) => release.audienceId === audienceId),
    };
  }

  override async claimRelease(release: DigestRelease): Promise<void> {
    this.#crash('claim');
    const id = `${release.audienceId}|${release.releaseAt}`;
    if (this.releases.has(id)) throw new ReleaseClaimConflictError(release);
    this.releases.set(id, release);
    this.#entry(release.audienceId).lastReleaseAt = release.releaseAt;
  }

  override async finishRelease(release: DigestRelease, released: readonly ReleasedNotification[] = []): Promise<void> {
    this.#crash('finish');
    // As DynamoStateStore does: an entry that is gone stays gone, one marked already keeps its marks.
    for (const { releasedAt, releasedIn, releaseOutcome, releaseCause, ...key } of released) {
      const entry = this.ledger.get(deliveryId(key));
      if (entry === undefined || entry.releasedAt !== undefined) continue;
      this.ledger.set(deliveryId(key), {
        ...entry,
        releasedAt,
        releaseOutcome,
        releaseCause,
        ...(releasedIn === undefined ? {} : { releasedIn }),
      });
    }
    for (const key of [...release.parts.flat(), ...release.dropped]) {
      this.held.delete(deliveryId({ audienceId: release.audienceId, articleKey: key }));
    }
    this.#crash('finish-after-items');
    this.releases.delete(`${release.audienceId}|${release.releaseAt}`);
  }

  override async setHoldingAudience(
    audienceId: string,
    holding: Pick<HoldingAudience, 'oldestHeldAt' | 'reasons'> | undefined,
  ): Promise<void> {
    const entry = this.#entry(audienceId);
    if (holding === undefined || holding.reasons.length === 0) {
      entry.oldestHeldAt = undefined;
      entry.reasons = new Set();
    } else {
      entry.oldestHeldAt = holding.oldestHeldAt;
      entry.reasons = new Set(holding.reasons);
    }
  }
}
