/**
 * The spike step over the in-memory ports with the real story index and delivery pipeline:
 * one burst gives one alert (not one per hour it lasts), 200 syndicated copies of one wire story
 * give none, and reading the same articles again counts nothing twice.
 */
import { describe, expect, it } from 'vitest';
import { emptyDigestCounts, releaseDueDigests } from '#core/digest-release';
import { evaluatedThrough } from '#core/spikes/record';
import { HOUR, headlines, playBaseline, SpikeWorld, spikeArticle, spikeAudience, spikeRule } from '#test/spike-world';

const start = Date.UTC(2026, 9, 5, 0, 0);
/** Ten quiet days: three new stories an hour, four in the afternoon. */
const quiet = (hour: number) => (hour % 24 >= 12 && hour % 24 < 18 ? 4 : 3);

describe('spike alerts in a run', () => {
  it('sends one alert for a burst that lasts three hours, with observed against expected', async () => {
    const world = new SpikeWorld(start, [spikeRule()], [spikeAudience()]);
    let at = await playBaseline(world, start, 10 * 24, quiet);
    expect(world.spikeMessages()).toHaveLength(0);
    const next = headlines(99);
    for (let hour = 0; hour < 3; hour++) {
      const runAt = at + 50 * 60_000;
      const burst = Array.from({ length: 40 }, (_, i) =>
        spikeArticle(`burst${hour}-${i}`, next(), runAt - (i + 1) * 60_000),
      );
      await world.run(runAt, burst);
      at += HOUR;
    }
    for (let hour = 0; hour < 4; hour++) {
      await world.run(at + 50 * 60_000, []);
      at += HOUR;
    }
    const alerts = world.spikeMessages();
    expect(alerts).toHaveLength(1);
    const email = JSON.parse(alerts[0]?.body ?? '{}').email as string;
    expect(email).toMatch(/Coverage spike: chips/);
    expect(email).toMatch(/40 new stories since/);
    const record = world.spikes.records.get('chips');
    expect(record?.alert?.settled).toBe(true);
    expect(record?.recent).toHaveLength(1);
    // The stories so far grew with the burst, and so did what was expected over the same span:
    // an update compares like with like, not the new total with the first hour's expectation.
    const alert = record?.alert;
    expect(alert?.storiesSoFar).toBeGreaterThan(alert?.observed ?? Number.POSITIVE_INFINITY);
    expect(alert?.expectedSoFar).toBeGreaterThan(alert?.expected ?? Number.POSITIVE_INFINITY);
  });

  it('names the top stories and outlets of the whole burst, not of the first stories counted', async () => {
    const world = new SpikeWorld(start, [spikeRule()], [spikeAudience()]);
    let at = await playBaseline(world, start, 10 * 24, quiet);
    const next = headlines(7);
    const runAt = at + 50 * 60_000;
    const minute = (i: number) => runAt - 55 * 60_000 + i * 30_000;
    // 30 stories from eight outlets first; then one story that twelve outlets carry (the 31st),
    // and 25 stories from one outlet, most of them past the 40 the hour keeps headlines of.
    const early = Array.from({ length: 30 }, (_, i) => spikeArticle(`early${i}`, next(), minute(i), `M00${i % 8}`));
    const wire = 'Hanbit Semiconductor to build $12 billion memory chip plant in Yongin, creating 3,000 jobs';
    const copies = Array.from({ length: 12 }, (_, i) => spikeArticle(`wire${i}`, wire, minute(30 + i), `W${i}`));
    const late = Array.from({ length: 25 }, (_, i) => spikeArticle(`late${i}`, next(), minute(42 + i), 'M777'));
    await world.run(runAt, [...early, ...copies, ...late]);
    at += HOUR;
    await world.run(at + 50 * 60_000, []);
    const alert = world.spikes.records.get('chips')?.alert;
    expect(world.spikeMessages()).toHaveLength(1);
    expect(alert?.topStories[0]).toMatchObject({ title: wire, outlets: 12 });
    expect(alert?.topOutlets[0]).toEqual({ name: 'Outlet M777', stories: 25 });
    expect(alert?.topStories).toHaveLength(5);
    expect(alert?.topOutlets).toHaveLength(5);
  });

  it('counts 200 syndicated copies of one wire story as one story: no spike', async () => {
    const world = new SpikeWorld(start, [spikeRule()], [spikeAudience()]);
    let at = await playBaseline(world, start, 10 * 24, quiet);
    const wire = 'Hanbit Semiconductor to build $12 billion memory chip plant in Yongin, creating 3,000 jobs';
    const runAt = at + 50 * 60_000;
    const copies = Array.from({ length: 200 }, (_, i) =>
      spikeArticle(`wire-${i}`, i % 2 === 0 ? wire : `[속보] ${wire}`, runAt - (i % 40) * 60_000, `M${i}`),
    );
    await world.run(runAt, copies);
    at += HOUR;
    for (let hour = 0; hour < 3; hour++) {
      await world.run(at + 50 * 60_000, []);
      at += HOUR;
    }
    expect(world.spikeMessages()).toHaveLength(0);
    const record = world.spikes.records.get('chips');
    const counts = record?.detector.counts ?? [];
    // The wire story's hour counted one new story.
    expect(counts[counts.length - 3]).toBe(1);
  });

  it('after a rule is turned off for three days and on again, takes those days as unknown, not as zeros: no alert on ordinary hours', async () => {
    const chips = spikeRule('chips');
    const other = spikeRule('other');
    // The other rule keeps the runs (and their heartbeat) going while chips is off.
    const world = new SpikeWorld(start, [chips, other], [spikeAudience()]);
    const next = headlines(11);
    const perHour = (hour: number) => (hour % 24 >= 8 && hour % 24 < 20 ? 24 : 12);
    const play = async (fromHour: number, hours: number) => {
      for (let hour = fromHour; hour < fromHour + hours; hour++) {
        const at = start + hour * HOUR + 50 * 60_000;
        const articles = Array.from({ length: perHour(hour) }, (_, i) =>
          spikeArticle(`a${hour}-${i}`, next(), at - (i + 1) * 60_000),
        );
        await world.run(at, articles);
      }
    };
    await play(0, 14 * 24);
    world.rules = [other];
    await play(14 * 24, 3 * 24);
    world.rules = [chips, other];
    await play(17 * 24, 24);
    expect(world.spikeMessages()).toEqual([]);
    const record = world.spikes.records.get('chips');
    const countOf = (hour: number) =>
      record?.detector.counts[Math.floor(start / HOUR) + hour - (record?.detector.start ?? 0)];
    // Its last hour on was watched; the 72 hours off were not; from the hour it was back on it counts again.
    expect(countOf(14 * 24 - 1)).toBe(perHour(14 * 24 - 1));
    for (let hour = 14 * 24; hour < 17 * 24; hour++) expect(countOf(hour)).toBe(-1);
    expect(countOf(17 * 24)).toBe(perHour(17 * 24));
  });

  it('does not send an episode again that ended while its rule was off for longer than the ledger keeps it', async () => {
    const chips = spikeRule('chips');
    const other = spikeRule('other');
    const world = new SpikeWorld(start, [chips, other], [spikeAudience()]);
    let at = await playBaseline(world, start, 10 * 24, quiet);
    const next = headlines(7);
    // The burst opens an episode (one alert); the rule is turned off while the episode is still open.
    for (let hour = 0; hour < 2; hour++) {
      const runAt = at + 50 * 60_000;
      await world.run(
        runAt,
        Array.from({ length: 40 }, (_, i) => spikeArticle(`burst${hour}-${i}`, next(), runAt - (i + 1) * 60_000)),
      );
      at += HOUR;
    }
    // Every rule of the world sees every article: the other rule has an episode of its own.
    const chipsAlerts = () =>
      world.spikeMessages().filter((message) => message.key.articleKey.startsWith('spike:chips:'));
    expect(chipsAlerts()).toHaveLength(1);
    expect(world.spikes.records.get('chips')?.alert?.closedAt).toBeUndefined();
    world.rules = [other];
    for (let hour = 0; hour < 16 * 24; hour += 6) await world.run(at + hour * HOUR + 50 * 60_000, []);
    // Sixteen days on, the ledger (14 days) no longer holds the alert; the rule is turned on again.
    for (const id of [...world.state.ledger.keys()]) if (id.includes('spike:')) world.state.ledger.delete(id);
    world.rules = [chips, other];
    await world.run(at + 16 * 24 * HOUR + 50 * 60_000, []);
    expect(chipsAlerts()).toHaveLength(1);
    expect(world.spikes.records.get('chips')?.alert).toMatchObject({ settled: true, closedAt: expect.any(Number) });
  });

  it('still sends an alert SNS refused while the episode was open, after an outage of more than a day', async () => {
    const world = new SpikeWorld(start, [spikeRule()], [spikeAudience()]);
    let at = await playBaseline(world, start, 10 * 24, quiet);
    const next = headlines(99);
    const refused = {
      add: async () => Promise.reject(new Error('SNS publish failed (injected)')),
      flush: async () => undefined,
    };
    for (let hour = 0; hour < 3; hour++) {
      const runAt = at + 50 * 60_000;
      const burst =
        hour < 2
          ? Array.from({ length: 40 }, (_, i) => spikeArticle(`burst${hour}-${i}`, next(), runAt - (i + 1) * 60_000))
          : [];
      await world.run(runAt, burst, { step: (step) => step.deliver(refused).catch(() => undefined) });
      at += HOUR;
    }
    expect(world.spikeMessages()).toEqual([]);
    // Thirty hours without a run (the provider was down), then runs again.
    at += 30 * HOUR;
    for (let hour = 0; hour < 2; hour++) await world.run(at + hour * HOUR + 50 * 60_000, []);
    expect(world.spikeMessages()).toHaveLength(1);
  });

  it('dates every write of a record, so its TTL counts from the last write, not from its creation', async () => {
    const world = new SpikeWorld(start, [spikeRule()], [spikeAudience()]);
    const end = await playBaseline(world, start, 36, () => 3);
    const record = world.spikes.records.get('chips');
    expect(record?.version).toBeGreaterThan(30);
    // The last run was in the last hour played; the record was created in the first.
    expect(record?.updatedAt).toBeGreaterThan(end - HOUR);
  });

  it('counts nothing twice when a run reads the same articles again', async () => {
    const world = new SpikeWorld(start, [spikeRule()], [spikeAudience()]);
    const next = headlines(3);
    const runAt = start + 20 * 60_000;
    const articles = Array.from({ length: 5 }, (_, i) => spikeArticle(`a${i}`, next(), runAt - i * 60_000));
    await world.run(runAt, articles);
    await world.run(runAt + 5 * 60_000, articles);
    await world.run(runAt + 10 * 60_000, articles.slice(0, 2));
    const record = world.spikes.records.get('chips');
    expect(record?.open.find((open) => open.bucket === Math.floor(start / HOUR))?.stories).toHaveLength(5);
    expect(record === undefined ? -2 : evaluatedThrough(record)).toBe(Math.floor(start / HOUR) - 1);
  });

  /** Ten quiet days, then a burst of 40 new stories an hour for four hours (it doubles: escalated). */
  async function escalatingBurst(world: SpikeWorld): Promise<number> {
    let at = await playBaseline(world, start, 10 * 24, quiet);
    const next = headlines(31);
    for (let hour = 0; hour < 4; hour++) {
      const runAt = at + 50 * 60_000;
      await world.run(
        runAt,
        Array.from({ length: 40 }, (_, i) => spikeArticle(`esc${hour}-${i}`, next(), runAt - (i + 1) * 60_000)),
      );
      at += HOUR;
    }
    for (let hour = 0; hour < 3; hour++) {
      await world.run(at + 50 * 60_000, []);
      at += HOUR;
    }
    return at;
  }
  const updates = (world: SpikeWorld) =>
    world.notifier.published.filter((message) => message.key.articleKey.startsWith('update:spike:'));

  it('tells an audience with updates: notify once that the episode doubled, after the alert', async () => {
    const world = new SpikeWorld(start, [spikeRule()], [spikeAudience('desk', { updates: 'notify' })]);
    await escalatingBurst(world);
    expect(world.spikeMessages()).toHaveLength(1);
    expect(updates(world).map((message) => message.key.articleKey)).toEqual([
      expect.stringMatching(/^update:spike:chips:.*#status=ESCALATED$/),
    ]);
    const [alert, update] = world.notifier.published.filter((message) => message.key.articleKey.includes('spike:'));
    expect(alert?.key.articleKey).toMatch(/^spike:/);
    expect(update?.key.articleKey).toMatch(/^update:spike:/);
  });

  // An escalation is news, not a correction of an alert the audience has: it was sent at once, in
  // quiet hours and digest mode, before the alert it updates (found by a reviewer).
  it.each([
    ['quiet hours', { quietHours: { start: '00:00', end: '23:59' } }],
    ['digest mode', { deliveryMode: 'digest', digestTimes: ['23:59'] }],
    ['a daily budget used up', { dailyBudget: 1 }],
  ])('sends no escalation while the alert is held (%s), nor in quiet hours', async (_, settings) => {
    const world = new SpikeWorld(start, [spikeRule()], [spikeAudience('desk', { updates: 'notify', ...settings })]);
    if ('dailyBudget' in settings) {
      // The day's one alert is gone before the burst: the spike alert is held for the digest.
      world.state.dailyCounts.set('desk|2026-10-15', 1);
    }
    await escalatingBurst(world);
    expect(world.spikeMessages()).toEqual([]);
    expect(updates(world)).toEqual([]);
    expect(world.counts.notificationsHeld).toBeGreaterThan(0);
  });

  // The other side of the deferral: once the digest that carried the alert went out, the next run
  // outside the quiet hours sends the escalation, once, after the alert (found missing from the
  // tests by a reviewer).
  it('sends the escalation once the digest carried the alert, after it and only once', async () => {
    const audience = spikeAudience('desk', { updates: 'notify', quietHours: { start: '00:00', end: '03:30' } });
    const world = new SpikeWorld(start, [spikeRule()], [audience]);
    let at = await playBaseline(world, start, 10 * 24, quiet);
    const next = headlines(31);
    const sent: { at: number; key: string }[] = [];
    for (let hour = 0; hour < 8; hour++) {
      const runAt = at + 50 * 60_000;
      const before = world.notifier.published.length;
      await world.run(
        runAt,
        hour < 4
          ? Array.from({ length: 40 }, (_, i) => spikeArticle(`esc${hour}-${i}`, next(), runAt - (i + 1) * 60_000))
          : [],
      );
      await releaseDueDigests({
        state: world.state,
        notifier: world.notifier,
        log: world.log,
        now: () => runAt,
        audiences: new Map([['desk', audience]]),
        publishSignal: new AbortController().signal,
        counts: { ...emptyDigestCounts(), notificationsFailed: 0, notificationsUnrenderable: 0 },
      });
      for (const message of world.notifier.published.slice(before))
        sent.push({ at: runAt, key: message.key.articleKey });
      at += HOUR;
    }
    const digest = sent.findIndex((entry) => entry.key.startsWith('digest:'));
    const escalation = sent.findIndex((entry) => entry.key.startsWith('update:spike:'));
    expect(digest).toBeGreaterThanOrEqual(0);
    expect(escalation).toBeGreaterThan(digest);
    expect(sent.filter((entry) => entry.key.startsWith('update:spike:'))).toHaveLength(1);
    // Not inside the quiet hours: the first run after 03:30, which released the digest, deferred it once more at most.
    expect(new Date(sent[escalation]?.at ?? 0).toISOString().slice(11, 16) >= '03:30').toBe(true);
    expect(world.counts.updatesDeferred).toBeGreaterThan(0);
  });

  // A held spike alert was the last entry of its digest, under "Other", with no figures, and the
  // SMS digest never named it (found by a reviewer).
  it('lists a held spike alert first in the digest, with its figures, on every channel', async () => {
    const audience = spikeAudience('desk', { quietHours: { start: '00:00', end: '06:00' } });
    const world = new SpikeWorld(start, [spikeRule()], [audience]);
    const at = await escalatingBurst(world);
    // Three ordinary articles held in the same quiet hours: a larger group than the spike's.
    const pipeline = world.pipeline();
    world.clock = at - 5 * HOUR;
    await pipeline.add(
      [1, 2, 3].map((n) => ({
        audienceId: 'desk',
        article: spikeArticle(`plain-${n}`, `Harbour council budget vote ${n}`, world.clock - n * 60_000),
        rules: [{ ruleId: 'chips', urgent: false, reasons: [{ kind: 'keyword' as const, term: 'budget' }] }],
      })),
    );
    await pipeline.flush();
    expect(world.spikeMessages()).toEqual([]);
    const published = world.notifier.published.length;
    const counts = { ...emptyDigestCounts(), notificationsFailed: 0, notificationsUnrenderable: 0 };
    await releaseDueDigests({
      state: world.state,
      notifier: world.notifier,
      log: world.log,
      now: () => at,
      audiences: new Map([['desk', audience]]),
      publishSignal: new AbortController().signal,
      counts,
    });
    const digest = world.notifier.published.slice(published);
    expect(digest).toHaveLength(1);
    const spikeLine = /Coverage spike: chips: \d+ new stories since 00:00 \(about \d+ expected\)/;
    const bodies = JSON.parse(digest[0]?.body ?? '{}') as { default: string; email: string; sms: string };
    // The structured JSON (webhooks, the Slack relay, chat) lists the same first group and entry.
    const structured = JSON.parse(bodies.default).newsAlerts as {
      digest: { groups: { label: string; entries: { article: { title: string } }[] }[] };
    };
    expect(structured.digest.groups[0]?.label).toBe('Coverage spikes');
    expect(structured.digest.groups[0]?.entries[0]?.article.title).toMatch(spikeLine);
    const email = bodies.email.split('\n');
    const firstGroup = email.findIndex((line) => line.startsWith('Coverage spikes'));
    expect(firstGroup).toBeGreaterThan(0);
    expect(email.findIndex((line) => line.startsWith('Economy'))).toBeGreaterThan(firstGroup);
    expect(email[firstGroup + 1]).toMatch(new RegExp(`^1\\. ${spikeLine.source}`));
    expect(bodies.sms).toMatch(new RegExp(`^Desk: 4 news alerts\\. ${spikeLine.source}`));
  });
});
