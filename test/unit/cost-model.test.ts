/**
 * The cost model (issue 15, item 5): the rules its header promises (one price per row, totals are
 * the sum of the AWS rows, SMS apart, linear in notifications), that incremental reading never
 * costs more where the provider is involved, that every price can be traced to a page and a
 * date, and that the stack facts really come from lib/.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type AwsPrice, awsPrices, type PriceId, type PriceTable } from '../../bench/aws-prices.ts';
import {
  type DayBenchCounts,
  estimateDayCounts,
  lambdaMsFromBench,
  placeholderInputs,
  RESULTS_MD,
  SIZES,
  type StackFacts,
  scenarioFromDayBench,
  stackFactsFromCode,
} from '../../bench/cost-fixture.ts';
import {
  type CostScenario,
  costModel,
  fixedSlope,
  formatUsd,
  renderCostMarkdown,
  renderCostSummary,
  type ScenarioCost,
  SMS_EXAMPLES,
  type Sourced,
  weakestBasis,
} from '../../bench/cost-model.ts';
import {
  costDocument,
  daysFromCostDocument,
  readInputs,
  writeCostDocumentFromDayBench,
} from '../../bench/cost-model-cli.ts';
import { activityMetrics, everyRunMetrics, metricNames } from '../../functions/alert-run/metrics.ts';
import { parseStackConfig } from '../../lib/config.ts';

/** What stackFactsFromCode returned for the shipped stack when this test was written; synthesis is checked once below. */
const facts: StackFacts = {
  intervalMinutes: 5,
  alertMemoryMb: 512,
  relayMemoryMb: 256,
  relayReservedConcurrency: 2,
  logRetentionDays: 90,
  ledgerRetentionDays: 14,
  lateArrivalMinutes: 60,
  fullSweepMinutes: 360,
  incrementalOverlapMinutes: 2,
  pageSize: 100,
  pageConcurrency: 4,
  secretCacheSeconds: 300,
  fixedAlarms: 14,
  alarmsPerDeclaredAudience: 0,
  dashboards: 1,
  customerManagedKeys: 2,
  fixedSecrets: 1,
  webhookStoreShards: 4,
  customMetrics: { everyHour: 19, whenTrouble: 16 },
  note: 'test facts',
};

const inputs = placeholderInputs(facts);
const table = costModel(inputs, awsPrices);

const scale = (s: Sourced, factor: number): Sourced => ({ ...s, value: s.value * factor });
const price = (scenario: CostScenario, prices: PriceTable = awsPrices): ScenarioCost => {
  const [cost] = costModel({ source: 'test', scenarios: [scenario] }, prices).scenarios;
  if (cost === undefined) throw new Error('no scenario priced');
  return cost;
};
const first = (): CostScenario => {
  const scenario = inputs.scenarios[0];
  if (scenario === undefined) throw new Error('the placeholder has no scenarios');
  return scenario;
};
const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);

describe('prices', () => {
  it.each(Object.entries(awsPrices) as [PriceId, AwsPrice][])(
    '%s names its source, the day it was read and its status',
    (_id, p) => {
      expect(p.source).toMatch(/https:\/\/\S+/);
      expect(p.readOn).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      if (p.pageDate !== undefined) expect(p.pageDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(['verified', 'third-party', 'assumed']).toContain(p.status);
      expect(p.note.length).toBeGreaterThan(10);
      expect(p.usdPerUnit).toBeGreaterThanOrEqual(0);
      expect(p.freePerMonth).toBeGreaterThanOrEqual(0);
    },
  );

  it('prices DynamoDB on-demand throughput after the November 2024 cut', () => {
    // Before the cut: $1.25 per million writes, $0.25 per million reads.
    expect(awsPrices.dynamoWriteRequestUnit.usdPerUnit * 1e6).toBeCloseTo(0.625);
    expect(awsPrices.dynamoReadRequestUnit.usdPerUnit * 1e6).toBeCloseTo(0.125);
  });

  it('uses every price, and prices nothing from outside the table', () => {
    const used = new Set(
      table.scenarios.flatMap((c) => [...c.rows, ...c.sms, ...c.email.ses].map((row) => row.priceId)),
    );
    expect([...used].sort()).toEqual(Object.keys(awsPrices).sort());
  });
});

describe('costModel', () => {
  it('totals are the sum of the AWS rows, with SMS outside them', () => {
    for (const cost of table.scenarios) {
      expect(cost.totalUsd).toBeCloseTo(sum(cost.rows.map((row) => row.usd)), 9);
      expect(cost.rows.some((row) => row.service === 'SMS')).toBe(false);
      expect(cost.sms.map((row) => row.priceId)).toEqual(SMS_EXAMPLES.map((example) => example.priceId));
    }
  });

  it('doubling the notifications doubles every SNS row', () => {
    const base = first();
    const before = price(base);
    const after = price({ ...base, notificationsPerDay: scale(base.notificationsPerDay, 2) });
    const sns = (cost: ScenarioCost) => cost.rows.filter((row) => row.service === 'SNS');
    expect(sns(before).length).toBeGreaterThanOrEqual(5);
    sns(after).forEach((row, index) => {
      expect(row.usd).toBeCloseTo(2 * (sns(before)[index]?.usd ?? Number.NaN), 9);
    });
    expect(sum(sns(after).map((row) => row.usd))).toBeGreaterThan(0);
  });

  it('phone subscribers change the SMS rows and nothing in the AWS total', () => {
    const base = first();
    const withoutPhones = price({
      ...base,
      sns: {
        ...base.sns,
        subscribersPerAudience: {
          ...base.sns.subscribersPerAudience,
          sms: scale(base.sns.subscribersPerAudience.sms, 0),
        },
      },
    });
    const withPhones = price(base);
    expect(withoutPhones.totalUsd).toBeCloseTo(withPhones.totalUsd, 9);
    expect(withoutPhones.sms.every((row) => row.usd === 0)).toBe(true);
    expect(withPhones.sms.every((row) => row.usd > 0)).toBe(true);
  });

  it('SMS, when audiences have phones, costs more than the whole AWS bill at the largest size', () => {
    const largest = table.scenarios.at(-1);
    expect(largest?.scenario.audiences).toBe(1000);
    expect(largest?.sms[0]?.usd).toBeGreaterThan(largest?.totalUsd ?? Number.POSITIVE_INFINITY);
  });

  it('bills a PublishBatch call by its payload in 64 KB chunks', () => {
    const base = first();
    const big = price({
      ...base,
      sns: {
        ...base.sns,
        messagesPerPublishCall: { ...base.sns.messagesPerPublishCall, value: 10 },
        messageBytes: { ...base.sns.messageBytes, value: 60 * 1024 },
      },
    });
    const publish = big.rows.find((row) => row.priceId === 'snsPublishRequest');
    const calls = (base.notificationsPerDay.value * table.daysPerMonth) / 10;
    // 10 × 60 KiB = 600 KiB: ten chunks a call.
    expect(publish?.quantity).toBeCloseTo(calls * 10, 6);
  });

  it('gives the free-tier credit apart, between zero and the total', () => {
    for (const cost of table.scenarios) {
      expect(cost.freeTierCreditUsd).toBeGreaterThan(0);
      expect(cost.freeTierCreditUsd).toBeLessThan(cost.totalUsd);
    }
    // Alert-run requests (8,760 a month) are far below the free million: the credit covers them.
    const requests = table.scenarios[0]?.rows.find((row) => row.item === 'alert run: requests');
    const noFree = Object.fromEntries(
      Object.entries(awsPrices).map(([id, p]) => [id, id === 'lambdaRequest' ? p : { ...p, freePerMonth: 0 }]),
    ) as PriceTable;
    const onlyRequests = price(first(), noFree);
    const relayRequests = onlyRequests.rows.find((row) => row.item === 'Slack relay: requests');
    expect(onlyRequests.freeTierCreditUsd).toBeCloseTo((requests?.usd ?? 0) + (relayRequests?.usd ?? 0), 9);
  });

  it('turns a development-machine run into billed Lambda ms: CPU slowed to 512 MB, plus real provider waits', () => {
    expect(lambdaMsFromBench({ cpuMs: 1000, concurrentPages: 0, sequentialPages: 0 }, facts)).toBeCloseTo(
      (1000 * 1769) / 512,
      6,
    );
    expect(lambdaMsFromBench({ cpuMs: 0, concurrentPages: 8, sequentialPages: 2 }, facts)).toBe(
      (8 * 300) / 4 + 2 * 300,
    );
  });

  it('labels a row only as firm as its softest input', () => {
    expect(weakestBasis(['measured', 'code'])).toBe('code');
    expect(weakestBasis(['measured', 'assumed', 'code'])).toBe('assumed');
    const day: DayBenchCounts = {
      articlesPerDay: 10_000,
      audiences: 100,
      reading: 'today',
      runsPerDay: 288,
      providerPagesPerDay: 16_000,
      articlesReadPerDay: 1_500_000,
      notificationsPerDay: 2_700,
      lambdaMsPerRun: 4_000,
    };
    const cost = price(scenarioFromDayBench(day, facts, { source: 'test day' }));
    const row = (item: string) => cost.rows.find((r) => r.item === item);
    expect(row('alert run: requests')?.basis).toBe('measured');
    expect(row('alert run: duration')?.basis).toBe('code'); // memory comes from lib/
    expect(row('email deliveries')?.basis).toBe('assumed'); // subscribers per audience
    expect(cost.scenario.provider.pagesPerDay).toMatchObject({ value: 16_000, basis: 'measured' });
  });

  it("counts the same alarms and at most the webhook and endpoint stores' secrets, whatever the audiences", () => {
    const quantity = (audiences: number, priceId: string) =>
      table.scenarios.find((c) => c.scenario.audiences === audiences)?.rows.find((row) => row.priceId === priceId)
        ?.quantity;
    // The Slack webhook store and the HTTPS endpoint store (cli/endpoint-store.ts), four shards each.
    const stores = 2 * facts.webhookStoreShards;
    for (const audiences of [5, 100, 1000]) {
      expect(quantity(audiences, 'cloudWatchAlarm')).toBe(facts.fixedAlarms);
      expect(quantity(audiences, 'secretsManagerSecret')).toBeLessThanOrEqual(facts.fixedSecrets + stores);
    }
    // 500 Slack audiences and 200 HTTPS endpoints fill every shard; 5 audiences (3 with Slack, 1
    // HTTPS endpoint) fill fewer.
    expect(quantity(1000, 'secretsManagerSecret')).toBeCloseTo(facts.fixedSecrets + stores, 3);
    expect(quantity(5, 'secretsManagerSecret')).toBeLessThan(facts.fixedSecrets + 4);
  });

  it('splits every size into a fixed part and a delivery part that add up to the total', () => {
    for (const cost of table.scenarios) {
      expect(cost.fixedUsd + cost.deliveryUsd).toBeCloseTo(cost.totalUsd, 9);
      expect(cost.rows.every((row) => row.part === 'fixed' || row.part === 'delivery')).toBe(true);
      // Nothing that grows with the notifications is in the fixed part.
      const doubled = price({ ...cost.scenario, notificationsPerDay: scale(cost.scenario.notificationsPerDay, 2) });
      expect(doubled.fixedUsd).toBeCloseTo(cost.fixedUsd, 6);
    }
  });

  it('10,000 articles a day × 1,000 audiences: fixed part under $40 a month, under $0.02 for each audience added', () => {
    const of = (audiences: number) =>
      table.scenarios.find(
        (c) =>
          c.scenario.articlesPerDay === 10_000 &&
          c.scenario.audiences === audiences &&
          c.scenario.reading === 'incremental',
      ) as ScenarioCost;
    expect(of(1000).fixedUsd).toBeLessThan(40);
    expect(fixedSlope(table.scenarios, of(1000))).toBeLessThan(0.02);
    // Issue 33: the average too, every fixed item shared out over the audiences.
    expect(of(1000).fixedUsd / 1000).toBeLessThan(0.02);
  });

  it('what one more audience adds is measured from the nearest size, for every row alike', () => {
    const sized = (audiences: number, fixedUsd: number) =>
      ({ fixedUsd, scenario: { articlesPerDay: 10_000, audiences, reading: 'incremental' } }) as ScenarioCost;
    const sizes = [sized(20, 10), sized(100, 12), sized(1000, 15)];
    // 1,000 from 100 (3 / 900), not from 20; 100 from 20 (its nearer neighbour); 20 from 100.
    expect(fixedSlope(sizes, sizes[2] as ScenarioCost)).toBeCloseTo(3 / 900, 9);
    expect(fixedSlope(sizes, sizes[1] as ScenarioCost)).toBeCloseTo(2 / 80, 9);
    expect(fixedSlope(sizes, sizes[0] as ScenarioCost)).toBeCloseTo(2 / 80, 9);
  });

  it('docs/cost.md as generated: fixed cost per audience under $0.02 a month at 1,000 audiences', () => {
    const document = readFileSync(new URL('../../docs/cost.md', import.meta.url), 'utf8');
    const perAudience = [
      ...document.matchAll(
        /^\| ([\d,]+) articles a day × 1,000 audiences \| \$[\d,.]+ \| \$[\d,.]+ \| \$(\d+\.\d{4}) \|/gm,
      ),
    ];
    expect(perAudience).toHaveLength(2);
    for (const match of perAudience) expect(Number(match[2])).toBeLessThan(0.02);
  });
});

describe('today (full re-reads) against incremental reading', () => {
  // A day of 1,000 articles is a page or two: reading it newest first, one page at a time, saves
  // nothing over reading it whole, and the estimate's sequential page waits may cost a fraction of a
  // cent more; from 10,000 articles a day on, the whole-day reads cost more.
  it.each(
    SIZES.filter((size) => size.articlesPerDay >= 10_000).map(
      (size) => [`${size.articlesPerDay} × ${size.audiences}`, size] as const,
    ),
  )('%s: every provider-bound row costs at least as much today, and so do pages and articles read', (_label, size) => {
    const of = (reading: 'today' | 'incremental') => {
      const cost = table.scenarios.find(
        (c) =>
          c.scenario.articlesPerDay === size.articlesPerDay &&
          c.scenario.audiences === size.audiences &&
          c.scenario.reading === reading,
      );
      if (cost === undefined) throw new Error(`no ${reading} scenario`);
      return cost;
    };
    const today = of('today');
    const incremental = of('incremental');
    const bound = today.rows.filter((row) => row.providerBound);
    expect(bound.length).toBeGreaterThanOrEqual(2);
    for (const row of bound) {
      const other = incremental.rows.find((r) => r.item === row.item);
      expect(row.usd).toBeGreaterThanOrEqual(other?.usd ?? Number.POSITIVE_INFINITY);
    }
    expect(today.provider.pagesPerMonth).toBeGreaterThan(incremental.provider.pagesPerMonth);
    expect(today.provider.articlesReadPerMonth).toBeGreaterThan(incremental.provider.articlesReadPerMonth);
    // Reading changes neither what is delivered nor what it costs to deliver.
    const deliveries = (cost: ScenarioCost) => cost.rows.filter((row) => row.service === 'SNS').map((row) => row.usd);
    expect(deliveries(incremental)).toEqual(deliveries(today));
  });

  it('today, every run re-reads the day so far: articles read scale with the day, lookups with the match window', () => {
    const small = estimateDayCounts({ articlesPerDay: 10_000, audiences: 100 }, 'today', facts);
    const large = estimateDayCounts({ articlesPerDay: 100_000, audiences: 100 }, 'today', facts);
    // Ten times the articles: ten times the articles read (every run re-reads the day so far).
    expect(large.articlesReadPerDay.value / small.articlesReadPerDay.value).toBeCloseTo(10, 6);
    // Each article is looked up once per run whose window (late arrival + one interval) holds it.
    expect(small.ledgerLookupsPerNotification.value).toBeCloseTo((60 + 5) / 5, 9);
  });

  it.each(SIZES.map((size) => [`${size.articlesPerDay} × ${size.audiences}`, size] as const))(
    '%s: incremental runs look up no more than today: a run matches only what is newer than its cutoff',
    (_label, size) => {
      const today = estimateDayCounts(size, 'today', facts).ledgerLookupsPerNotification.value;
      const incremental = estimateDayCounts(size, 'incremental', facts).ledgerLookupsPerNotification.value;
      expect(incremental).toBeLessThanOrEqual(today + 1e-9);
    },
  );
});

describe('email: SES or SNS email', () => {
  it('prices the same emails both ways at every size: SES at $0.10 per 1,000, SNS email at $2 per 100,000', () => {
    for (const cost of table.scenarios) {
      const { email } = cost;
      const emails = email.emails;
      expect(emails).toBeCloseTo(
        (cost.scenario.notificationsPerDay.value * cost.scenario.sns.subscribersPerAudience.email.value * 365) / 12,
        6,
      );
      expect(email.sns.quantity).toBeCloseTo(emails, 6);
      expect(email.sns.usd).toBeCloseTo((emails * 2) / 100_000, 6);
      const sending = email.ses.find((row) => row.priceId === 'sesOutboundEmail');
      expect(sending?.usd).toBeCloseTo((emails * 0.1) / 1000, 6);
      // The SNS email row is the one in the total; the SES side is a comparison, outside it.
      expect(cost.rows).toContain(email.sns);
      expect(cost.rows.some((row) => row.priceId === 'sesOutboundEmail')).toBe(false);
      expect(email.sesUsd).toBeCloseTo(sum(email.ses.map((row) => row.usd)), 9);
      // Per email, the queue and the function around SES stay small next to SES itself; the queue's
      // idle polls are a fixed part (a few cents, more than SES itself at the smallest size).
      const perEmail = email.ses.filter((row) => row.part === 'delivery' && row !== sending);
      expect(sum(perEmail.map((row) => row.usd))).toBeLessThan(0.1 * (sending?.usd ?? 0));
      const idle = email.ses.filter((row) => row.part === 'fixed');
      expect(idle.map((row) => row.item)).toEqual(['email queue idle polls']);
      expect(idle[0]?.usd).toBeLessThan(0.5);
    }
  });

  it('doubling the notifications doubles the emails on both sides', () => {
    const base = first();
    const doubled = price({ ...base, notificationsPerDay: scale(base.notificationsPerDay, 2) });
    const single = price(base);
    expect(doubled.email.emails).toBeCloseTo(2 * single.email.emails, 6);
    expect(doubled.email.sns.usd).toBeCloseTo(2 * single.email.sns.usd, 9);
    const ses = (cost: ScenarioCost) => cost.email.ses.find((row) => row.priceId === 'sesOutboundEmail')?.usd ?? 0;
    expect(ses(doubled)).toBeCloseTo(2 * ses(single), 9);
  });

  it('renders the comparison for every size', () => {
    const markdown = renderCostMarkdown(table, { explanation: '', assumptions: [] });
    const section = markdown.slice(markdown.indexOf('## Email: SES or SNS email'), markdown.indexOf('## Prices'));
    for (const size of SIZES) {
      expect(section).toContain(
        `${size.articlesPerDay.toLocaleString('en-US')} articles a day × ${size.audiences.toLocaleString('en-US')} audiences`,
      );
    }
    for (const cost of table.scenarios.filter((scenario) => scenario.scenario.reading === 'today')) {
      expect(section).toContain(formatUsd(cost.email.sns.usd));
      expect(section).toContain(formatUsd(cost.email.sesUsd));
    }
  });

  it('re-prices the day counts a written document shows (--days-from): docs/cost.md gives its own totals again', () => {
    const document = readFileSync(new URL('../../docs/cost.md', import.meta.url), 'utf8');
    const { source, days } = daysFromCostDocument(document, 'docs/cost.md');
    expect(days).toHaveLength(SIZES.length * 2);
    const { markdown } = costDocument(
      { source, scenarios: days.map((day) => scenarioFromDayBench(day, stackFactsFromCode(), { source })) },
      stackFactsFromCode(),
    );
    const summary = (text: string) => text.slice(text.indexOf('## Summary'), text.indexOf('### How to read it'));
    // The document shows its day counts rounded, so a re-priced dollar figure may differ in its
    // last cent; everything else is the same text.
    const dollars = /\$([\d,]+\.\d+)/g;
    const amounts = (text: string) =>
      [...summary(text).matchAll(dollars)].map((m) => Number(m[1]?.replaceAll(',', '')));
    expect(summary(markdown).replace(dollars, '$…')).toBe(summary(document).replace(dollars, '$…'));
    const written = amounts(document);
    const repriced = amounts(markdown);
    expect(repriced).toHaveLength(written.length);
    for (const [index, amount] of repriced.entries()) {
      expect(Math.abs(amount - (written[index] ?? Number.NaN))).toBeLessThanOrEqual(0.011);
    }
  });
});

describe('rendering and inputs', () => {
  it('renders every size, the totals it computed, SMS apart, and each price with its source and date', () => {
    const markdown = renderCostMarkdown(table, { explanation: 'HOW TO READ', assumptions: ['ASSUMED THING'] });
    for (const size of SIZES) {
      expect(markdown).toContain(
        `## ${size.articlesPerDay.toLocaleString('en-US')} articles a day × ${size.audiences.toLocaleString('en-US')} audiences`,
      );
    }
    for (const cost of table.scenarios) expect(markdown).toContain(formatUsd(cost.totalUsd));
    expect(markdown).toContain('## SMS, priced apart');
    for (const p of Object.values(awsPrices)) {
      expect(markdown).toContain(p.source);
      expect(markdown).toContain(p.readOn);
    }
    expect(markdown).toContain('HOW TO READ');
    expect(markdown).toContain('- ASSUMED THING');
    expect(markdown).toContain('(provider-bound)');
  });

  describe('inputs files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cost-model-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const write = (name: string, content: unknown) => {
      const path = join(dir, name);
      writeFileSync(path, JSON.stringify(content));
      return path;
    };

    it('round-trips a complete CostInputs file', () => {
      const path = write('full.json', inputs);
      const read = readInputs(path, () => facts);
      expect(costDocument(read, facts).table.scenarios.map((c) => c.totalUsd)).toEqual(
        table.scenarios.map((c) => c.totalUsd),
      );
    });

    it('day bench counts without ledger lookups get the reading’s estimate, labelled assumed, not "1 (measured)"', () => {
      const day: DayBenchCounts = {
        articlesPerDay: 100_000,
        audiences: 1000,
        reading: 'today',
        runsPerDay: 288,
        providerPagesPerDay: 136_000,
        articlesReadPerDay: 13_600_000,
        notificationsPerDay: 270_000,
        lambdaMsPerRun: 50_000,
      };
      const read = readInputs(
        write('days-no-lookups.json', { source: 'provider-day bench', days: [day] }),
        () => facts,
      );
      const lookups = read.scenarios[0]?.ledger.lookupsPerNotification;
      expect(lookups).toMatchObject({ basis: 'assumed' });
      expect(lookups?.value).toBeCloseTo((60 + 5) / 5, 9);
    });

    it('completes the day bench counts, labelled measured', () => {
      const day: DayBenchCounts = {
        articlesPerDay: 100_000,
        audiences: 1000,
        reading: 'incremental',
        runsPerDay: 288,
        providerPagesPerDay: 3_500,
        articlesReadPerDay: 350_000,
        notificationsPerDay: 270_000,
        lambdaMsPerRun: 7_000,
        ledgerLookupsPerDay: 430_000,
      };
      const read = readInputs(write('days.json', { source: 'provider-day bench', days: [day] }), () => facts);
      expect(read.scenarios[0]?.ledger.lookupsPerNotification).toMatchObject({ basis: 'measured' });
      expect(read.scenarios[0]?.ledger.lookupsPerNotification.value).toBeCloseTo(430_000 / 270_000, 9);
    });

    it('writes the document bench/run.ts asks for from the day bench counts', () => {
      const out = join(dir, 'cost.md');
      const days: DayBenchCounts[] = (['today', 'incremental'] as const).map((reading) => ({
        articlesPerDay: 10_000,
        audiences: 100,
        reading,
        runsPerDay: 288,
        providerPagesPerDay: reading === 'today' ? 16_000 : 500,
        articlesReadPerDay: reading === 'today' ? 1_500_000 : 50_000,
        notificationsPerDay: 2_700,
        lambdaMsPerRun: lambdaMsFromBench(
          reading === 'today'
            ? { cpuMs: 1_000, concurrentPages: 56, sequentialPages: 0 }
            : { cpuMs: 100, concurrentPages: 0, sequentialPages: 1 },
          facts,
        ),
      }));
      const written = writeCostDocumentFromDayBench(days, { source: 'provider-day bench, test', out, facts });
      const markdown = readFileSync(out, 'utf8');
      expect(markdown).toContain('provider-day bench, test');
      expect(renderCostSummary(written).join('\n')).toContain('10,000 articles a day × 100 audiences');
      const [today, incremental] = written.scenarios;
      expect(today?.totalUsd).toBeGreaterThan(incremental?.totalUsd ?? Number.POSITIVE_INFINITY);
    });

    it('names the file and the missing figure', () => {
      const broken = JSON.parse(JSON.stringify(inputs)) as { scenarios: { ledger: Record<string, unknown> }[] };
      delete broken.scenarios[0]?.ledger.itemBytes;
      const path = write('broken.json', broken);
      expect(() => readInputs(path, () => facts)).toThrow(/broken\.json: scenarios\[0\] lacks ledger\.itemBytes/);
    });
  });
});

describe('stack facts come from lib/', () => {
  it('synthesizes the shipped stack and finds its memory, alarms, keys, secrets and metrics', () => {
    const derived = stackFactsFromCode();
    const config = parseStackConfig({});
    expect(derived.alertMemoryMb).toBe(config.memorySize);
    expect(derived.logRetentionDays).toBe(config.logRetentionDays);
    expect(derived.intervalMinutes).toBe(config.intervalMinutes);
    expect(derived.alarmsPerDeclaredAudience).toBe(0);
    expect(derived.fixedAlarms).toBeGreaterThanOrEqual(10);
    expect(derived.webhookStoreShards).toBe(4);
    // The stack makes one secret (the API key), whatever the audiences.
    expect(derived.fixedSecrets).toBe(1);
    const { everyHour, whenTrouble } = derived.customMetrics;
    expect(everyHour + whenTrouble).toBe(Object.keys(metricNames).length + 4);
    // Only the every-run, normal-use and Slack-posted metrics are priced as sent every hour.
    expect(everyHour).toBe(everyRunMetrics.size + activityMetrics.size + 1);
    expect(derived.customerManagedKeys).toBeGreaterThanOrEqual(2);
    // SES email's own: the link key, the events topic's key, the daily digests' schedule.
    expect(derived.sesFixed).toMatchObject({ secrets: 1, keys: 1, schedules: 1 });
    expect(derived.sesFixed?.alarms).toBeGreaterThanOrEqual(5);
  });
});

describe('what the totals leave out, priced beside them', () => {
  it("SES email's fixed part counts its KMS key, and spike alerts are priced per opted-in rule", () => {
    const ses = { alarms: 6, secrets: 1, keys: 1, schedules: 1 };
    const { markdown } = costDocument(placeholderInputs(facts), { ...facts, sesFixed: ses });
    const usd = ses.alarms * 0.1 + ses.secrets * 0.4 + ses.keys * 1;
    expect(markdown).toContain(`${ses.keys} KMS key(s) (the SES events topic's), ${formatUsd(usd)} a month`);
    // About 21 write and 5 read units per opted-in rule an hour (bench/RESULTS.md section 10 (c)).
    const perRule =
      24 * (365 / 12) * (((11 * 3_048 + 8_254) / 2_000) * 0.625e-6 + ((11 * 740 + 2_000) / 2_000) * 0.125e-6);
    expect(markdown).toContain(`**Spike alerts**`);
    expect(markdown).toContain(
      `${formatUsd(perRule)} per opted-in rule a month, ${formatUsd(perRule * 2_000)} for 2,000`,
    );
  });

  it('story collapse is priced per article filed, from the story index request units the bench measured', () => {
    const { markdown } = costDocument(placeholderInputs(facts), facts);
    const { readUnitsPerArticle, writeUnitsPerArticle } = RESULTS_MD.storyIndex;
    const perMillion = (readUnitsPerArticle * 0.125e-6 + writeUnitsPerArticle * 0.625e-6) * 1_000_000;
    expect(markdown).toContain('**Story collapse**');
    expect(markdown).toContain(`${formatUsd(perMillion)} per million articles filed`);
    // Not in the totals, under its own heading with spike alerts, which "What it leaves out" links to.
    expect(markdown).toContain('is not in the totals, although');
    const apart = markdown.slice(markdown.indexOf('## Features priced apart'), markdown.indexOf('## Prices'));
    expect(apart).toContain('**Story collapse**');
    expect(apart).toContain('**Spike alerts**');
    expect(markdown).toContain('[Features priced apart](#features-priced-apart)');
  });

  it('a difference just below zero reads as such, never "$-0.00"', () => {
    expect(formatUsd(-0.001)).toBe('> −$0.01');
    expect(formatUsd(-0)).toBe('$0.00');
    expect(formatUsd(-3.2)).toBe('−$3.20');
    expect(formatUsd(0.001)).toBe('< $0.01');
  });
});
