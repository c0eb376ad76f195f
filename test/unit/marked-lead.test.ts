/**
 * `collapsesIntoMarkedLead` (functions/core/delivery-pipeline.ts): whether a copy collapses into
 * the lead an earlier run's story marker names, as the pipeline decides it; `preview` and
 * `rules explain` use it to say what the run would do. A review found both collapsing copies the
 * run sends: a lead with no ledger entry (its publish failed) in explain, and an urgent copy of a
 * lead still held for quiet hours in preview.
 */
import { describe, expect, it } from 'vitest';
import { collapsesIntoMarkedLead } from '#core/delivery-pipeline';
import { type Audience, type AudienceMatch, AudienceSchema } from '#core/model';
import type { DeliveryRecord } from '#core/ports';

const audienceOf = (deliveryMode: 'immediate' | 'digest'): Audience =>
  AudienceSchema.parse({
    audienceId: 'desk',
    name: 'Desk',
    topicArn: 'arn:aws:sns:us-east-1:123456789012:desk',
    timeZone: 'UTC',
    collapse: 'story',
    deliveryMode,
    ...(deliveryMode === 'digest' ? { digestTimes: ['08:00'] } : {}),
  });

const copy = (urgent: boolean): AudienceMatch => ({
  audienceId: 'desk',
  article: {
    key: 'id:copy',
    title: 'Pangolin census',
    summary: '',
    url: 'https://news.example.com/copy',
    publishedAt: 0,
    categories: [],
    categoryNames: [],
  },
  rules: [{ ruleId: 'r', urgent, reasons: [] }],
});

const lead = (fields: Partial<DeliveryRecord> = {}): DeliveryRecord => ({
  audienceId: 'desk',
  articleKey: 'id:lead',
  deliveredAt: 0,
  ruleIds: ['r'],
  ...fields,
});

describe('collapsesIntoMarkedLead', () => {
  const immediate = audienceOf('immediate');

  it('collapses into a lead that was sent, or held for a digest, and not into one that never reached the audience', () => {
    expect(collapsesIntoMarkedLead(copy(false), immediate, lead({ messageId: 'm-1' }))).toBe(true);
    expect(collapsesIntoMarkedLead(copy(false), immediate, lead({ heldFor: 'digest' }))).toBe(true);
    // No entry: the lead's publish failed after its marker was written.
    expect(collapsesIntoMarkedLead(copy(false), immediate, undefined)).toBe(false);
    for (const releaseOutcome of ['dropped', 'parked'] as const) {
      expect(
        collapsesIntoMarkedLead(copy(false), immediate, lead({ heldFor: 'digest', releasedAt: 1, releaseOutcome })),
      ).toBe(false);
    }
  });

  it('an urgent copy goes out past a lead still held for quiet hours or the budget, except where only digests go out', () => {
    for (const heldFor of ['quiet-hours', 'budget'] as const) {
      expect(collapsesIntoMarkedLead(copy(true), immediate, lead({ heldFor }))).toBe(false);
      expect(collapsesIntoMarkedLead(copy(false), immediate, lead({ heldFor }))).toBe(true);
      expect(collapsesIntoMarkedLead(copy(true), audienceOf('digest'), lead({ heldFor }))).toBe(true);
      // Released: the story went out with the digest, the copy collapses into it.
      expect(
        collapsesIntoMarkedLead(copy(true), immediate, lead({ heldFor, releasedAt: 1, releaseOutcome: 'sent' })),
      ).toBe(true);
    }
  });
});
