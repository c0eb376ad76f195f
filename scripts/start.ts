/**
 * `npm start`: the whole alert job on embedded defaults, on this machine. It starts moto server
 * (the local AWS emulator) and the bundled news API simulator, creates the tables, topics,
 * subscriptions, secret and the example audiences and rules (or yours: `--audiences`, `--rules`),
 * runs alert cycles through the same code path as the Lambda handler, shows what every subscriber
 * received, per channel, and checks each audience received exactly what its rules match.
 *
 * `--publish-mode sharded` runs the alerts as a stack deployed with `publishMode: sharded` sends
 * them: each run queues work items on an SQS work queue (with its dead-letter queue) in moto, and
 * the publisher function, in this process behind an emulated SQS event source (4 at once), sends
 * them; the same checks of what every subscriber received must pass.
 *
 * With `--provider-url` it talks to a real provider instead (HTTPS only); the AWS side stays
 * local, and the check is made against the articles the runs fetched. `--now` pins the clock
 * (simulator and runs alike), so a run can be repeated exactly. Nothing here reaches AWS.
 *
 * Usage errors exit 2 with one line (and where help is); a failed run or check exits 1.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { RunSummary } from '#core/alert-run';
import { ConfigError } from '#core/errors';
import { AudienceSchema, audienceAttributes, parseAudience, parseRule, RuleSchema, ruleAttributes } from '#core/model';
import { integerOption } from '../cli/command.ts';
import { UsageError } from '../cli/errors.ts';
import { type FileItem, locateIssues, readItemFile } from '../cli/item-files.ts';
import { withNewAudienceDefaults } from '../cli/new-audience.ts';
// jsonText escapes control and bidi characters that provider ids and titles may carry.
import { jsonText, terminalText } from '../cli/output.ts';
import { deployedInitialLookbackMinutes, simulatorInitialLookbackMinutes } from '../cli/sandbox-descriptor.ts';
import { readUtf8File } from '../cli/utf8.ts';
import { parseDateTime } from '../cli/window.ts';
import { describeEmailSummary, emailSummary } from '../sandbox/email-preview.ts';
import { exampleAudiences, exampleRules, exampleSimulator, type SandboxAudience } from '../sandbox/examples.ts';
import { describeCollapse, isExact } from '../sandbox/expectations.ts';
import { MAIL_FOLDERS } from '../sandbox/local-email.ts';
import {
  type DeliveredNotification,
  type LocalStack,
  localPublisherConcurrency,
  type PublishMode,
  type SubscriberDelivery,
  startLocalStack,
} from '../sandbox/local-stack.ts';
import { startMoto } from '../sandbox/moto.ts';
import { checkProviderSettings } from '../sandbox/provider-check.ts';
import { projectRoot } from '../sandbox/python-env.mjs';
import {
  type CycleReport,
  describeCheckProblems,
  type QuickStartOutcome,
  runQuickStart,
} from '../sandbox/quick-start.ts';
import {
  describeSpikeDemoOutcome,
  describeSpikeDemoRun,
  runSpikeDemo,
  type SpikeDemoRun,
  spikeDemoAudiences,
  spikeDemoDocument,
  spikeDemoRules,
} from '../sandbox/spike-demo.ts';
import { createCertificateAuthority } from '../sandbox/tls.ts';

/** Ends the spike demo (the quick start's cycles and checks do not follow it), with its verdict. */
class SpikeDemoDone extends Error {
  constructor(readonly ok: boolean) {
    super('spike demo done');
  }
}

// The AWS SDK warns about Node 20 when a client is created; the Lambda runtime is Node 22.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const usageHint = '(npm start -- --help for usage)';

/** Every line for people goes out escaped: titles and bodies come from the provider and item files. */
const say = (text = ''): void => {
  process.stdout.write(`${terminalText(text)}\n`);
};

// Decimal digits only, as every whole-number option of the CLI (cli/command.ts).
const positiveInteger = integerOption(1);
const minutes = integerOption(0, 31 * 24 * 60);
const publishModes: readonly PublishMode[] = ['single', 'sharded'];
const publishMode = (value: string): PublishMode => {
  if (!(publishModes as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`must be ${publishModes.map((mode) => `"${mode}"`).join(' or ')}`);
  }
  return value as PublishMode;
};
/** --now: a date-time with a zone on the calendar, between 1970 and 9999 (as the CLI's windows, cli/window.ts). */
const instant = (value: string): number => {
  let at: number | undefined;
  try {
    at = parseDateTime(value.trim(), '--now', value);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    // The option and the value are in commander's line already; spans are no --now.
    throw new InvalidArgumentError(
      error.message.replace(/^--now "[\s\S]*?":? /, '').replace(/ \(a span counts back from now[^)]*\)$/, ''),
    );
  }
  if (at === undefined) {
    throw new InvalidArgumentError(
      'must be an ISO 8601 date-time with a zone, e.g. 2026-11-22T09:00:00+09:00 or 2026-11-22T00:00:00Z (without one it would depend on this machine’s zone)',
    );
  }
  return at;
};

/**
 * A path given on the command line, as the user meant it: npm runs `npm start` in the project's
 * root whatever directory it was typed in (`cd sandbox && npm start -- --rules mine.yaml`, or
 * `npm --prefix <clone> start`), and says where that was in INIT_CWD. `-` (stdin) stays as it is.
 */
function typedPath(path: string): string {
  const typedIn = process.env.npm_lifecycle_event === 'start' ? process.env.INIT_CWD : undefined;
  return path === '-' || typedIn === undefined || typedIn === '' ? path : resolve(typedIn, path);
}

const program = new Command('npm start --')
  .description(
    'Run news-alerts end to end on this machine: local AWS emulator (moto server), the bundled news API simulator, example audiences and rules.',
  )
  .addOption(new Option('--once', 'run a single alert cycle').conflicts('cycles'))
  .option('--cycles <n>', 'alert cycles to run (5 simulated minutes apart with the simulator)', positiveInteger, 3)
  .option(
    '--json',
    'print one machine-readable JSON summary on stdout (use `npm start -s -- --json` to drop npm’s banner)',
  )
  .option('--verbose', 'print the run’s structured logs on stderr')
  .option(
    '--publish-mode <mode>',
    'single: each run publishes to SNS itself; sharded: runs queue work items on SQS for the publisher function (run here, 4 at once), as cdk.json publishMode does',
    publishMode,
    'single',
  )
  .option('--seed <n>', 'simulator article seed', positiveInteger, 7)
  .option(
    '--now <iso>',
    'pin the clock of the simulator and the runs, e.g. 2026-11-22T09:00:00+09:00 (with --provider-url: cycles are --interval apart on that clock, without waiting)',
    instant,
  )
  .option(
    '--audiences <file>',
    'YAML/JSON audiences to create instead of the examples (as `audiences create --file`)',
    typedPath,
  )
  .option('--rules <file>', 'YAML/JSON rules to put instead of the examples (as `rules put --file`)', typedPath)
  .option(
    '--initial-lookback <minutes>',
    `where the first cycle starts (default ${simulatorInitialLookbackMinutes} with the simulator, ${deployedInitialLookbackMinutes} with --provider-url: the deployed default)`,
    minutes,
  )
  .option('--provider-url <url>', 'use this News Lookup provider instead of the simulator (https:// only)')
  .option('--provider-ca <file>', 'PEM file of an extra CA to trust for the provider', typedPath)
  .addOption(
    new Option(
      '--api-key <key>',
      'provider API key (prefer the NEWS_API_KEY variable: arguments show in the process list)',
    ).env('NEWS_API_KEY'),
  )
  .option('--response-mapping <file>', 'JSON file overriding where fields live in the provider response', typedPath)
  .option('--provider-time-zone <zone>', 'provider time zone (IANA) for date-only ranges and zone-less timestamps')
  .option('--page-size <n>', 'articles per page', positiveInteger)
  .option('--interval <seconds>', 'seconds between cycles with an external provider', positiveInteger, 60)
  .option('--mail-dir <dir>', 'where SES email is written as .eml files (default .sandbox/start-mail)', typedPath)
  .option(
    '--spike-demo',
    'spike alerts: a rule with three weeks of counts, a burst on its topic, one alert then an update',
  )
  .showHelpAfterError(usageHint)
  // commander's messages quote the command line: escaped like everything else printed.
  .configureOutput({ outputError: (text, write) => write(terminalText(text)) })
  .exitOverride();

interface StartOptions {
  once?: boolean;
  cycles: number;
  json?: boolean;
  verbose?: boolean;
  publishMode: PublishMode;
  seed: number;
  now?: number;
  audiences?: string;
  rules?: string;
  initialLookback?: number;
  providerUrl?: string;
  providerCa?: string;
  apiKey?: string;
  responseMapping?: string;
  providerTimeZone?: string;
  pageSize?: number;
  interval: number;
  mailDir?: string;
  spikeDemo?: boolean;
}

/** A usage error: one line, where help is, exit 2. */
function usage(message: string, details: readonly string[] = []): never {
  process.stderr.write(`npm start: ${terminalText(message)}\n`);
  for (const line of details) process.stderr.write(`  ${terminalText(line)}\n`);
  if (details.length === 0) process.stderr.write(`${usageHint}\n`);
  process.exit(2);
}

try {
  program.parse();
} catch (error) {
  if (!(error instanceof CommanderError)) throw error;
  // commander printed the one-line error and the hint (or the help, asked for with --help).
  process.exit(error.code === 'commander.helpDisplayed' || error.code === 'commander.version' ? 0 : 2);
}
const options = program.opts<StartOptions>();
const cycles = options.once ? 1 : options.cycles;
const useSimulator = options.providerUrl === undefined;
if (!useSimulator && !options.apiKey) {
  usage('--provider-url needs an API key: set NEWS_API_KEY (or pass --api-key)');
}
if (useSimulator) {
  for (const [flag, value] of [
    ['--provider-ca', options.providerCa],
    ['--response-mapping', options.responseMapping],
    ['--provider-time-zone', options.providerTimeZone],
    ['--interval', program.getOptionValueSource('interval') === 'cli' ? String(options.interval) : undefined],
  ] as const) {
    if (value !== undefined)
      usage(`${flag} applies to a real provider: give --provider-url too (the simulator needs none)`);
  }
}
if (options.spikeDemo) {
  // The demo schedules its burst on the bundled simulator, for its own rule and audience, and plays
  // its own runs: any of these would be ignored, or fail only after the resources were made.
  const ignored = [
    ['--provider-url', options.providerUrl !== undefined, 'the demo schedules its burst on the bundled simulator'],
    ['--audiences', options.audiences !== undefined, 'the demo uses its own audience, spike-desk'],
    ['--rules', options.rules !== undefined, `the demo uses its own rule, ${spikeDemoRules[0]?.ruleId}`],
    ['--once', options.once === true, 'the demo plays its own 18 runs'],
    ['--cycles', program.getOptionValueSource('cycles') === 'cli', 'the demo plays its own 18 runs'],
  ] as const;
  for (const [flag, given, why] of ignored) if (given) usage(`--spike-demo does not take ${flag}: ${why}`);
}
if (options.audiences !== undefined && options.rules === undefined) {
  usage('--audiences needs --rules too: the example rules are written for the example audiences');
}
let sandboxAudiences: readonly SandboxAudience[] = options.spikeDemo ? spikeDemoAudiences : exampleAudiences;
let ruleItems: readonly Readonly<Record<string, unknown>>[] = options.spikeDemo ? spikeDemoRules : exampleRules;
try {
  if (options.audiences !== undefined) sandboxAudiences = readAudiences(options.audiences);
  if (options.rules !== undefined) {
    ruleItems = readRules(
      options.rules,
      new Set(sandboxAudiences.map((audience) => audience.item.audienceId)),
      options.audiences ?? 'the example audiences',
    );
  }
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  usage(error.message, error.details);
}
let responseMapping: string | undefined;
if (options.responseMapping) {
  try {
    // A field name in another encoding would never be found in the provider's (UTF-8) JSON.
    responseMapping = readUtf8File(options.responseMapping, '--response-mapping');
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    usage(error.message, error.details);
  }
}
let providerCa: string | undefined;
if (options.providerCa) {
  try {
    providerCa = readFileSync(options.providerCa, 'utf8');
  } catch (error) {
    usage(`--provider-ca: cannot read ${options.providerCa}: ${(error as Error).message}`);
  }
}
const progress = (message: string) => process.stderr.write(`news-alerts: ${terminalText(message)}\n`);

/**
 * The sandbox's clock. Pinned (`--now`, or always with the simulator): cycles are a simulated
 * step apart, so the same command reads the same window. Otherwise the real clock.
 */
const pinned = useSimulator || options.now !== undefined;
let clock = options.now ?? Date.now();
const now = () => (pinned ? clock : Date.now());
const schedulerStepMs = useSimulator ? 5 * 60_000 : options.interval * 1000;

const initialLookbackMinutes =
  options.initialLookback ?? (useSimulator ? simulatorInitialLookbackMinutes : deployedInitialLookbackMinutes);
const environment: Record<string, string> = { INITIAL_LOOKBACK_MINUTES: String(initialLookbackMinutes) };
if (options.providerTimeZone) environment.NEWS_API_TIME_ZONE = options.providerTimeZone;
if (options.pageSize) environment.NEWS_API_PAGE_SIZE = String(options.pageSize);
if (responseMapping !== undefined) environment.NEWS_API_RESPONSE_MAPPING = responseMapping;
try {
  checkProviderSettings(environment, { url: options.providerUrl, caPem: providerCa });
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  usage(error.message);
}

const sandboxDir = join(projectRoot, '.sandbox');
mkdirSync(sandboxDir, { recursive: true });
const ca = await createCertificateAuthority();
// A file of this run's own: two npm start at once must not trust each other's CA (the second
// would replace the first's file while moto still reads it for its HTTPS subscribers).
const caBundlePath = join(sandboxDir, `npm-start-ca-${process.pid}.pem`);
writeFileSync(caBundlePath, ca.cert);
process.on('exit', () => rmSync(caBundlePath, { force: true }));

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
    audiences: sandboxAudiences,
    rules: ruleItems,
    simulator: { seed: options.seed, ...exampleSimulator },
    provider: useSimulator
      ? undefined
      : { url: options.providerUrl as string, apiKey: options.apiKey as string, caPem: providerCa },
    log: structuredLog(options.verbose === true, logLines),
    publishMode: options.publishMode,
    // SES email through moto's SES; every message is written as a .eml file (docs/email.md).
    email: { mailDir: options.mailDir ?? join(sandboxDir, MAIL_FOLDERS.npmStart) },
  });
  progress(
    `created tables, ${stack.topics.size} audience topics with their subscriptions, the API-key secret, and ${
      options.spikeDemo
        ? 'the spike demo’s rule'
        : options.rules === undefined
          ? 'the example rules'
          : `the rules of ${options.rules}`
    }`,
  );
  progress(
    stack.publishing
      ? `publish mode sharded: runs queue work items on ${stack.publishing.queueUrl} (dead-letter queue ${stack.publishing.deadLetterQueueUrl}); the publisher function drains it here, ${localPublisherConcurrency} batches at once`
      : 'publish mode single: each run publishes to SNS itself (--publish-mode sharded queues work items for the publisher function)',
  );
  progress(
    `the first cycle looks back ${initialLookbackMinutes.toLocaleString('en-US')} minutes${
      initialLookbackMinutes === deployedInitialLookbackMinutes
        ? ' (the deployed default)'
        : ` (--initial-lookback; a deployed stack's first run looks back ${deployedInitialLookbackMinutes})`
    }${options.now !== undefined ? `, from ${new Date(clock).toISOString()} (--now)` : ''}`,
  );
  if (options.spikeDemo) {
    // Spike alerts (sandbox/spike-demo.ts): its own runs on the pinned clock instead of the cycles.
    const demo = await runSpikeDemo({
      stack,
      now,
      setClock: (at) => (clock = at),
      ...(options.json ? {} : { onRun: (run: SpikeDemoRun) => say(describeSpikeDemoRun(run)) }),
    });
    if (options.json) process.stdout.write(`${jsonText(spikeDemoDocument(demo))}\n`);
    else for (const line of describeSpikeDemoOutcome(demo)) say(line);
    throw new SpikeDemoDone(demo.ok);
  }
  const outcome = await runQuickStart({
    stack,
    audiences: sandboxAudiences,
    ruleItems,
    cycles,
    clock: {
      now,
      pinned,
      next: async () => {
        if (pinned) clock += schedulerStepMs;
        else await new Promise((resolve) => setTimeout(resolve, schedulerStepMs));
      },
    },
    ...(options.json ? {} : { onCycle: printCycle }),
  });
  if (!outcome.ok) exitCode = 1;

  if (options.json) {
    process.stdout.write(
      `${jsonText({
        provider: useSimulator
          ? { simulator: true, url: stack.simulator?.url }
          : { simulator: false, url: options.providerUrl },
        clock: { pinned, start: new Date(options.now ?? outcome.cycles[0]?.at ?? now()).toISOString() },
        initialLookbackMinutes,
        publishMode: stack.publishMode,
        ...(stack.publishing ? { publisher: stack.publishing.stats() } : {}),
        invalidItems: outcome.ruleSet.rejected,
        cycles: outcome.cycles.map((report) => ({
          cycle: report.cycle,
          at: report.at,
          failure: report.failure,
          run: report.summary,
          received: groupDeliveries(report.deliveries),
          channels: report.inbox,
        })),
        checkedAgainst: outcome.checkedAgainst,
        audiences: Object.fromEntries(outcome.checks),
        stories: Object.fromEntries(outcome.stories),
        updateNoticeProblems: Object.fromEntries(outcome.updateProblems),
        unchecked: Object.fromEntries(outcome.unchecked),
        ...(stack.email ? { email: await emailSummary(stack.email, 'chips-team') } : {}),
        ok: exitCode === 0,
      })}\n`,
    );
  } else {
    printOutcome(outcome, stack.config.run.providerTimeZone);
    if (stack.email) {
      say(rule('Email (SES)'));
      for (const line of describeEmailSummary(await emailSummary(stack.email, 'chips-team'), process.cwd())) say(line);
    }
    // Last, so it is what the reader sees: the step after this one (README, "The CLI in five lines").
    say('\n  Next: the ops command line, on a sandbox that stays up until `news-alerts sandbox down`:');
    say('    npm ci && npm link && news-alerts sandbox up && news-alerts --local rules list');
    say('  `npm test` runs the test suite; docs/ covers operating the service and deploying it to AWS.');
  }
} catch (error) {
  exitCode = error instanceof SpikeDemoDone && error.ok ? 0 : 1;
  if (!(error instanceof SpikeDemoDone)) {
    process.stderr.write(`news-alerts: ${terminalText(error instanceof Error ? error.message : String(error))}\n`);
  }
} finally {
  await stack?.stop();
  await moto.stop();
}
process.exit(exitCode);

// --- helpers ---------------------------------------------------------------------------------

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

/**
 * What a cycle read. A first run has no watermark: it reads back the initial look-back, and has
 * no last run or re-read articles to speak of.
 */
function fetchedLine(summary: RunSummary): string {
  const fetched = `Fetched ${summary.articlesFetched} articles on ${summary.window?.from}..${summary.window?.to} (${summary.pages} pages)`;
  return summary.watermarkBefore === undefined
    ? `${fetched}: a first run (no watermark yet) reads back the initial look-back · ${summary.articlesMatched} matched a rule`
    : `${fetched}: ${summary.articlesNew} published since the last run · ${summary.articlesMatched} matched a rule (articles read again included)`;
}

function printCycle(report: CycleReport): void {
  say(rule(`Cycle ${report.cycle} · ${report.at}`));
  if (report.failure) {
    say(`  run failed: ${report.failure}`);
  }
  const summary = report.summary;
  if (summary) {
    say(`  ${fetchedLine(summary)}`);
    const sharded = shardedLine(summary);
    // Notifications are article × audience: one matched article can be several, or none (held).
    const tail = `${summary.notificationsAlreadyDelivered} notifications already delivered (not sent again) · ${summary.notificationsFailed} failed · status ${summary.status}`;
    if (sharded) {
      // The publishers sent the alerts; what the run published itself (digests) is counted apart.
      say(sharded);
      say(`  The run itself: ${summary.notificationsPublished} published · ${tail}`);
    } else {
      say(`  Published ${summary.notificationsPublished} notifications · ${tail}`);
    }
    const collapsedCopies = countOf(summary, 'notificationsCollapsed');
    if (collapsedCopies > 0) {
      say(`  Collapsed ${collapsedCopies} copies of stories into the alert their audience already has (not sent)`);
    }
  }
  if (report.inbox.length === 0 && report.deliveries.length === 0) {
    say('  No new alerts for anyone.');
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
    const collapsedHere = summary ? countOf(summary.audiences[audienceId], 'collapsed') : 0;
    say(
      `\n  ${audienceId} · ${first.channel} → ${first.endpoint} · ${items.length} alert(s)${
        collapsedHere > 0 ? ` · ${collapsedHere} copies collapsed` : ''
      }`,
    );
    for (const item of items.slice(0, 2)) {
      if (item.subject) say(`    Subject: ${item.subject}`);
      say(indent(channelPreview(item)));
    }
    if (items.length > 2) say(`    … and ${items.length - 2} more`);
  }
  // Audiences from --audiences have no subscribers here: what their topic sent is in its audit queue.
  for (const [audienceId, delivered] of Object.entries(groupDeliveries(report.deliveries))) {
    if (byAudience.has(audienceId)) continue;
    say(`\n  ${audienceId} · (no subscribers here; from its audit queue) · ${delivered.length} alert(s)`);
    for (const item of delivered.slice(0, 3)) say(`    • ${item.title}  [${item.rules.join(', ')}]`);
    if (delivered.length > 3) say(`    … and ${delivered.length - 3} more`);
  }
}

/**
 * What a sharded run queued and what the publishers made of it, or undefined for a run that
 * queued nothing and settled nothing (single mode).
 */
function shardedLine(summary: RunSummary): string | undefined {
  const parts: string[] = [];
  const settled = summary.settled;
  if (settled) {
    parts.push(
      `settled the work items of ${settled.dispatchId}: ${settled.state}, ${settled.done}/${settled.items} done, ${settled.published} published`,
    );
  }
  const dispatch = summary.dispatch;
  if (dispatch || summary.notificationsQueued > 0) {
    const queued = `Queued ${summary.notificationsQueued} notifications in ${summary.workItemsQueued} work items`;
    if (!dispatch) parts.push(queued);
    else if (dispatch.state === 'completed') {
      parts.push(
        `${queued} → the publishers published ${dispatch.published}${dispatch.updateNotices > 0 ? ` + ${dispatch.updateNotices} update notices` : ''} (${dispatch.done}/${dispatch.items} items done${dispatch.alreadyDelivered > 0 ? `, ${dispatch.alreadyDelivered} already delivered` : ''}${dispatch.parked > 0 ? `, ${dispatch.parked} parked` : ''})`,
      );
    } else {
      parts.push(
        `${queued} → ${dispatch.state}: ${dispatch.done}/${dispatch.items} items done, ${dispatch.published} published so far`,
      );
    }
  }
  return parts.length === 0 ? undefined : `  ${parts.join(' · ')}`;
}

/** The first `count` lines of `text`, and a line saying how many more there are, if any. */
function firstLines(text: string, count: number): string {
  const lines = text.split('\n');
  if (lines.length <= count) return text;
  return [...lines.slice(0, count), `… ${lines.length - count} more line(s); --json prints every message whole`].join(
    '\n',
  );
}

/** The part of each channel's body a person would see first (a cut says so: it is not the message's end). */
function channelPreview(item: SubscriberDelivery): string {
  if (item.channel === 'email') return firstLines(item.text, 14);
  if (item.channel === 'sms') return item.text;
  try {
    const document = JSON.parse(item.text) as { content?: { title?: string; description?: string } };
    if (item.channel === 'slack') {
      return `${document.content?.title ?? ''}\n${document.content?.description ?? ''}`.trim();
    }
    return firstLines(JSON.stringify(document, null, 2), 12);
  } catch {
    return item.text;
  }
}

function printOutcome(outcome: QuickStartOutcome, timeZone: string): void {
  const { checks, unchecked, stories, updateProblems } = outcome;
  const clockOf = (at: number) =>
    new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at);
  say(rule('Summary'));
  for (const item of outcome.ruleSet.rejected) {
    say(`  Skipped invalid ${item.table} item "${item.key}": ${item.reason}`);
  }
  say(`  Expected alerts are worked out from ${outcome.checkedAgainst}, with the reference matcher.`);
  for (const [audienceId, check] of checks) {
    const exact = isExact(check);
    say(
      `  ${exact ? '✓' : '✗'} ${audienceId}: received ${check.received} of ${check.expected} expected alerts${
        check.collapsed.length > 0 ? ` (${check.collapsed.length} more collapsed into stories it has)` : ''
      }${
        exact
          ? ', nothing missing, nothing twice'
          : ` (missing ${check.missing.length}, unexpected ${check.unexpected.length}, twice ${check.duplicates.length})`
      }${check.notYetDue.length > 0 ? `; ${check.notYetDue.length} not due yet` : ''}`,
    );
    for (const line of describeCheckProblems(check)) say(`      ${line}`);
    for (const pending of check.notYetDue) {
      say(
        `      not due yet: ${pending.articleKey}${
          pending.listedAt === undefined
            ? ''
            : `, listed ${pending.minutesLate} min late at ${clockOf(pending.listedAt)}`
        }; due by the run at or after ${clockOf(pending.dueAt)} (the next recheck for late articles)`,
      );
    }
  }
  for (const [audienceId, reason] of unchecked) say(`  - ${audienceId}: not checked: ${reason}`);
  if (stories.size > 0) {
    say('\n  One story, one alert (copies of a story other outlets republished, collapsed per audience):');
    for (const [audienceId, report] of stories) say(`    ${describeCollapse(audienceId, report)}`);
  }
  for (const [audienceId, problems] of updateProblems) {
    for (const problem of problems) say(`  ✗ ${audienceId}: update notice ${problem}`);
  }
}

/**
 * A count the run summary may carry: the story counts (`notificationsCollapsed`, an audience's
 * `collapsed`) arrive with the story pipeline, so an older summary without them reads as 0.
 */
function countOf(record: object | undefined, field: string): number {
  const value = (record as Record<string, unknown> | undefined)?.[field];
  return typeof value === 'number' ? value : 0;
}

/** Items of a file, or a usage error listing each problem at its line. */
function readItems(file: string, kind: 'rules' | 'audiences'): FileItem[] {
  const items = readItemFile(file, kind);
  if (items.length === 0) throw new UsageError(`${file} holds no ${kind}`);
  return items;
}

/** `--audiences`: validated as `audiences create --file` does; they get no subscribers here. */
function readAudiences(file: string): SandboxAudience[] {
  const problems: string[] = [];
  const audiences: SandboxAudience[] = [];
  const seen = new Set<string>();
  for (const item of readItems(file, 'audiences')) {
    const raw = (typeof item.value === 'object' && item.value !== null ? item.value : {}) as Record<string, unknown>;
    // New audiences, with the defaults `audiences create --file` gives the same file.
    const { topicArn, ...value } = withNewAudienceDefaults(raw);
    const id = typeof value.audienceId === 'string' ? value.audienceId : item.label;
    if (topicArn !== undefined) {
      process.stderr.write(
        `news-alerts: ${terminalText(`${item.locate(['topicArn'])}: audience "${id}": topicArn is not used here; the sandbox makes a topic of its own`)}\n`,
      );
    }
    const what = `audience "${id}"`;
    // The sandbox makes the topic: validated with a stand-in ARN, as `audiences create` does.
    const candidate = { ...value, topicArn: `arn:aws:sns:us-east-1:000000000000:audience-${id}` };
    const parsed = parseAudience(candidate);
    if (!parsed.ok) {
      const result = AudienceSchema.safeParse(candidate);
      problems.push(
        ...(result.success
          ? [`${item.locate()}: ${what}: ${parsed.rejected.reason}`]
          : locateIssues({ ...item, value: candidate }, result.error, audienceAttributes, what)),
      );
      continue;
    }
    if (seen.has(id)) {
      problems.push(`${item.locate(['audienceId'])}: ${what} appears twice`);
      continue;
    }
    seen.add(id);
    audiences.push({ item: { ...value, audienceId: id }, subscribers: [] });
  }
  if (problems.length > 0)
    throw new UsageError(`${file}: ${problems.length} problem(s); nothing was started`, problems);
  return audiences;
}

/** `--rules`: validated as `rules put --file` does, against the audiences of this run. */
function readRules(file: string, audienceIds: ReadonlySet<string>, audienceSource: string): Record<string, unknown>[] {
  const problems: string[] = [];
  const rules: Record<string, unknown>[] = [];
  const seen = new Set<string>();
  for (const item of readItems(file, 'rules')) {
    const parsed = parseRule(item.value);
    if (!parsed.ok) {
      const result = RuleSchema.safeParse(item.value);
      const what = `rule ${parsed.rejected.key === '<missing key>' ? item.label : `"${parsed.rejected.key}"`}`;
      problems.push(
        ...(result.success
          ? [`${item.locate()}: ${what}: ${parsed.rejected.reason}`]
          : locateIssues(item, result.error, ruleAttributes, what)),
      );
      continue;
    }
    const { ruleId, audienceId } = parsed.value;
    if (seen.has(ruleId)) {
      problems.push(`${item.locate(['ruleId'])}: rule "${ruleId}" appears twice`);
      continue;
    }
    if (!audienceIds.has(audienceId)) {
      problems.push(
        `${item.locate(['audienceId'])}: rule "${ruleId}": audience "${audienceId}" is not in ${audienceSource} (${[...audienceIds].join(', ')})`,
      );
      continue;
    }
    seen.add(ruleId);
    rules.push(item.value as Record<string, unknown>);
  }
  if (problems.length > 0)
    throw new UsageError(`${file}: ${problems.length} problem(s); nothing was started`, problems);
  return rules;
}
