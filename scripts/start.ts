/**
 * `npm start`: the whole alert job on embedded defaults, on this machine. It starts moto server
 * (the local AWS emulator) and the bundled news API simulator, creates the tables, topics,
 * subscriptions, secret and the example audiences and rules, runs alert cycles through the same
 * code path as the Lambda handler, and shows what every subscriber received, per channel.
 *
 * With `--provider-url` it talks to a real provider instead (HTTPS only); the AWS side stays
 * local. Nothing here reaches AWS.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { RunSummary } from '#core/alert-run';
import { exampleAudiences, exampleRules } from '../sandbox/examples.ts';
import { type AudienceCheck, compareDeliveries, expectedDeliveries, isExact } from '../sandbox/expectations.ts';
import {
  type DeliveredNotification,
  type LocalStack,
  type SubscriberDelivery,
  startLocalStack,
} from '../sandbox/local-stack.ts';
import { startMoto } from '../sandbox/moto.ts';
import { OUT_OF_SCOPE_MEDIA } from '../sandbox/news-simulator-data.ts';
import { projectRoot } from '../sandbox/python-env.mjs';
import { createCertificateAuthority } from '../sandbox/tls.ts';

// The AWS SDK warns about Node 20 when a client is created; the Lambda runtime is Node 22.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const positiveInteger = (value: string): number => {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new InvalidArgumentError('must be a whole number of at least 1');
  return parsed;
};
const instant = (value: string): number => {
  const parsed = Date.parse(value);
  if (Number.isNaN(parsed))
    throw new InvalidArgumentError('must be an ISO 8601 date-time, e.g. 2026-11-22T09:00:00+09:00');
  return parsed;
};

const program = new Command('npm start --')
  .description(
    'Run news-alerts end to end on this machine: local AWS emulator (moto server), the bundled news API simulator, example audiences and rules.',
  )
  .option('--once', 'run a single alert cycle')
  .option('--cycles <n>', 'alert cycles to run (5 simulated minutes apart with the simulator)', positiveInteger, 3)
  .option(
    '--json',
    'print one machine-readable JSON summary on stdout (use `npm start -s -- --json` to drop npm’s banner)',
  )
  .option('--verbose', 'print the run’s structured logs on stderr')
  .option('--seed <n>', 'simulator article seed', positiveInteger, 7)
  .option('--now <iso>', 'pin the clock (simulator only), e.g. 2026-11-22T09:00:00+09:00', instant)
  .option('--provider-url <url>', 'use this News Lookup provider instead of the simulator (https:// only)')
  .option('--provider-ca <file>', 'PEM file of an extra CA to trust for the provider')
  .addOption(
    new Option(
      '--api-key <key>',
      'provider API key (prefer the NEWS_API_KEY variable: arguments show in the process list)',
    ).env('NEWS_API_KEY'),
  )
  .option('--response-mapping <file>', 'JSON file overriding where fields live in the provider response')
  .option('--provider-time-zone <zone>', 'provider time zone (IANA) for date-only ranges and zone-less timestamps')
  .option('--page-size <n>', 'articles per page', positiveInteger)
  .option('--interval <seconds>', 'seconds between cycles with an external provider', positiveInteger, 60)
  .showHelpAfterError();

interface StartOptions {
  once?: boolean;
  cycles: number;
  json?: boolean;
  verbose?: boolean;
  seed: number;
  now?: number;
  providerUrl?: string;
  providerCa?: string;
  apiKey?: string;
  responseMapping?: string;
  providerTimeZone?: string;
  pageSize?: number;
  interval: number;
}

program.parse();
const options = program.opts<StartOptions>();
const cycles = options.once ? 1 : options.cycles;
const useSimulator = options.providerUrl === undefined;
if (!useSimulator && !options.apiKey) {
  program.error('--provider-url needs an API key: set NEWS_API_KEY (or pass --api-key)');
}
const progress = (message: string) => process.stderr.write(`news-alerts: ${message}\n`);

/** The sandbox's clock: simulated with the simulator (cycles 5 minutes apart), real otherwise. */
let clock = options.now ?? Date.now();
const now = () => (useSimulator ? clock : Date.now());
const schedulerStepMs = 5 * 60_000;

const environment: Record<string, string> = {
  // A fresh sandbox has no watermark: start a day back so the first cycle has something to show.
  INITIAL_LOOKBACK_MINUTES: '1440',
};
if (options.providerTimeZone) environment.NEWS_API_TIME_ZONE = options.providerTimeZone;
if (options.pageSize) environment.NEWS_API_PAGE_SIZE = String(options.pageSize);
if (options.responseMapping) {
  environment.NEWS_API_RESPONSE_MAPPING = readFileSync(options.responseMapping, 'utf8');
}

const sandboxDir = join(projectRoot, '.sandbox');
mkdirSync(sandboxDir, { recursive: true });
const ca = await createCertificateAuthority();
const caBundlePath = join(sandboxDir, 'sandbox-ca.pem');
writeFileSync(caBundlePath, ca.cert);

progress('starting moto server (local AWS emulator) ...');
const moto = await startMoto({ caBundlePath });
let stack: LocalStack | undefined;
let exitCode = 0;
try {
  progress(
    useSimulator ? 'starting the news API simulator (HTTPS) ...' : `using the provider at ${options.providerUrl}`,
  );
  const logLines: string[] = [];
  stack = await startLocalStack({
    motoEndpoint: moto.endpoint,
    ca,
    now,
    environment,
    simulator: { seed: options.seed, generate: { days: 2, perDay: 240 } },
    provider: useSimulator
      ? undefined
      : {
          url: options.providerUrl as string,
          apiKey: options.apiKey as string,
          caPem: options.providerCa ? readFileSync(options.providerCa, 'utf8') : undefined,
        },
    log: structuredLog(options.verbose === true, logLines),
  });
  progress(
    `created tables, ${stack.topics.size} audience topics with their subscriptions, the API-key secret, and the example rules`,
  );
  const ruleSet = await stack.dependencies.rules.load();
  const firstCutoff = now() - stack.config.run.initialLookbackMs - stack.config.run.lateArrivalMs;

  const cycleReports: CycleReport[] = [];
  const receivedByAudience = new Map<string, string[]>();
  for (let cycle = 1; cycle <= cycles; cycle++) {
    if (cycle > 1) {
      if (useSimulator) {
        clock += schedulerStepMs;
        if (cycle === 2) publishBreakingNews(stack, clock);
      } else {
        await new Promise((resolve) => setTimeout(resolve, options.interval * 1000));
      }
    }
    let summary: RunSummary | undefined;
    let failure: string | undefined;
    try {
      summary = await stack.run({ runId: `local-cycle-${cycle}` });
    } catch (error) {
      failure = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      exitCode = 1;
    }
    const deliveries = await stack.collectDeliveries();
    const inbox = await stack.collectInbox();
    for (const delivered of deliveries) {
      const list = receivedByAudience.get(delivered.audienceId) ?? [];
      list.push(delivered.articleKey);
      receivedByAudience.set(delivered.audienceId, list);
    }
    const report: CycleReport = { cycle, at: new Date(now()).toISOString(), summary, failure, deliveries, inbox };
    cycleReports.push(report);
    if (!options.json) printCycle(report);
  }

  let checks: Map<string, AudienceCheck> | undefined;
  if (useSimulator && stack.simulator) {
    const expected = expectedDeliveries({
      articles: stack.simulator.articles(),
      ruleItems: exampleRules,
      audienceItems: exampleAudiences.map((audience) => ({
        ...audience.item,
        topicArn: stack?.topics.get(audience.item.audienceId),
      })),
      from: firstCutoff,
      to: now(),
      inScope: (media) => media !== OUT_OF_SCOPE_MEDIA,
    });
    checks = compareDeliveries(expected, receivedByAudience);
    if (![...checks.values()].every(isExact)) exitCode = 1;
  }

  if (options.json) {
    process.stdout.write(
      `${JSON.stringify(
        {
          provider: useSimulator
            ? { simulator: true, url: stack.simulator?.url }
            : { simulator: false, url: options.providerUrl },
          invalidItems: ruleSet.rejected,
          cycles: cycleReports.map((report) => ({
            cycle: report.cycle,
            at: report.at,
            failure: report.failure,
            run: report.summary,
            received: groupDeliveries(report.deliveries),
            channels: report.inbox,
          })),
          audiences: checks ? Object.fromEntries(checks) : undefined,
          ok: exitCode === 0,
        },
        null,
        2,
      )}\n`,
    );
  } else {
    printOutcome(ruleSet.rejected, checks);
  }
} catch (error) {
  exitCode = 1;
  process.stderr.write(`news-alerts: ${error instanceof Error ? error.message : String(error)}\n`);
} finally {
  await stack?.stop();
  await moto.stop();
}
process.exit(exitCode);

// --- helpers ---------------------------------------------------------------------------------

interface CycleReport {
  cycle: number;
  at: string;
  summary: RunSummary | undefined;
  failure: string | undefined;
  deliveries: DeliveredNotification[];
  inbox: SubscriberDelivery[];
}

/** Logs as JSON lines on stderr with --verbose; otherwise only warnings and errors are kept quiet. */
function structuredLog(verbose: boolean, lines: string[]) {
  const write =
    (level: string) =>
    (message: string, ...extra: Record<string, unknown>[]) => {
      const line = JSON.stringify(Object.assign({ level, message }, ...extra));
      lines.push(line);
      if (verbose) process.stderr.write(`${line}\n`);
    };
  return { debug: write('DEBUG'), info: write('INFO'), warn: write('WARN'), error: write('ERROR') };
}

/** New arrivals between cycle 1 and 2: breaking news, a late article and an update of an old one. */
function publishBreakingNews(local: LocalStack, at: number): void {
  const simulator = local.simulator;
  if (!simulator) return;
  const minutes = (n: number) => n * 60_000;
  const alreadyDelivered = simulator
    .articles()
    .find((article) => article.title.toLowerCase().includes('interest rate'));
  simulator.publish(
    {
      title: 'Magnitude 6.1 earthquake strikes off the coast of Hokkaido; no tsunami warning issued',
      summary: 'The quake struck at a depth of 40 km. Rail operators paused services for safety checks.',
      categories: ['003002000', '005000000'],
      media: 'M004',
      publishedAt: at - minutes(2),
    },
    {
      title: '東京で震度4の地震　交通機関に一部影響',
      summary: '気象庁によると、津波の心配はない。',
      categories: ['003002000'],
      media: 'M003',
      publishedAt: at - minutes(3),
    },
    {
      title: 'Chipmaker lifts semiconductor capex as AI server demand grows 🚀',
      summary: 'The company will add two fabs; analysts expect memory prices to firm.',
      categories: ['008001000', '002004000'],
      media: 'M006',
      publishedAt: at - minutes(1),
    },
    {
      title: 'Bank of Korea holds benchmark interest rate at 3.00%, signals patience',
      summary: 'The governor said inflation is easing but household debt remains a concern.',
      categories: ['002001000'],
      media: 'M005',
      publishedAt: at - minutes(4),
    },
    {
      title: 'Local election turnout hits a record high in the capital',
      summary: 'Officials extended polling hours at several stations.',
      categories: ['001000000'],
      media: 'M001',
      publishedAt: at - minutes(1),
    },
    {
      // Indexed late by the provider: published before the previous run's watermark.
      title: 'Inflation slows for a third month as energy prices ease',
      summary: 'Core inflation was unchanged.',
      categories: ['002000000'],
      media: 'M002',
      publishedAt: at - minutes(20),
    },
    {
      // Outside the API key's contracted media scope: the provider never returns it.
      title: 'Regional election results certified',
      categories: ['001000000'],
      media: OUT_OF_SCOPE_MEDIA,
      publishedAt: at - minutes(1),
    },
  );
  if (alreadyDelivered) {
    // The same article again with a new status: the ledger keeps it from being sent twice.
    simulator.publish({
      articleId: alreadyDelivered.articleId,
      title: alreadyDelivered.title,
      summary: alreadyDelivered.summary,
      url: alreadyDelivered.url,
      publishedAt: alreadyDelivered.publishedAt,
      categories: alreadyDelivered.categories.map((category) => category.code),
      media: alreadyDelivered.media.code,
      status: 'UPDATED',
    });
  }
}

function groupDeliveries(deliveries: readonly DeliveredNotification[]) {
  const grouped: Record<string, { deliveryId: string; articleKey: string; title: string; rules: readonly string[] }[]> =
    {};
  for (const delivered of deliveries) {
    const list = grouped[delivered.audienceId] ?? [];
    list.push({
      deliveryId: delivered.deliveryId,
      articleKey: delivered.articleKey,
      title: delivered.title,
      rules: delivered.ruleIds,
    });
    grouped[delivered.audienceId] = list;
  }
  return grouped;
}

function rule(title: string): string {
  return `\n── ${title} ${'─'.repeat(Math.max(3, 76 - title.length))}`;
}

function indent(text: string, prefix = '    │ '): string {
  return text
    .split('\n')
    .map((line) => `${prefix}${line}`)
    .join('\n');
}

function printCycle(report: CycleReport): void {
  console.log(rule(`Cycle ${report.cycle} · ${report.at}`));
  if (report.failure) {
    console.log(`  run failed: ${report.failure}`);
  }
  const summary = report.summary;
  if (summary) {
    console.log(
      `  Fetched ${summary.articlesFetched} articles on ${summary.window?.from}..${summary.window?.to} (${summary.pages} pages), ${summary.articlesNew} new · ${summary.articlesMatched} matched`,
    );
    console.log(
      `  Published ${summary.notificationsPublished} notifications · ${summary.notificationsAlreadyDelivered} already delivered (not sent again) · ${summary.notificationsFailed} failed · status ${summary.status}`,
    );
  }
  if (report.inbox.length === 0) {
    console.log('  No new alerts for anyone.');
    return;
  }
  const byAudience = new Map<string, SubscriberDelivery[]>();
  for (const item of report.inbox) {
    const list = byAudience.get(item.audienceId) ?? [];
    list.push(item);
    byAudience.set(item.audienceId, list);
  }
  for (const [audienceId, items] of byAudience) {
    const first = items[0] as SubscriberDelivery;
    console.log(`\n  ${audienceId} · ${first.channel} → ${first.endpoint} · ${items.length} alert(s)`);
    for (const item of items.slice(0, 2)) {
      if (item.subject) console.log(`    Subject: ${item.subject}`);
      console.log(indent(channelPreview(item)));
    }
    if (items.length > 2) console.log(`    … and ${items.length - 2} more`);
  }
}

/** The part of each channel's body a person would see first. */
function channelPreview(item: SubscriberDelivery): string {
  if (item.channel === 'email') return item.text.split('\n').slice(0, 14).join('\n');
  if (item.channel === 'sms') return item.text;
  try {
    const document = JSON.parse(item.text) as { content?: { title?: string; description?: string } };
    if (item.channel === 'slack') {
      return `${document.content?.title ?? ''}\n${document.content?.description ?? ''}`.trim();
    }
    return JSON.stringify(document, null, 2).split('\n').slice(0, 12).join('\n');
  } catch {
    return item.text;
  }
}

function printOutcome(
  rejected: readonly { table: string; key: string; reason: string }[],
  checks: Map<string, AudienceCheck> | undefined,
): void {
  console.log(rule('Summary'));
  for (const item of rejected) {
    console.log(`  Skipped invalid ${item.table} item "${item.key}": ${item.reason}`);
  }
  if (checks) {
    for (const [audienceId, check] of checks) {
      const exact = isExact(check);
      console.log(
        `  ${exact ? '✓' : '✗'} ${audienceId}: received ${check.received} of ${check.expected} expected alerts${
          exact
            ? ', nothing missing, nothing twice'
            : ` (missing ${check.missing.length}, unexpected ${check.unexpected.length}, twice ${check.duplicates.length})`
        }`,
      );
    }
  }
  console.log('\n  Next: `npm test` runs the test suite; README.md explains deploying to AWS.');
}
