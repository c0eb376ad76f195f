/**
 * What explain says about reading (functions/core/workbench/explain.ts): whether a scheduled run
 * reads an article at all, judged as the run judges it (functions/core/rule-reach.ts). A review
 * found explain saying "sent at once" for an article no run would read again: published hours
 * behind the watermark, matched only by a rule saved since.
 */
import { describe, expect, it } from 'vitest';
import { DeliveryPipeline, emptyDeliveryCounts } from '#core/delivery-pipeline';
import { titleHash } from '#core/ledger-facts';
import { type Audience, type AudienceMatch, AudienceSchema } from '#core/model';
import { type DeliveryRecord, storyMarkerKey } from '#core/ports';
import { explainDelivery } from '#core/workbench/explain';
import { MemoryNotifier, MemoryStateStore, memoryLog } from '#test/fake-ports';
import { copyLeadLostOf } from '../../cli/workbench/explain.ts';

const hour = 3_600_000;
const watermarkAt = Date.parse('2026-11-30T12:00:00Z');
const now = watermarkAt + 60_000;

const audience: Audience = AudienceSchema.parse({
  audienceId: 'desk',
  name: 'Desk',
  topicArn: 'arn:aws:sns:us-east-1:123456789012:desk',
  timeZone: 'UTC',
});

const matchOf = (publishedAt: number, ruleIds: readonly string[]): AudienceMatch => ({
  audienceId: 'desk',
  article: {
    key: 'id:a',
    title: 'Pangolin census',
    summary: '',
    url: 'https://news.example.com/a',
    publishedAt,
    categories: [],
    categoryNames: [],
  },
  rules: ruleIds.map((ruleId) => ({ ruleId, urgent: false, reasons: [] })),
});

/** The outcome and the reading step for an article published `behind` before the watermark. */
function judged(behind: number, saved: Record<string, number>, ruleIds = Object.keys(saved)) {
  const explanation = explainDelivery(audience, matchOf(watermarkAt - behind, ruleIds), now, {
    usedToday: 0,
    reading: { watermarkAt, overlapMs: 2 * 60_000, lateArrivalMs: hour, ruleSavedAt: new Map(Object.entries(saved)) },
  });
  return { outcome: explanation.outcome, reading: explanation.steps.find((step) => step.step === 'reading')?.why };
}

describe('explain: does a scheduled run read the article?', () => {
  it('after the watermark, or within the overlap behind it: the next run reads it, for any rule', () => {
    for (const behind of [-hour, 0, 60_000]) {
      expect(judged(behind, { fresh: now })).toMatchObject({ outcome: 'send', reading: /the next run reads it/ });
    }
  });

  it('far behind the watermark, matched only by rules saved since: unread, with the replay that sends it', () => {
    const verdict = judged(2 * hour, { fresh: now - 60_000 });
    expect(verdict.outcome).toBe('unread');
    expect(verdict.reading).toContain(
      'news-alerts replay --from 2026-11-30T10:00:00.000Z --to 2026-11-30T10:00:00.000Z --audience desk',
    );
  });

  it('far behind, but one matching rule was saved in time (or carries no save time): a late read still sends it', () => {
    const published = watermarkAt - 2 * hour;
    expect(judged(2 * hour, { fresh: now, old: published + hour })).toMatchObject({
      outcome: 'send',
      reading: /a run reads it only if the provider lists it late/,
    });
    // A rule without updatedAt (written by hand) counts as old, as the run counts it.
    expect(judged(2 * hour, { fresh: now }, ['fresh', 'hand-written']).outcome).toBe('send');
  });

  it('behind the watermark by less than the late-arrival window: read if listed late, whatever the rule', () => {
    expect(judged(30 * 60_000, { fresh: now })).toMatchObject({
      outcome: 'send',
      reading: /a run reads it only if the provider lists it late \(up to LATE_ARRIVAL_MINUTES, 60\)/,
    });
  });

  it('before the earliest a scheduled run still reads: unread whenever the rules were saved, with the replay', () => {
    const published = watermarkAt - 3 * 24 * hour;
    const explanation = explainDelivery(audience, matchOf(published, ['old']), now, {
      usedToday: 0,
      reading: {
        watermarkAt,
        overlapMs: 2 * 60_000,
        lateArrivalMs: hour,
        ruleSavedAt: new Map([['old', published - 30 * 24 * hour]]),
        earliestReadAt: watermarkAt - 49 * hour,
      },
    });
    expect(explanation.outcome).toBe('unread');
    const reading = explanation.steps.find((step) => step.step === 'reading')?.why;
    expect(reading).toContain('no scheduled run will read it');
    expect(reading).toContain(`news-alerts replay --from ${new Date(published).toISOString()}`);
    // Just inside it: read if listed late or swept, and planned as the run would.
    const inside = explainDelivery(audience, matchOf(watermarkAt - 48 * hour, ['old']), now, {
      usedToday: 0,
      reading: {
        watermarkAt,
        overlapMs: 2 * 60_000,
        lateArrivalMs: hour,
        ruleSavedAt: new Map([['old', published]]),
        earliestReadAt: watermarkAt - 49 * hour,
      },
    });
    expect(inside.outcome).toBe('send');
  });

  it('an overlap longer than the late-arrival window: what is behind the cutoff is not read by the next run', () => {
    // LATE_ARRIVAL_MINUTES 0, INCREMENTAL_OVERLAP_MINUTES 2: runs match nothing before the watermark.
    const explanation = explainDelivery(audience, matchOf(watermarkAt - 60_000, ['old']), now, {
      usedToday: 0,
      reading: {
        watermarkAt,
        overlapMs: 2 * 60_000,
        lateArrivalMs: 0,
        ruleSavedAt: new Map([['old', 0]]),
        earliestReadAt: watermarkAt - 30_000,
      },
    });
    expect(explanation.outcome).toBe('unread');
    expect(explanation.steps.find((step) => step.step === 'reading')?.why).not.toContain('the next run reads it');
  });

  it('a copy of a story the audience has is not offered a replay "to send it": the replay would collapse it too', () => {
    const collapsing: Audience = { ...audience, collapse: 'story' };
    const facts = {
      usedToday: 0,
      reading: { watermarkAt, overlapMs: 2 * 60_000, lateArrivalMs: hour, ruleSavedAt: new Map([['old', 0]]) },
    };
    const copy = explainDelivery(collapsing, matchOf(watermarkAt - 30 * 60_000, ['old']), now, {
      ...facts,
      story: { storyId: 's1', leadArticleKey: 'id:lead' },
    });
    expect(copy.outcome).toBe('collapse');
    const reading = copy.steps.find((step) => step.step === 'reading')?.why;
    expect(reading).toContain('a replay would collapse it as well');
    expect(reading).not.toContain('news-alerts replay');
    // The lead itself is offered the replay.
    const lead = explainDelivery(collapsing, matchOf(watermarkAt - 30 * 60_000, ['old']), now, {
      ...facts,
      story: { storyId: 's1', leadArticleKey: 'id:a' },
    });
    expect(lead.steps.find((step) => step.step === 'reading')?.why).toContain('to send it now: news-alerts replay');
  });

  it('says so when reading cannot be judged, and judges the rest', () => {
    const explanation = explainDelivery(audience, matchOf(watermarkAt, ['r']), now, {
      usedToday: 0,
      reading: { problem: "the alert function's settings cannot be read (AccessDenied)" },
    });
    expect(explanation.outcome).toBe('send');
    expect(explanation.steps[0]).toEqual({
      step: 'reading',
      why: "not judged: the alert function's settings cannot be read (AccessDenied)",
    });
  });
});

describe('explain: an alert the ledger holds already', () => {
  const budgeted: Audience = AudienceSchema.parse({
    audienceId: 'desk',
    name: 'Desk',
    topicArn: 'arn:aws:sns:us-east-1:123456789012:desk',
    timeZone: 'UTC',
    dailyBudget: 1,
    digestTimes: ['18:00'],
  });
  const held = {
    audienceId: 'desk',
    articleKey: 'id:a',
    deliveredAt: now - hour,
    ruleIds: ['r'],
    heldFor: 'budget',
  } as const;

  it('goes out when the budget allows, planned with what today used, as holds plans it', () => {
    const spent = explainDelivery(budgeted, matchOf(now - hour, ['r']), now, { usedToday: 1, ledger: held });
    expect(spent).toMatchObject({ outcome: 'hold', reason: 'budget', releaseAt: Date.parse('2026-11-30T18:00:00Z') });
    // Room left today (the budget was raised): the next run sends it.
    const room = explainDelivery(budgeted, matchOf(now - hour, ['r']), now, { usedToday: 0, ledger: held });
    expect(room).toMatchObject({ outcome: 'hold', releaseAt: now });
    expect(room.steps[0]?.why).toContain('the next run releases it');
  });

  it("takes the release holds planned with the audience's other holds, when the CLI gives it", () => {
    // Two budget holds share one alert of room: the older goes first, this one at the digest.
    const later = Date.parse('2026-11-30T18:00:00Z');
    const planned = explainDelivery(budgeted, matchOf(now - hour, ['r']), now, {
      usedToday: 0,
      ledger: held,
      heldRelease: { releaseAt: later, when: 'scheduled' },
    });
    expect(planned).toMatchObject({ outcome: 'hold', releaseAt: later });
    expect(planned.steps[0]?.why).toContain('released at 2026-11-30T18:00:00.000Z');
  });

  it('an entry an older release left saying held, with nothing held for it, is handled, not held', () => {
    // The CLI found no held item and no unfinished release for it (cli/workbench/explain.ts).
    const released = explainDelivery(budgeted, matchOf(now - hour, ['r']), now, {
      usedToday: 0,
      ledger: held,
      releasedUnrecorded: true,
    });
    expect(released.outcome).toBe('already');
    expect(released.steps[0]?.why).toContain('no longer held, and the ledger does not say what became of it');
  });

  it('an entry whose outcome a hand edit damaged is said to be unknown, not held', () => {
    const damaged = explainDelivery(budgeted, matchOf(now - hour, ['r']), now, {
      usedToday: 0,
      ledger: { ...held, malformed: ['releasedAt'] },
    });
    expect(damaged.outcome).toBe('already');
    expect(damaged.steps[0]?.why).toMatch(
      /^handled, but what became of it is unknown: its ledger entry is malformed \(releasedAt\)/,
    );
  });
});

/**
 * A review found explain saying "a re-read sends nothing" for an article sent before and revised
 * since, while the next run that read it sent the audience an update notice.
 */
describe('explain: an article handled before and changed since', () => {
  const sentAt = watermarkAt - hour;
  const published = matchOf(watermarkAt, ['r']);
  const entryFor = (status: string, title: string) => ({
    articleKey: 'id:a',
    audienceId: 'desk',
    deliveredAt: sentAt,
    ruleIds: ['r'],
    status,
    titleHash: titleHash(title),
  });
  const ledgerStep = (who: Audience, entry: ReturnType<typeof entryFor>, match = published) => {
    const explanation = explainDelivery(who, match, now, { usedToday: 0, ledger: entry });
    return { outcome: explanation.outcome, why: explanation.steps.find((step) => step.step === 'ledger')?.why };
  };
  const notify = AudienceSchema.parse({ ...audience, updates: 'notify' });

  it('unchanged: a re-read sends nothing, whatever the audience wants', () => {
    for (const who of [audience, notify]) {
      expect(ledgerStep(who, entryFor('', 'Pangolin census'))).toMatchObject({
        outcome: 'already',
        why: /\(sent\): a re-read sends nothing$/,
      });
    }
  });

  it('a new status or title: an update notice for an audience that wants them, nothing for one that ignores them', () => {
    const corrected = entryFor('CORRECTED', 'Pangolin census');
    expect(ledgerStep(notify, corrected).why).toMatch(
      /changed since \(status "", the ledger has "CORRECTED"\): a run that reads it again sends an update notice/,
    );
    expect(ledgerStep(audience, corrected).why).toMatch(
      /the audience ignores updates \(updates: ignore\): a re-read sends nothing/,
    );
    expect(ledgerStep(notify, entryFor('', 'Pangolin count')).why).toMatch(
      /a new title\): a run that reads it again sends an update notice/,
    );
  });

  it('a copy collapsed into its story: its changes are not news to the audience', () => {
    const collapsed = { ...entryFor('CORRECTED', 'Old title'), collapsedInto: 'story-1' };
    expect(ledgerStep(notify, collapsed).why).toMatch(/collapsed into story story-1\): a re-read sends nothing$/);
  });

  it('a copy collapsed into a lead that never reached the audience is planned again, as the run does', () => {
    const collapsed = { ...entryFor('', 'Pangolin census'), collapsedInto: 'story-1', collapsedLead: 'id:lead' };
    const explanation = explainDelivery(audience, published, now, {
      usedToday: 0,
      ledger: collapsed,
      copyLeadLost: { lead: 'id:lead', why: 'the ledger has no entry for it' },
    });
    expect(explanation.outcome).toBe('send');
    expect(explanation.steps.find((step) => step.step === 'ledger')?.why).toMatch(
      /as collapsed into story story-1 with id:lead, which never reached the audience \(the ledger has no entry for it\): a run that reads it again plans it again/,
    );
    // Only a collapsed copy's entry is judged by its lead.
    expect(
      explainDelivery(audience, published, now, {
        usedToday: 0,
        ledger: entryFor('', 'Pangolin census'),
        copyLeadLost: { lead: 'id:lead', why: 'the ledger has no entry for it' },
      }).outcome,
    ).toBe('already');
  });
});

/**
 * rules explain judges a collapsed copy by its own lead (cli/workbench/explain.ts copyLeadLostOf,
 * here on the same in-memory ledger the run reads) and says a re-read plans it again. The run, on
 * that ledger, must then send it.
 */
describe('explain and the run agree on a collapsed copy whose lead never reached the audience (found by review)', () => {
  const copyAt = watermarkAt - hour;
  const runOn = async (state: MemoryStateStore, who: Audience, match: AudienceMatch) => {
    const notifier = new MemoryNotifier();
    const pipeline = new DeliveryPipeline({
      state,
      notifier,
      log: memoryLog(),
      stories: { assign: async () => new Map(), readStories: async () => new Map() },
      now: () => now,
      audiences: new Map([[who.audienceId, who]]),
      ledgerFlushDelayMs: 0,
      publishSignal: new AbortController().signal,
      lateBefore: 0,
      counts: emptyDeliveryCounts(),
      applyDeliveryPreferences: true,
    });
    await pipeline.add([match]);
    await pipeline.flush();
    return notifier.published.map((message) => message.key.articleKey);
  };
  it.each([
    ['collapsedLead, audience collapse: none (as rules explain wb-lost in test/cli/workbench.test.ts)', true],
    ['legacy entry (marker no younger than it), audience collapse: none', false],
  ] as const)('%s', async (_name, withLead) => {
    const state = new MemoryStateStore();
    const entry: DeliveryRecord = {
      audienceId: 'desk',
      articleKey: 'id:a',
      deliveredAt: copyAt,
      ruleIds: ['r'],
      storyId: 'story-1',
      collapsedInto: 'story-1',
      ...(withLead ? { collapsedLead: 'id:dead-lead' } : {}),
    };
    await state.recordDelivered([
      entry,
      {
        ...storyMarkerKey('desk', 'story-1'),
        deliveredAt: copyAt - 60_000,
        ruleIds: [],
        storyId: 'story-1',
        leadArticleKey: 'id:dead-lead',
      },
    ]);
    const match = matchOf(watermarkAt, ['r']);
    const explanation = explainDelivery(audience, match, now, {
      usedToday: 0,
      ledger: entry,
      copyLeadLost: await copyLeadLostOf(state, entry),
    });
    const sent = await runOn(state, audience, match);
    expect({ explained: explanation.outcome, sent }).toEqual(
      explanation.outcome === 'send'
        ? { explained: 'send', sent: ['id:a'] }
        : { explained: explanation.outcome, sent: [] },
    );
  });
});
