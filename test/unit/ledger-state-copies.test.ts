import { describe, expect, it } from 'vitest';
import { type DeliveryRecord, deliveryId, storyMarkerKey } from '#core/ports';
import { ledgerState } from '../../cli/workbench/ledger-state.ts';

/** What `deliveries --article id:copy` says of the copy, given these entries of the ledger. */
const statusOf = (...records: DeliveryRecord[]): string =>
  ledgerState('desk', 'id:copy', new Map(records.map((record) => [deliveryId(record), record])), undefined, undefined)
    .status;

describe('deliveries --article on a copy recorded before collapsedLead existed, whose marker is younger (found by review)', () => {
  const audienceId = 'desk';
  const copyAt = Date.UTC(2026, 10, 22, 11, 0);
  const copy: DeliveryRecord = {
    audienceId,
    articleKey: 'id:copy',
    deliveredAt: copyAt,
    ruleIds: [],
    collapsedInto: 'story-1',
  };
  const marker: DeliveryRecord = {
    ...storyMarkerKey(audienceId, 'story-1'),
    deliveredAt: copyAt + 30 * 60_000,
    ruleIds: [],
    storyId: 'story-1',
    leadArticleKey: 'id:later',
  };
  it('does not claim a re-read sends it (the run judges it reached: its lead is unknown)', () => {
    expect(statusOf(copy, marker)).toContain('the lead it went with is not recorded');
    expect(statusOf(copy, marker)).not.toContain('a run that reads this copy again sends it');
  });
  it('nor when the younger marker names a lead a digest release dropped', () => {
    const later: DeliveryRecord = {
      audienceId,
      articleKey: 'id:later',
      deliveredAt: copyAt + 30 * 60_000,
      ruleIds: [],
      heldFor: 'digest',
      releasedAt: copyAt + 90 * 60_000,
      releaseOutcome: 'dropped',
    } as DeliveryRecord;
    expect(statusOf(copy, marker, later)).not.toContain('a run that reads this copy again sends it');
  });
  it('says what it knows of a damaged marker or a damaged collapsedLead, and that a re-read sends nothing', () => {
    const damagedMarker: DeliveryRecord = {
      ...storyMarkerKey(audienceId, 'story-1'),
      deliveredAt: copyAt - 1000,
      ruleIds: [],
      storyId: 'story-1',
      malformed: ['leadArticleKey'],
    };
    expect(statusOf(copy, damagedMarker)).toContain(
      'its story marker names no lead (damaged by hand); a re-read sends nothing',
    );
    const damagedCopy: DeliveryRecord = { ...copy, malformed: ['collapsedLead'] };
    expect(statusOf(damagedCopy, marker)).toContain(
      'the lead it went with is damaged in its entry; the story marker now names id:later',
    );
  });
  it('says a damaged collapsedLead is damaged whatever the marker says', () => {
    const damagedCopy: DeliveryRecord = { ...copy, malformed: ['collapsedLead'] };
    const older: DeliveryRecord = { ...marker, deliveredAt: copyAt - 1000, leadArticleKey: 'id:first' };
    expect(statusOf(damagedCopy, older)).toContain(
      'its collapsedLead is damaged, so the lead its story marker names: lead id:first, not in the ledger',
    );
    expect(statusOf(damagedCopy)).toContain(
      'its collapsedLead is damaged and its story marker is gone from the ledger; a re-read sends nothing',
    );
  });
});
