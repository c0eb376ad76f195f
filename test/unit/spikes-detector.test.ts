/**
 * The spike detector (functions/core/spikes/detector.ts) and its tail probabilities: one episode
 * per burst, the warm-up, the floors, hysteresis and cool-down, a level shift alerting once, the
 * baseline that past episodes cannot raise, and a detector restored from its stored state
 * continuing exactly as the original (what the run relies on between runs).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { providerDate } from '#core/calendar';
import { formatInZone } from '#core/render';
import { type Backtest, type BacktestRow, textChart } from '#core/spikes/backtest';
import { type BucketVerdict, emptyDetectorState, PRESETS, SpikeDetector, spikeModel } from '#core/spikes/detector';
import { log10UpperTail } from '#core/spikes/tail';
import { seeded } from '#test/spike-world';

const hourly = spikeModel(3_600_000);

/** A detector fed `counts` from bucket 0; returns every verdict. */
function run(
  counts: readonly number[],
  preset = PRESETS.balanced,
): { verdicts: BucketVerdict[]; detector: SpikeDetector } {
  const detector = new SpikeDetector(hourly, preset, emptyDetectorState(0));
  return { verdicts: counts.map((count) => detector.step(count)), detector };
}

/** Poisson counts with a daily rhythm (quiet nights), `weeks` long, from a seed. */
function quietWeeks(weeks: number, rate: number, seed: number): number[] {
  const random = seeded(seed);
  const counts: number[] = [];
  for (let hour = 0; hour < weeks * 168; hour++) {
    const mean = rate * (hour % 24 < 7 ? 0.3 : 1.3);
    let count = 0;
    for (let p = random(); p > Math.exp(-mean); p *= random()) count += 1;
    counts.push(count);
  }
  return counts;
}

const opens = (verdicts: readonly BucketVerdict[]) => verdicts.filter((verdict) => verdict.event === 'open');

describe('tail probabilities', () => {
  it('match the Poisson and geometric closed forms, and stay finite far in the tail', () => {
    // P(X ≥ 5) for Poisson(2) = 1 − e^−2 (1 + 2 + 2 + 4/3 + 2/3).
    expect(10 ** log10UpperTail(5, 2, 1e9)).toBeCloseTo(1 - Math.exp(-2) * 7, 6);
    // Size 1 is geometric: P(X ≥ x) = (μ / (μ + 1))^x.
    expect(10 ** log10UpperTail(5, 2, 1)).toBeCloseTo((2 / 3) ** 5, 9);
    expect(log10UpperTail(0, 3, 5)).toBe(0);
    const far = log10UpperTail(13_479, 50, 5);
    expect(Number.isFinite(far)).toBe(true);
    expect(far).toBeLessThan(-300);
  });

  it('decrease as the count grows, for any mean and size', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.05, max: 500, noNaN: true }),
        fc.double({ min: 0.2, max: 1e6, noNaN: true }),
        fc.integer({ min: 1, max: 2000 }),
        (mean, size, count) => {
          const here = log10UpperTail(count, mean, size);
          expect(here).toBeLessThanOrEqual(0);
          expect(log10UpperTail(count + 1, mean, size)).toBeLessThanOrEqual(here + 1e-9);
        },
      ),
    );
  });
});

describe('the spike detector', () => {
  it('opens one episode for a burst that lasts hours, updates it, and closes it once quiet', () => {
    const counts = quietWeeks(3, 2, 1);
    const burstAt = counts.length;
    counts.push(30, 28, 35, 12, 2, 1, 2, 1, 3, 2);
    const { verdicts } = run(counts);
    const events = verdicts.slice(burstAt).map((verdict) => verdict.event ?? '-');
    expect(events[0]).toBe('open');
    expect(events.filter((event) => event === 'open')).toHaveLength(1);
    expect(events).toContain('update');
    expect(events).toContain('close');
    const opened = verdicts[burstAt];
    expect(opened?.episode).toMatchObject({ since: burstAt, observed: 30 });
  });

  it('stays quiet on three weeks of ordinary news, and does not alert during its warm-up', () => {
    const counts = quietWeeks(3, 2, 2);
    expect(opens(run(counts).verdicts)).toHaveLength(0);
    // A burst on day two: significant, but the warm-up (three days) holds it.
    const early = quietWeeks(1, 2, 3);
    early[40] = 40;
    const { verdicts } = run(early.slice(0, 60));
    expect(verdicts[40]?.held).toBe('warm-up');
    expect(opens(verdicts)).toHaveLength(0);
  });

  it('needs the preset’s floor: 4 stories on a rule that sees one a week do not alert', () => {
    const counts = quietWeeks(3, 0.005, 4);
    counts.push(4);
    const { verdicts } = run(counts);
    const last = verdicts.at(-1);
    expect(last?.score).toBeGreaterThan(PRESETS.balanced.openAt);
    expect(last?.held).toBe('floor');
  });

  it('does not alert again within the cool-down after an episode closed', () => {
    const counts = quietWeeks(3, 2, 5);
    const first = counts.length;
    counts.push(30, 2, 1, 2, 1); // opens, then closes after two quiet hours
    counts.push(30); // within six hours of the close
    const { verdicts } = run(counts);
    expect(verdicts[first]?.event).toBe('open');
    expect(verdicts.at(-1)?.held).toBe('cool-down');
    expect(opens(verdicts.slice(first))).toHaveLength(1);
  });

  it('alerts once at a level shift, then takes the new level as normal', () => {
    const counts = quietWeeks(3, 2, 6);
    const shiftAt = counts.length;
    const shifted = quietWeeks(2, 10, 7);
    const { verdicts } = run([...counts, ...shifted]);
    const after = verdicts.slice(shiftAt);
    expect(opens(after)).toHaveLength(1);
    // Within two days the expectation has moved to the new level (midday: 13 an hour now).
    expect(after[60]?.expected).toBeGreaterThan(6);
  });

  it('keeps past episodes out of the baseline: a week-old burst does not raise next week’s expectation', () => {
    const counts = quietWeeks(3, 2, 8);
    const burstAt = counts.length - 168;
    counts.splice(burstAt, 3, 40, 40, 40);
    const { verdicts } = run([...counts, 40]);
    // Same hour of the week as the burst, a week later: expected stays near the usual two or so.
    expect(verdicts.at(-1)?.expected).toBeLessThan(4);
    expect(verdicts.at(-1)?.event).toBe('open');
  });

  it('learns an hour that is busy every day (a market close): alerts on its first days at most, not every day', () => {
    for (const fromWeek of [0, 4]) {
      const counts = quietWeeks(8, 2, 21 + fromWeek);
      for (let day = fromWeek * 7; day < 56; day++) counts[day * 24 + 15] = 38 + (day % 5);
      const alerts = opens(run(counts).verdicts);
      expect(alerts.length, `from week ${fromWeek}`).toBeLessThanOrEqual(4);
      // None once it has been there a week.
      expect(alerts.filter((verdict) => verdict.bucket >= (fromWeek + 1) * 168)).toEqual([]);
    }
  });

  it('learns an hour that is busy once a week (a Monday briefing): alerts on its first two weeks at most', () => {
    const counts = quietWeeks(8, 2, 23);
    for (let week = 1; week < 8; week++) counts[week * 168 + 9] = 30 + week;
    const alerts = opens(run(counts).verdicts);
    expect(alerts.length).toBeLessThanOrEqual(2);
    expect(alerts.filter((verdict) => verdict.bucket >= 3 * 168)).toEqual([]);
  });

  it('a story that is big for four days running still alerts on its third day: a pattern takes four days of seven', () => {
    const counts = quietWeeks(5, 2, 25);
    const firstDay = 3 * 7;
    for (let day = firstDay; day < firstDay + 4; day++) {
      for (let hour = 10; hour < 17; hour++) counts[day * 24 + hour] = 20 + hour - 10;
    }
    const alerts = opens(run(counts).verdicts).map((verdict) => Math.floor(verdict.bucket / 24));
    expect(alerts).toEqual(expect.arrayContaining([firstDay, firstDay + 2]));
  });

  it('after a story that came back five days running ends, the other hours do not start alerting', () => {
    for (const seed of [27, 28, 29]) {
      const counts = quietWeeks(6, 2, seed);
      const firstDay = 3 * 7;
      for (let day = firstDay; day < firstDay + 5; day++) {
        for (let hour = 10; hour < 17; hour++) counts[day * 24 + hour] = 18 + ((day + hour) % 5);
      }
      for (const preset of [PRESETS.balanced, PRESETS.more]) {
        const after = opens(run(counts, preset).verdicts).filter((verdict) => verdict.bucket >= (firstDay + 5) * 24);
        expect(after, `seed ${seed}`).toEqual([]);
      }
    }
  });

  it('a burst, then a new normal from the same hour the next day: the expectation follows it within a day or two', () => {
    for (const seed of [31, 32, 33, 34]) {
      const counts = quietWeeks(5, 2, seed);
      const day = 14;
      for (let hour = 9; hour < 12; hour++) counts[day * 24 + hour] = (counts[day * 24 + hour] ?? 0) * 4 + 8;
      const random = seeded(seed + 100);
      // Three times the usual rate from 09:00 the next day on: a level shift, a day after the burst.
      for (let bucket = (day + 1) * 24 + 9; bucket < counts.length; bucket++) {
        const mean = 3 * 2 * (bucket % 24 < 7 ? 0.3 : 1.3);
        let count = 0;
        for (let p = random(); p > Math.exp(-mean); p *= random()) count += 1;
        counts[bucket] = count;
      }
      const { verdicts } = run(counts);
      // Each day from the second after the shift expects at least 0.6 of what came (a level stuck
      // at 1, when the shift's hours were left out of it, expected about half for a week).
      for (let d = day + 2; d < 35; d++) {
        const of = (from: number) => verdicts.slice(from * 24, from * 24 + 24);
        const expected = of(d).reduce((sum, verdict) => sum + verdict.expected, 0);
        const counted = of(d).reduce((sum, verdict) => sum + verdict.count, 0);
        expect(expected, `seed ${seed}, day ${d}`).toBeGreaterThanOrEqual(0.6 * counted);
      }
      expect(
        opens(verdicts).filter((verdict) => verdict.bucket >= (day + 7) * 24),
        `seed ${seed}`,
      ).toEqual([]);
    }
  });

  it('daily buckets: a recurring pair leaves the level and the dispersion something to rest on', () => {
    const daily = spikeModel(86_400_000);
    const random = seeded(35);
    const counts = Array.from({ length: 70 }, () => {
      let count = 0;
      for (let p = random(); p > Math.exp(-40); p *= random()) count += 1;
      return count;
    });
    counts[20] = 200;
    counts[27] = 200;
    const detector = new SpikeDetector(daily, PRESETS.balanced, emptyDetectorState(0));
    const dispersions = counts.map((count) => {
      detector.step(count);
      return detector.state().dispersion;
    });
    // Re-estimated every day (a day is one bucket): it keeps moving after the pair, not frozen.
    expect(new Set(dispersions.slice(30, 46)).size).toBeGreaterThan(3);
  });

  it('two bursts a day apart do not raise the expectation at other hours of the next day', () => {
    const counts = quietWeeks(4, 2, 26);
    const day = 3 * 7;
    for (const d of [day, day + 1]) for (let hour = 13; hour < 16; hour++) counts[d * 24 + hour] = 30;
    const morning = (day + 2) * 24 + 6;
    counts[morning] = 16;
    const burst = counts.slice(0, morning + 1);
    const quiet = [...burst];
    for (const d of [day, day + 1])
      for (let hour = 13; hour < 16; hour++) quiet[d * 24 + hour] = counts[d * 24 + 12] ?? 2;
    const withBursts = run(burst).verdicts[morning];
    const without = run(quiet).verdicts[morning];
    expect(withBursts?.expected).toBeLessThanOrEqual((without?.expected ?? 0) * 1.25 + 0.1);
    expect(withBursts?.event).toBe('open');
  });

  it('still alerts at a busy hour it has learned when the count goes far above that hour’s usual', () => {
    const counts = quietWeeks(7, 2, 24);
    for (let day = 0; day < 49; day++) counts[day * 24 + 15] = 38 + (day % 5);
    const burstAt = 48 * 24 + 15;
    counts[burstAt] = 220;
    const { verdicts } = run(counts);
    expect(verdicts[burstAt]?.expected).toBeGreaterThan(30);
    expect(verdicts[burstAt]?.event).toBe('open');
  });

  it('fewer only alerts on the largest jump of the last 14 days', () => {
    const counts = quietWeeks(3, 2, 9);
    const first = counts.length;
    counts.push(60, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2);
    const second = counts.length;
    counts.push(25);
    const fewer = run(counts, PRESETS.fewer).verdicts;
    expect(fewer[first]?.event).toBe('open');
    expect(fewer[second]?.held).toBe('record');
    // Balanced alerts on both.
    expect(run(counts).verdicts[second]?.event).toBe('open');
  });

  it('comparing jumps by level: only the highest level of a span in the record span opens, whatever the hour', () => {
    const byLevel = { ...PRESETS.fewer, recordOf: 'level' as const };
    const counts = quietWeeks(3, 2, 9);
    // Noon: 40 stories where about 2.6 are usual.
    const day = counts.length + 12;
    // Twelve days later at 03:00: 32 where under one is usual: a larger surprise, a smaller jump.
    const night = day + 12 * 24 + 15;
    // Two more days, noon: 80.
    const larger = night + 57;
    counts.push(...quietWeeks(3, 2, 10).slice(0, larger - counts.length + 3));
    counts[day] = 40;
    counts[night] = 32;
    counts[larger] = 80;
    const { verdicts, detector } = run(counts, byLevel);
    expect(opens(verdicts).map((verdict) => verdict.bucket)).toEqual([day, larger]);
    expect(verdicts[night]?.held).toBe('record');
    // Compared by significance (fewer as shipped), the night's surprise is the record.
    expect(run(counts, PRESETS.fewer).verdicts[night]?.event).toBe('open');
    // The state keeps a level per span and bucket of the record span, and no significance.
    const state = detector.state();
    expect(state.scores).toBeUndefined();
    expect(state.levels?.map((levels) => levels.length)).toEqual(hourly.scales.map(() => 14 * 24));
  });

  it('after a gap shorter than its history, takes the baseline from the days counted, not from one week’s few hours', () => {
    // Three weeks counted, 23 days unknown (rows missing), three weeks counted with a burst two
    // hours in. Only one of the four week-ago hours was counted: the weekly baseline would rest on
    // three values, and these seeds' first weeks after the gap alerted on that.
    for (const seed of [5, 8, 10]) {
      const after = quietWeeks(3, 2, seed + 100);
      after[2] = 40;
      after[3] = 35;
      const resume = 3 * 168 + 23 * 24;
      const { verdicts } = run([...quietWeeks(3, 2, seed), ...new Array<number>(23 * 24).fill(-1), ...after]);
      const opened = opens(verdicts.slice(resume, resume + 2 * 168)).map((verdict) => verdict.bucket - resume);
      expect(opened, `seed ${seed}`).toEqual([2]);
    }
  });

  it('a week-ago hour inside a past episode is no counted week: the baseline does not rest on the other week alone', () => {
    // An episode at noon on day 5 (masked), and a quiet dip at the same hour a week later: two
    // weeks on, the weekly baseline would have only that dip's three zeros, and a usual hour alerted.
    const hour = 5 * 24 + 12;
    for (const seed of [1, 2, 3]) {
      const counts = quietWeeks(4, 5, seed);
      for (const bucket of [hour - 1, hour, hour + 1]) counts[bucket] = 80;
      for (const bucket of [hour + 167, hour + 168, hour + 169]) counts[bucket] = 0;
      counts[hour + 336] = 8;
      const { verdicts } = run(counts);
      expect(opens(verdicts.slice(hour + 300, hour + 360)), `seed ${seed}`).toEqual([]);
      expect(verdicts[hour + 336]?.expected, `seed ${seed}`).toBeGreaterThan(2);
    }
  });

  it('says from which bucket the warm-up lets an alert through, as the verdicts show it', () => {
    const fresh = new SpikeDetector(hourly, PRESETS.balanced, emptyDetectorState(100));
    expect(fresh.alertsPossibleFrom()).toBe(100 + 72);
    const { detector } = run(quietWeeks(2, 4, 9));
    expect(detector.alertsPossibleFrom()).toBe(detector.next);
    // After a gap longer than the history kept: three counted days again.
    const resume = 2 * 168 + 28 * 24;
    const { detector: resumed, verdicts } = run([
      ...quietWeeks(2, 4, 9),
      ...new Array<number>(28 * 24).fill(-1),
      ...quietWeeks(1, 4, 10).slice(0, 30),
    ]);
    const from = resumed.alertsPossibleFrom();
    expect(from).toBeGreaterThan(resume + 30);
    expect(verdicts.slice(resume).every((verdict) => verdict.event !== 'open')).toBe(true);
    // No earlier hour could alert, however large: a burst an hour before it is held as warm-up,
    // and one at it is judged.
    const after = quietWeeks(1, 4, 10);
    for (const [at, held] of [
      [from - 1, true],
      [from, false],
    ] as const) {
      const probe = new SpikeDetector(hourly, PRESETS.balanced, JSON.parse(JSON.stringify(resumed.state())));
      let verdict: BucketVerdict | undefined;
      for (let bucket = probe.next, i = 30; bucket <= at; bucket++, i++)
        verdict = probe.step(bucket === at ? 200 : (after[i % after.length] as number));
      expect(verdict?.held === 'warm-up', `burst at resume + ${at - resume}`).toBe(held);
    }
  });

  it('says when alerts become possible after a gap just under the history kept, as days before it slide out', () => {
    // Two weeks counted, a gap of 27 days 13 hours, five hours counted again: the days before the
    // gap are still in the four weeks kept now, but leave them before three days are counted since.
    const { detector } = run([
      ...quietWeeks(2, 4, 9),
      ...new Array<number>(27 * 24 + 13).fill(-1),
      ...quietWeeks(1, 4, 10).slice(0, 5),
    ]);
    const from = detector.alertsPossibleFrom();
    const filler = quietWeeks(1, 4, 11);
    const opensAt = (at: number): boolean => {
      const probe = new SpikeDetector(hourly, PRESETS.balanced, JSON.parse(JSON.stringify(detector.state())));
      let verdict: BucketVerdict | undefined;
      for (let bucket = probe.next, i = 0; bucket <= at; bucket++, i++) {
        verdict = probe.step(bucket === at ? 400 : (filler[i % filler.length] as number));
      }
      return verdict?.event === 'open';
    };
    // spikes explain says "no spike alert before <from>": a burst at it opens, one an hour before not.
    expect(opensAt(from), `from = next + ${from - detector.next}`).toBe(true);
    expect(opensAt(from - 1)).toBe(false);
  });

  it('after a gap longer than its history, warms up again, and a burst it could not judge does not skew next week', () => {
    const gap = 28 * 24;
    const resume = 3 * 168 + gap;
    const after = quietWeeks(3, 2, 107);
    after[2] = 40; // nothing counted in the four weeks kept: no baseline
    after[3] = 35;
    after[40] = 40; // a day counted: held by the warm-up (three days of counts)
    after[80] = 40; // three days counted: alerts
    const counts = [...quietWeeks(3, 2, 7), ...new Array<number>(gap).fill(-1), ...after];
    const { verdicts } = run(counts);
    expect(verdicts[resume + 2]?.expected).toBeNaN();
    expect(verdicts[resume + 40]?.held).toBe('warm-up');
    expect(opens(verdicts.slice(resume)).map((verdict) => verdict.bucket - resume)).toEqual([80]);
    // A week later the unjudged burst is one day of seven in the baseline, not the only week of it.
    expect(verdicts[resume + 170]?.expected).toBeLessThan(3);
    // The baseline reaches back no further than the stored state keeps.
    const first = new SpikeDetector(hourly, PRESETS.balanced, emptyDetectorState(0));
    for (const count of counts.slice(0, resume + 30)) first.step(count);
    const restored = new SpikeDetector(hourly, PRESETS.balanced, JSON.parse(JSON.stringify(first.state())));
    expect(counts.slice(resume + 30).map((count) => restored.step(count))).toEqual(verdicts.slice(resume + 30));
  });

  it('gives the band above any expected count evaluate accepts (up to 10^12), past 2^31 included', () => {
    const detector = new SpikeDetector(spikeModel(3_600_000), PRESETS.balanced, emptyDetectorState(0));
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e12, noNaN: true }), (expected) => {
        const band = detector.upperBand(expected);
        expect(Number.isFinite(band)).toBe(true);
        expect(band).toBeGreaterThan(expected);
      }),
      { examples: [[5e8], [1e9], [3e9], [1e12]] },
    );
    expect(detector.upperBand(Number.POSITIVE_INFINITY)).toBeNaN();
  });

  it('restored from a state edited by hand to episodes of any length, steps as with them cut to the counts it holds', () => {
    const counts = quietWeeks(5, 3, 7);
    const first = new SpikeDetector(hourly, PRESETS.balanced, emptyDetectorState(0));
    for (const count of counts.slice(0, 700)) first.step(count);
    const state = first.state();
    const end = state.start + state.counts.length;
    fc.assert(
      fc.property(
        fc.integer({ min: -1, max: 2_000_000_000 }),
        fc.integer({ min: -1, max: 2_000_000_000 }),
        (from, to) => {
          const edited = new SpikeDetector(hourly, PRESETS.balanced, {
            ...state,
            episodes: [...state.episodes, { id: 'edited', from, to, levelShift: false }],
          });
          const cut = new SpikeDetector(hourly, PRESETS.balanced, {
            ...state,
            episodes: [
              ...state.episodes,
              { id: 'edited', from: Math.max(from, state.start), to: Math.min(to, end), levelShift: false },
            ],
          });
          const rest = counts.slice(700, 720);
          expect(rest.map((count) => edited.step(count))).toEqual(rest.map((count) => cut.step(count)));
        },
      ),
      {
        examples: [
          [0, 2_000_000_000],
          [-1, 2_000_000_000],
        ],
        numRuns: 40,
      },
    );
  });

  it('switched to fewer from a preset that keeps no record span, judges the next jump against the two weeks before it', () => {
    const counts = quietWeeks(2, 1.5, 21);
    counts[8 * 24 + 12] = 100; // the largest jump, four days before the next one, at the same hour
    const byLevel = { ...PRESETS.fewer, recordOf: 'level' as const };
    for (const fewer of [PRESETS.fewer, byLevel]) {
      const continued = (first: typeof PRESETS.balanced) => {
        const detector = new SpikeDetector(hourly, first, emptyDetectorState(0));
        for (const count of counts.slice(0, 12 * 24)) detector.step(count);
        const switched = new SpikeDetector(hourly, fewer, JSON.parse(JSON.stringify(detector.state())));
        return counts.slice(12 * 24, 13 * 24).map((count, hour) => switched.step(hour === 12 ? 30 : count));
      };
      const allAlong = continued(fewer);
      // The 30-story jump is held back as no record, whatever the rule used before.
      expect(allAlong[12]?.held).toBe('record');
      expect(opens(allAlong)).toEqual([]);
      for (const before of [PRESETS.balanced, PRESETS.more]) expect(continued(before)).toEqual(allAlong);
    }
  });

  it('restored every day for ten weeks, continues exactly as before with episodes recurring and leaving its history', () => {
    for (const seed of [1, 2, 3]) {
      const counts = quietWeeks(10, 2, 30 + seed);
      // A daily peak for three weeks, a weekly one, and two bursts a day apart: recurring episodes
      // that later fall out of the four weeks kept.
      for (let day = 7; day < 28; day++) counts[day * 24 + 15] = 40;
      for (let week = 1; week < 10; week++) counts[week * 168 + 9 + seed] = 30;
      for (const day of [40, 41]) counts[day * 24 + 20] = 35;
      for (const preset of [PRESETS.balanced, PRESETS.more]) {
        const whole = run(counts, preset).verdicts;
        let state = emptyDetectorState(0);
        const daily: BucketVerdict[] = [];
        for (let from = 0; from < counts.length; from += 24) {
          const detector = new SpikeDetector(hourly, preset, JSON.parse(JSON.stringify(state)));
          for (const count of counts.slice(from, from + 24)) daily.push(detector.step(count));
          state = detector.state();
        }
        expect(daily).toEqual(whole);
      }
    }
  });

  it('continues exactly as before when restored from its stored state, at any point', () => {
    const presets = [PRESETS.fewer, { ...PRESETS.fewer, recordOf: 'level' as const }, PRESETS.balanced];
    fc.assert(
      // The cut falls before, inside (with quiet hours in it) or after an episode.
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 400, max: 780 }),
        fc.integer({ min: -4, max: 20 }),
        fc.constantFrom(...presets),
        (seed, cut, offset, preset) => {
          const counts = quietWeeks(5, 3, seed);
          // A larger burst a day or more before: the record presets hold the later one back,
          // which only a state that kept the record span's history can repeat.
          counts[cut - 30] = 70;
          counts[cut + offset] = 45;
          counts[cut + offset + 1] = 40;
          const whole = run(counts, preset).verdicts;
          const first = new SpikeDetector(hourly, preset, emptyDetectorState(0));
          for (const count of counts.slice(0, cut)) first.step(count);
          // What the run stores between runs: plain data, through JSON.
          const stored = JSON.parse(JSON.stringify(first.state()));
          const restored = new SpikeDetector(hourly, preset, stored);
          const rest = counts.slice(cut).map((count) => restored.step(count));
          expect(rest).toEqual(whole.slice(cut));
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('the backtest chart', () => {
  const zone = 'Europe/London';
  const minuteOfDay = (at: number) => {
    const [hours, minutes] = formatInZone(at, zone, 'en-GB', 'time').text.split(':').map(Number);
    return (hours ?? 0) * 60 + (minutes ?? 0);
  };
  const hour = 3_600_000;
  /** Hourly rows from `from` to `to` (UTC), count 2, except `spikeAt`: 40, where balanced opened an episode. */
  const chartOf = (from: string, to: string, spikeAt: string) => {
    const rows: BacktestRow[] = [];
    for (let at = Date.parse(from); at < Date.parse(to); at += hour) {
      const spike = at === Date.parse(spikeAt);
      rows.push({
        at,
        count: spike ? 40 : 2,
        expected: 2,
        band: { fewer: 12, balanced: 10, more: 8 },
        score: 0,
        events: spike ? { balanced: 'open' } : {},
      });
    }
    const backtest: Backtest = {
      ruleId: 'chips',
      preset: 'balanced',
      bucketMs: hour,
      rows,
      episodes: { fewer: [], balanced: [], more: [] },
    };
    return textChart(backtest, (at) => providerDate(at, zone), minuteOfDay);
  };

  it("keeps the repeated hour of the day clocks go back: its spike, its ! and its count in the day's largest", () => {
    // 25 October 2026: 01:00 happens twice in London; the spike is at 23:00 local, the 25th hour.
    const lines = chartOf('2026-10-24T23:00:00Z', '2026-10-25T23:59:00Z', '2026-10-25T23:00:00Z');
    const day = lines.find((line) => line.startsWith('2026-10-25')) ?? '';
    expect(day).toContain('max 40');
    const cells = day.slice(11, 35);
    expect(cells[23]).toBe('█');
    expect(lines[lines.indexOf(day) + 1]?.slice(11).indexOf('!')).toBe(23);
  });

  it('draws an hour of no stories as _, apart from an hour not counted (·) and one not shown (blank)', () => {
    const rows: BacktestRow[] = [0, 0, -1, 3].map((count, i) => ({
      at: Date.parse('2026-11-02T00:00:00Z') + i * hour,
      count,
      expected: 1,
      band: { fewer: 12, balanced: 10, more: 8 },
      score: 0,
      events: {},
    }));
    const backtest: Backtest = {
      ruleId: 'quiet',
      preset: 'balanced',
      bucketMs: hour,
      rows,
      episodes: { fewer: [], balanced: [], more: [] },
    };
    const [line] = textChart(backtest, (at) => providerDate(at, zone), minuteOfDay);
    expect(line?.slice(11, 35)).toBe(`__·█${' '.repeat(20)}`);
  });

  it('places every hour at its local time on the day clocks go forward', () => {
    // 29 March 2026: 01:00 to 02:00 does not exist in London; 14:00 UTC is 15:00 local.
    const lines = chartOf('2026-03-29T00:00:00Z', '2026-03-29T23:00:00Z', '2026-03-29T14:00:00Z');
    const day = lines.find((line) => line.startsWith('2026-03-29')) ?? '';
    const cells = day.slice(11, 35);
    expect(cells[15]).toBe('█');
    expect(cells[1]).toBe(' ');
    expect(lines[lines.indexOf(day) + 1]?.slice(11).indexOf('!')).toBe(15);
  });
});
