/**
 * Writes docs/cost.md: the monthly AWS cost of news-alerts for the sizes of issue 15, before and
 * after incremental reading.
 *
 *   npx tsx bench/cost-model-cli.ts                     # placeholder inputs (bench/cost-fixture.ts)
 *   npx tsx bench/cost-model-cli.ts inputs.json         # a CostInputs file, or {"source", "days": DayBenchCounts[]}
 *   npx tsx bench/cost-model-cli.ts --out other.md      # write elsewhere
 *   npx tsx bench/cost-model-cli.ts --print-inputs      # print the inputs as JSON (a template for inputs.json)
 *   npx tsx bench/cost-model-cli.ts --days-from docs/cost.md   # re-price the day counts an earlier document shows
 *   npx tsx bench/cost-model-cli.ts --from-day bench/provider-day.json   # what npm run bench writes, from a saved day
 *
 * Needs no npm script and no network: the prices are bench/aws-prices.ts, the stack facts come from
 * synthesizing lib/ (a few seconds).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BANDS, STORY_WINDOW_MS } from '#core/story';
import { awsPrices } from './aws-prices.ts';
import {
  type DayBenchCounts,
  defaultAssumptions,
  placeholderInputs,
  RESULTS_MD,
  type StackFacts,
  scenarioFromDayBench,
  stackFactsFromCode,
} from './cost-fixture.ts';
import { costDaysFromProviderDay } from './cost-from-day.ts';
import {
  type CostInputs,
  type CostTable,
  costModel,
  formatUsd,
  type RenderOptions,
  renderCostMarkdown,
  sourcedInputs,
} from './cost-model.ts';
import type { ProviderDayResults } from './provider-day.ts';

/** How to read docs/cost.md and what it leaves out; placed under the summary table. */
export const EXPLANATION = `### How to read it

- **One month** is 365/12 days of the default schedule (\`rate(5 minutes)\`, 288 runs a day), prices of
  us-east-1 (see [Prices](#prices), each with its source and the day it was read). Other regions cost
  the same or up to ~25% more.
- **today** is how runs read before incremental reading, kept for comparison (incremental reading is
  the default): every run asks the provider for its whole provider day, so pages
  and articles read per run grow through the day, and every run re-matches (and looks up in the ledger)
  the last \`lateArrivalMinutes\` + one interval of articles. **incremental** (the default) reads newest first until it
  passes the watermark minus \`INCREMENTAL_OVERLAP_MINUTES\`, and finds late-indexed articles by
  counting: every \`LATE_RECHECK_MINUTES\` it compares the provider's totals with what it read and
  re-reads only the stretches that grew ([incremental reading](incremental-reading.md)); a full sweep
  runs only when counting cannot (every \`FULL_SWEEP_MINUTES\` for a provider without totals).
  Rows marked *provider-bound* are the ones the reading changes.
- **basis**: *measured* (a benchmark counted it), *code* (the stack or a function default fixes it),
  *assumed* (an estimate; the inputs table says of what). A row is only as firm as its softest input.
  \`npm run bench\` takes the per-day counts from its simulated provider day (\`bench/provider-day.ts\`),
  scaled to each size by \`bench/cost-from-day.ts\`; run on its own without inputs, the script
  estimates them from the single-run figures of \`bench/RESULTS.md\`.
- **Totals** are the sum of the AWS rows. **SMS is not in them**: it is priced per segment by destination
  country, and when audiences have phone subscribers it is most of the bill (see
  [SMS, priced apart](#sms-priced-apart)). The **free-tier credit** is what the always-free allowances
  (Lambda, SNS, CloudWatch, KMS, X-Ray, Scheduler, DynamoDB storage) would take off if this stack were
  the account's only workload; it is shown, not applied.
- **fixed** and **delivery**: every row is in one part. *fixed* is everything but deliveries: keys,
  secrets, alarms, metrics, the dashboard, and the runs themselves (reading, matching, per-run state),
  there whatever is delivered; *delivery* grows with the notifications (ledger, SNS, the Slack relay).
  The second summary table gives both for every size, the fixed part per audience, and what one more
  audience adds to it (the slope between two sizes of the same articles a day). No cost is made per
  audience: Slack webhooks share a store of at most four secrets, the HTTPS endpoint URLs kept for
  \`audiences repair\` another four ([why](configuration.md#where-slack-webhooks-are-kept)), and the
  alarms are one set whatever the audiences ([operate](operate.md#alarms)).
- **What dominates** is named under each breakdown (its largest rows). With the placeholder's subscriber
  mix, fixed monthly items lead at the small sizes (the EMF metrics, the dashboard, the keys); email
  deliveries ($2 per 100,000) lead once notifications reach thousands a day. The alert function itself, even re-reading the whole
  provider day every five minutes, costs little in Lambda; what incremental reading saves is mostly
  provider requests (the pages column of the summary), then Lambda duration and ledger lookups.

### What it leaves out

- **Data transfer**: responses from the provider (inbound, free), SNS deliveries to HTTPS endpoints and
  Slack posts leaving AWS (data transfer out, per GB), and the provider's own traffic costs.
- **The provider's fees**: whatever the news provider charges per request or per article is outside
  AWS; the provider pages a month are shown so it can be priced from the contract.
- **Subscribers' costs**: the SQS queues subscribed to audience topics, the webhook receivers, Slack.
- **SMS registration**: 10DLC brand and campaign fees, toll-free or short-code monthly fees, sender-ID
  registration in countries that require it.
- **Failures and retries**: SNS delivery retries, Lambda retries, dead-letter queues (idle SQS queues cost
  nothing), CloudWatch Logs Insights queries, console and CLI use (\`news-alerts\` commands, replays).
- **Holds and digests**: audiences in digest mode or quiet hours write held items instead of publishing;
  not modelled (every match is assumed to go out at once).
- **Story collapse and spike alerts**: what they add depends on how many articles collapsing
  audiences match and how many rules opt in; each is priced per unit under
  [Features priced apart](#features-priced-apart).
- **Taxes, support plans, savings plans and credits.**
`;

/** The workload assumptions behind the placeholder, as bullets. */
export function assumptionNotes(facts: StackFacts): string[] {
  const a = defaultAssumptions;
  const s = a.subscribersPerAudience;
  return [
    `Subscriptions per audience: ${s.email} email, ${s.https} HTTPS webhook, ${s.sqs} SQS, ${s.lambda} Slack (a share of audiences), ${s.sms} phone numbers. Each receives every notification of its audience (no filter policies).`,
    `Notifications scale with articles × audiences at the match rate of the RESULTS.md section 2 rules (3 synthetic rules per audience); real rules may be broader or narrower, and every per-notification row moves with them.`,
    `Provider latency ${a.providerPageLatencyMs} ms per page (the simulator answers in ~2 ms); pages of a full read go ${facts.pageConcurrency} at a time, incremental reads one at a time.`,
    `Lambda run time: CPU-bound work measured on one core of the development machine is ${(1769 / 512).toFixed(2)}× slower at ${facts.alertMemoryMb} MB; ${a.coldStartShare * 100}% of runs start cold; ${a.fixedRunMs} ms per run of DynamoDB round trips and bookkeeping.`,
    `Slack relay: ${a.relayDurationMs} ms per post at ${facts.relayMemoryMb} MB; reserved concurrency ${facts.relayReservedConcurrency}.`,
    `Item sizes: rule ~${a.ruleItemBytes} B, audience ~${a.audienceItemBytes} B, ledger ~${a.ledgerItemBytes} B (each under one request unit).`,
    facts.alarmsPerDeclaredAudience === 0
      ? `Alarms: ${facts.fixedAlarms}, whatever the audiences (SNS delivery failures of every audience reach the delivery dead-letter queue, which alarms once); one dashboard, whose audience graph is a search.`
      : `Alarms: ${facts.fixedAlarms} fixed plus ${facts.alarmsPerDeclaredAudience} per audience declared in cdk.json; audiences added later by the CLI have none, so this is an upper bound.`,
    `Slack webhooks: a store of at most ${facts.webhookStoreShards} secrets (a shard per hash of the audience id); n Slack audiences fill ${facts.webhookStoreShards} × (1 − (1 − 1/${facts.webhookStoreShards})^n) of them on average.`,
    'KMS: the keys are in their first year (each yearly rotation adds $1/key-month, up to $3); SNS is assumed to call KMS once per publish request (its data-key reuse is not documented; once per message would multiply that row by ~9).',
    'SNS PublishBatch is billed by its aggregate payload in 64 KB chunks (AWS: batching cuts cost "by a factor of up to 10"); billed per message instead, the publish row would be ~4.6× larger and still small next to deliveries.',
  ];
}

/** Reads an inputs file: a full CostInputs, or the day bench's counts to be completed here. */
export function readInputs(path: string, facts: () => StackFacts): CostInputs {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`${path}: not a JSON file (${error instanceof Error ? error.message : String(error)})`, {
      cause: error,
    });
  }
  if (typeof parsed !== 'object' || parsed === null) throw new Error(`${path}: expected a JSON object`);
  const { source, scenarios, days } = parsed as { source?: unknown; scenarios?: unknown; days?: unknown };
  if (typeof source !== 'string')
    throw new Error(`${path}: "source" (one line saying where the counts come from) is missing`);
  if (Array.isArray(days)) {
    const stack = facts();
    return {
      source,
      scenarios: (days as DayBenchCounts[]).map((day) => scenarioFromDayBench(day, stack, { source })),
    };
  }
  if (!Array.isArray(scenarios)) {
    throw new Error(
      `${path}: expected "scenarios" (CostInputs, bench/cost-model.ts) or "days" (DayBenchCounts, bench/cost-fixture.ts)`,
    );
  }
  const inputs = { source, scenarios } as CostInputs;
  // Every figure the placeholder has must be there, with a number and a basis: a missing one would
  // price a row from undefined.
  const required = sourcedInputs(placeholderInputs(facts()).scenarios[0] as CostInputs['scenarios'][number]).map(
    (entry) => entry.path,
  );
  inputs.scenarios.forEach((scenario, index) => {
    const present = new Set(sourcedInputs(scenario).map((entry) => entry.path));
    const missing = required.filter((path) => !present.has(path));
    if (missing.length > 0) {
      throw new Error(
        `${path}: scenarios[${index}] lacks ${missing.join(', ')} (each is {"value": number, "basis": "measured"|"code"|"assumed", "note": "…"}; --print-inputs shows a complete file)`,
      );
    }
  });
  return inputs;
}

/** A provider day file as bench/run.ts writes it (bench/provider-day.json). */
function readProviderDay(path: string): ProviderDayResults & { day?: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`${path}: not a JSON file (${error instanceof Error ? error.message : String(error)})`, {
      cause: error,
    });
  }
  const day = parsed as Partial<ProviderDayResults> | null;
  if (
    typeof day !== 'object' ||
    day === null ||
    !Array.isArray(day.scenarios) ||
    typeof day.articlesPerDay !== 'number'
  ) {
    throw new Error(
      `${path}: not a provider day (expected "articlesPerDay" and "scenarios", as npm run bench writes bench/provider-day.json)`,
    );
  }
  // Files written before counted reading name the reading `mode` (`today`, or `incremental` with
  // full sweeps): the default sweep period's incremental scenario is what the cost takes as the
  // default reading, with the typical lateness those runs simulated.
  const scenarios = (day.scenarios as unknown as Record<string, unknown>[]).map((scenario) =>
    scenario.reading !== undefined || scenario.mode === undefined
      ? scenario
      : {
          ...scenario,
          reading:
            scenario.mode === 'today'
              ? 'today'
              : scenario.fullSweepMinutes === (day as { defaultSweepMinutes?: unknown }).defaultSweepMinutes
                ? 'counted'
                : 'sweeps',
          lateness: 'typical',
        },
  );
  return { ...(day as ProviderDayResults), scenarios: scenarios as unknown as ProviderDayResults['scenarios'] };
}

/** What SES email adds to every size's fixed part, from the synthesized stack (not in the totals). */
function sesFixedNote(facts: StackFacts): string | undefined {
  if (facts.sesFixed === undefined) return undefined;
  const { alarms, secrets, keys, schedules } = facts.sesFixed;
  const usd =
    alarms * awsPrices.cloudWatchAlarm.usdPerUnit +
    secrets * awsPrices.secretsManagerSecret.usdPerUnit +
    keys * awsPrices.kmsKey.usdPerUnit;
  return `SES email also adds to the fixed part of every size, whatever it sends: its ${alarms} alarms (\`email-*\`, [operate](operate.md#alarms)), ${secrets} secret(s) (the link key) and ${keys} KMS key(s) (the SES events topic's), ${formatUsd(usd)} a month (before the free tier's ten alarms), and ${schedules} schedule(s) (the daily digests, every 15 minutes: within the Scheduler's free invocations).`;
}

/**
 * What spike alerts add (opt-in per rule, not in the totals): each opted-in rule's record is read
 * and rewritten by the runs that count a story for it, and by the first run after each hour.
 */
export function spikeCostNote(): string {
  const { rules, insideHour, afterHour } = RESULTS_MD.spikeStep;
  const runsPerHour = 12;
  const writeUnits = ((runsPerHour - 1) * insideHour.writeUnits + afterHour.writeUnits) / rules;
  const readUnits = ((runsPerHour - 1) * insideHour.records + afterHour.records) / rules;
  const hoursPerMonth = 24 * (365 / 12);
  const usdPerRule =
    hoursPerMonth *
    (writeUnits * awsPrices.dynamoWriteRequestUnit.usdPerUnit + readUnits * awsPrices.dynamoReadRequestUnit.usdPerUnit);
  return `**Spike alerts** (opt-in per rule, [spikes](spikes.md)) are not in the totals either. Each opted-in rule keeps one record of counts (about 3.5 KB) that the runs read and rewrite: at the step bench/RESULTS.md measured for ${formatNumberPlain(rules)} opted-in rules (section 10 (c): ${formatNumberPlain(insideHour.writeUnits)} write units on a run inside an hour, ${formatNumberPlain(afterHour.writeUnits)} on the first run after it), about ${writeUnits.toFixed(0)} write units and ${readUnits.toFixed(0)} read units per opted-in rule an hour on the 5-minute schedule: ${formatUsd(usdPerRule)} per opted-in rule a month, ${formatUsd(usdPerRule * rules)} for ${formatNumberPlain(rules)}. That run read ${formatNumberPlain(RESULTS_MD.spikeStep.articlesPerRun)} articles a run (some ${formatNumberPlain(RESULTS_MD.spikeStep.articlesPerRun * 288)} a day), and ${formatNumberPlain(insideHour.records)} of the rules matched one in each run; on quieter days fewer records are written between hours, so it is an upper bound for them, and the first run after each hour writes every record whatever matched. The spike alerts themselves are deliveries like any other.`;
}

/**
 * What story collapse adds (per audience, on for the audiences the CLI creates; not in the totals,
 * which price what every deployment pays): each article an audience that collapses stories
 * matches is filed in the story index, in the state table.
 */
export function storyCostNote(): string {
  const {
    articles,
    readUnitsPerArticle,
    writeUnitsPerArticle,
    newStoryShare,
    storyBytesPerArticle,
    filingBytesPerArticle,
  } = RESULTS_MD.storyIndex;
  const daysPerMonth = 365 / 12;
  const usdPerArticle =
    writeUnitsPerArticle * awsPrices.dynamoWriteRequestUnit.usdPerUnit +
    readUnitsPerArticle * awsPrices.dynamoReadRequestUnit.usdPerUnit;
  // Steady state: a day's stories and bands live the 48-hour window and a day more, filings 14 days.
  const storyDays = STORY_WINDOW_MS / 86_400_000 + 1;
  const gbPerDailyArticle = (storyBytesPerArticle * storyDays + filingBytesPerArticle * 14) / 1e9;
  const monthly = (perDay: number) =>
    formatUsd(perDay * daysPerMonth * usdPerArticle + perDay * gbPerDailyArticle * awsPrices.dynamoStorage.usdPerUnit);
  return `**Story collapse** (per audience, \`collapse: story\`, [one story, one alert](delivery.md#one-story-one-alert)) is not in the totals, although \`news-alerts audiences create\` turns it on for every new audience (an audience item without the attribute does not collapse). Every article an audience that collapses stories matches is filed in the story index, in the state table: the DynamoDB adapter spent ${readUnitsPerArticle.toFixed(1)} read units and ${writeUnitsPerArticle.toFixed(1)} write units per article filed in bench/RESULTS.md section 8 (${formatNumberPlain(articles)} articles, ${Math.round(newStoryShare * 100)}% of them starting a story; a story's start writes its story item and one item for each of its ${BANDS} bands, and reads those bands first, strongly consistent), ${formatUsd(usdPerArticle * 1_000_000)} per million articles filed, and it keeps about ${formatNumberPlain(Math.round(storyBytesPerArticle + filingBytesPerArticle))} bytes per article (stories and bands for ${storyDays} days, filings for 14). With every article read filed, that is ${monthly(1_000)} a month at 1,000 articles a day, ${monthly(10_000)} at 10,000 and ${monthly(100_000)} at 100,000; only articles that a collapsing audience matches are filed, so a desk with one such audience pays for what that audience matches. Newsrooms whose wires carry more copies start fewer stories and pay less.`;
}

const formatNumberPlain = (value: number) => value.toLocaleString('en-US');

/** The cost table and the document for `inputs`. */
export function costDocument(inputs: CostInputs, facts: StackFacts): { table: CostTable; markdown: string } {
  const table = costModel(inputs, awsPrices);
  const options: RenderOptions = {
    explanation: EXPLANATION,
    assumptions: assumptionNotes(facts),
    sesFixed: sesFixedNote(facts),
    pricedApart: [storyCostNote(), spikeCostNote()],
  };
  return { table, markdown: renderCostMarkdown(table, options) };
}

/**
 * What bench/run.ts calls once the simulated-day bench has counted its days: completes the counts
 * (bench/cost-fixture.ts), prices them, writes the document (docs/cost.md unless `out` says
 * otherwise) and returns the table, e.g. for `renderCostSummary` in RESULTS.md.
 */
export function writeCostDocumentFromDayBench(
  days: readonly DayBenchCounts[],
  options: { readonly source: string; readonly out?: string; readonly facts?: StackFacts },
): CostTable {
  const facts = options.facts ?? stackFactsFromCode();
  const inputs: CostInputs = {
    source: options.source,
    scenarios: days.map((day) => scenarioFromDayBench(day, facts, { source: options.source })),
  };
  const { table, markdown } = costDocument(inputs, facts);
  writeFileSync(options.out ?? fileURLToPath(new URL('../docs/cost.md', import.meta.url)), markdown);
  return table;
}

/**
 * The day counts a cost document was written from, read back from its per-size sections: runs,
 * notifications, provider pages, articles read and billed ms per run, for both readings. Its
 * `Inputs:` line is the source. Displayed values are rounded (ms per run to whole ms).
 *
 * @throws Error naming the document and what it lacks
 */
export function daysFromCostDocument(text: string, name: string): { source: string; days: DayBenchCounts[] } {
  const source = /^Monthly AWS cost .* Inputs: (.*)$/m.exec(text)?.[1];
  if (source === undefined) throw new Error(`${name} has no "Inputs:" line: is it a cost document?`);
  const number = (value: string | undefined) => Number((value ?? '').replace(/,/g, ''));
  const days: DayBenchCounts[] = [];
  for (const section of text.split('\n## ').slice(1)) {
    const size = /^([\d,]+) articles a day × ([\d,]+) audiences\n/.exec(section);
    if (size === null) continue;
    const label = `${name}, "${section.split('\n')[0]}"`;
    const runs = /([\d,]+) runs a day at/.exec(section)?.[1];
    const notifications = /([\d,]+) notifications a day/.exec(section)?.[1];
    const cells = (row: string) => {
      const line = section.split('\n').find((candidate) => candidate.startsWith(`| ${row} |`)) ?? '';
      const match = /\| ([\d,.]+) \(measured\) \| ([\d,.]+) \(measured\) \|/.exec(line);
      if (match === null) throw new Error(`${label} has no measured "${row}" row`);
      return [number(match[1]), number(match[2])] as const;
    };
    if (runs === undefined || notifications === undefined)
      throw new Error(`${label} names no runs or notifications a day`);
    const pages = cells('provider pages a day');
    const read = cells('articles read a day');
    const ms = cells('billed ms per run');
    for (const [index, reading] of [
      [0, 'today'],
      [1, 'incremental'],
    ] as const) {
      days.push({
        articlesPerDay: number(size[1]),
        audiences: number(size[2]),
        reading,
        runsPerDay: number(runs),
        providerPagesPerDay: pages[index],
        articlesReadPerDay: read[index],
        notificationsPerDay: number(notifications),
        lambdaMsPerRun: ms[index],
      });
    }
  }
  if (days.length === 0) throw new Error(`${name} has no per-size sections with measured day counts`);
  return { source, days };
}

function main(argv: readonly string[]): void {
  let inputsPath: string | undefined;
  let out = fileURLToPath(new URL('../docs/cost.md', import.meta.url));
  let printInputs = false;
  let daysFrom: string | undefined;
  let fromDay: string | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--out') {
      const next = argv[i + 1];
      if (next === undefined) throw new Error('--out needs a file name');
      out = resolve(next);
      i += 1;
    } else if (arg === '--print-inputs') printInputs = true;
    else if (arg === '--days-from') {
      const next = argv[i + 1];
      if (next === undefined) throw new Error('--days-from needs a cost document (docs/cost.md)');
      daysFrom = resolve(next);
      i += 1;
    } else if (arg === '--from-day') {
      const next = argv[i + 1];
      if (next === undefined) throw new Error('--from-day needs the provider day JSON (bench/provider-day.json)');
      fromDay = resolve(next);
      i += 1;
    } else if (arg?.startsWith('--'))
      throw new Error(
        `unknown option ${arg} (known: --out <file>, --print-inputs, --from-day <provider-day.json>, --days-from <cost.md>)`,
      );
    else if (arg !== undefined) inputsPath = arg;
  }
  let facts: StackFacts | undefined;
  const stackFacts = (): StackFacts => {
    facts ??= stackFactsFromCode();
    return facts;
  };
  if (daysFrom !== undefined) {
    // The measured day counts of an earlier document, priced again with today's model and prices
    // (a change to the model or the prices, without running the day bench again).
    const { source, days } = daysFromCostDocument(readFileSync(daysFrom, 'utf8'), daysFrom);
    writeCostDocumentFromDayBench(days, { source, out, facts: stackFacts() });
    console.log(`wrote ${out} from the ${days.length} day counts of ${daysFrom}`);
    return;
  }
  if (fromDay !== undefined) {
    const day = readProviderDay(fromDay);
    const facts = stackFacts();
    const table = writeCostDocumentFromDayBench(costDaysFromProviderDay(day, facts), {
      source: `${fromDay.split('/').slice(-2).join('/')} (bench/provider-day.ts, the simulated day of ${day.day ?? 'a saved run'}), scaled by bench/cost-from-day.ts`,
      out,
      facts,
    });
    for (const cost of table.scenarios) {
      const s = cost.scenario;
      console.log(
        `${s.articlesPerDay} articles/day × ${s.audiences} audiences, ${s.reading}: ${formatUsd(cost.totalUsd)}/month (fixed ${formatUsd(cost.fixedUsd)}, deliveries ${formatUsd(cost.deliveryUsd)})`,
      );
    }
    console.log(`wrote ${out}`);
    return;
  }
  const inputs = inputsPath === undefined ? placeholderInputs(stackFacts()) : readInputs(inputsPath, stackFacts);
  if (printInputs) {
    console.log(JSON.stringify(inputs, null, 2));
    return;
  }
  const { table, markdown } = costDocument(inputs, stackFacts());
  writeFileSync(out, markdown);
  for (const cost of table.scenarios) {
    const s = cost.scenario;
    console.log(
      `${s.articlesPerDay} articles/day × ${s.audiences} audiences, ${s.reading}: ${formatUsd(cost.totalUsd)}/month (+ SMS ${cost.sms.map((row) => `${row.item} ${formatUsd(row.usd)}`).join(', ')})`,
    );
  }
  console.log(`wrote ${out}`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  }
}
