/**
 * Runs the news API simulator on its own (`npm run simulator -- --help`). It prints where the CA
 * certificate and the keys are, never the keys: they are simulator-only fakes, but a habit of not
 * printing secrets is cheaper than remembering which ones are fake.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError, Option } from 'commander';
import { createCertificateAuthority } from '#sandbox/tls';
import { type SimRequestRecord, startNewsSimulator } from './news-simulator.ts';

const projectRoot = fileURLToPath(new URL('../', import.meta.url));

const integer =
  (min: number) =>
  (value: string): number => {
    // Decimal digits (a sign where negatives are allowed): Number() would read '' as 0, '1e1' as 10.
    const parsed = (min < 0 ? /^-?\d+$/ : /^\d+$/).test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(parsed) || parsed < min) {
      throw new InvalidArgumentError(`expected a whole number >= ${min}, in decimal digits`);
    }
    return parsed;
  };

const share = (value: string): number => {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isFinite(parsed) || parsed < 0 || parsed > 1) {
    throw new InvalidArgumentError('expected a share from 0 to 1, e.g. 0.2');
  }
  return parsed;
};

const adminHelp = `
Admin API (loopback clients only, no API key):
  POST   /_sim/faults      inject a fault or a list of faults (JSON), e.g.
                           {"kind":"status","status":429,"retryAfter":"2","times":3}
                           {"kind":"delay","ms":5000} {"kind":"malformed"} {"kind":"error-body"}
                           {"kind":"shift","insert":5} {"kind":"duplicate","page":2} {"kind":"drop"}
                           status is one of 408 429 500 502 503 504; every fault takes "times"
                           (default 1) and "page" (only that page). Faults queue in order; each
                           request takes the first one that matches.
  GET    /_sim/faults      list pending faults
  DELETE /_sim/faults      clear pending faults
  POST   /_sim/articles    publish an article or a list (JSON):
                           {"title":"...","publishedAt":"2026-11-22T09:15:00+09:00",
                            "categories":["002001000"],"media":"M001","status":"PUBLISHED"}
                           only "title" is required; an existing articleId is replaced
  GET    /_sim/requests    recorded API requests (key names, never keys); ?since=<id>

Example:
  curl --cacert <ca.pem> -H 'Content-Type: application/json' \\
       -H "X-API-KEY: $(node -p 'require("./.sandbox/news-simulator/keys.json").live.key')" \\
       -d '{"paginationMethod":"PAGE","publishedAtStart":"2026-11-21","publishedAtEnd":"2026-11-22","page":1,"size":10}' \\
       https://127.0.0.1:8443/news
`;

const program = new Command()
  .name('news-simulator')
  .description('Serve the News Lookup API simulator over HTTPS on 127.0.0.1 with seeded articles.')
  .option('--port <port>', 'port on 127.0.0.1 (0 picks a free one)', integer(0), 8443)
  .option('--seed <n>', 'seed of the generated articles', integer(Number.MIN_SAFE_INTEGER), 1)
  .option('--days <n>', 'days of articles to generate back from now', integer(0), 3)
  .option(
    '--per-day <n>',
    'original stories per day (syndicated copies come on top, see --syndication-rate)',
    integer(0),
    200,
  )
  .option('--no-live', 'do not keep publishing new seeded articles as time passes')
  .option(
    '--syndication-rate <share>',
    'share of stories other outlets republish as syndicated copies and rewrites (2 to 8 copies each, within 40 minutes); 0 for none',
    share,
    0.2,
  )
  .option(
    '--update-rate <share>',
    'share of articles that come back 10 minutes to 6 hours later with status UPDATED (rarely DELETED), sometimes retitled; 0 for none',
    share,
    0.05,
  )
  .option('--time-zone <zone>', 'provider time zone for date filtering and timestamps', 'Asia/Seoul')
  .addOption(
    new Option('--order <order>', 'response order')
      .choices(['newest-first', 'oldest-first', 'unordered'])
      .default('newest-first'),
  )
  .addOption(
    new Option('--timestamp-format <format>', 'publishedAt format on the wire')
      .choices(['iso', 'rfc822', 'compact', 'mixed'])
      .default('iso'),
  )
  .option('--cursor', 'also accept paginationMethod CURSOR', false)
  .option('--max-page-size <n>', 'largest accepted size', integer(1), 100)
  .option('--max-range-days <n>', 'longest accepted date range in days', integer(1), 31)
  .option(
    '--state-dir <dir>',
    'where the CA certificate and the key file are written',
    join(projectRoot, '.sandbox', 'news-simulator'),
  )
  .option('--quiet', 'do not log each request', false)
  .addHelpText('after', adminHelp);

interface CliOptions {
  port: number;
  seed: number;
  days: number;
  perDay: number;
  live: boolean;
  syndicationRate: number;
  updateRate: number;
  timeZone: string;
  order: 'newest-first' | 'oldest-first' | 'unordered';
  timestampFormat: 'iso' | 'rfc822' | 'compact' | 'mixed';
  cursor: boolean;
  maxPageSize: number;
  maxRangeDays: number;
  stateDir: string;
  quiet: boolean;
}

const percent = (rate: number): string => `${Math.round(rate * 1000) / 10}%`;

const logLine = (entry: SimRequestRecord): string =>
  [
    new Date(entry.time).toISOString(),
    entry.method,
    entry.path,
    entry.status ?? 'dropped',
    entry.keyName ?? '-',
    entry.page === undefined ? '' : `page=${entry.page}`,
    entry.articleCount === undefined ? '' : `articles=${entry.articleCount}`,
    entry.fault ? `fault=${entry.fault}` : '',
  ]
    .filter((part) => part !== '')
    .join(' ');

async function main(): Promise<void> {
  program.parse();
  const options = program.opts<CliOptions>();
  const stateDir = resolve(options.stateDir);
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });

  const ca = await createCertificateAuthority();
  const simulator = await startNewsSimulator({
    ca,
    port: options.port,
    seed: options.seed,
    generate: { days: options.days, perDay: options.perDay, live: options.live },
    syndicationRate: options.syndicationRate,
    updateRate: options.updateRate,
    timeZone: options.timeZone,
    order: options.order,
    timestampFormat: options.timestampFormat,
    cursorMode: options.cursor,
    maxPageSize: options.maxPageSize,
    maxRangeDays: options.maxRangeDays,
    ...(options.quiet ? {} : { onRequest: (entry: SimRequestRecord) => console.log(logLine(entry)) }),
  });

  const caPath = join(stateDir, 'ca.pem');
  writeFileSync(caPath, ca.cert);
  const keysPath = join(stateDir, 'keys.json');
  const keyFile = {
    live: { name: 'sandbox-live', key: simulator.liveKey },
    test: { name: 'sandbox-test', key: simulator.testKey },
  };
  writeFileSync(keysPath, `${JSON.stringify(keyFile, null, 2)}\n`, { mode: 0o600 });
  // `mode` only applies when the file is created; a file left by an earlier run keeps its own.
  chmodSync(keysPath, 0o600);

  console.log(`News API simulator listening on ${simulator.url} (POST ${simulator.url}/news)`);
  console.log(`  CA certificate: ${caPath}`);
  console.log(`  API keys (live: sandbox-live, test: sandbox-test) written to ${keysPath} (mode 0600)`);
  console.log(
    `  ${simulator.articles().length} articles, seed ${options.seed}, time zone ${simulator.timeZone}, ` +
      `order ${options.order}, timestamps ${options.timestampFormat}${options.cursor ? ', cursor mode' : ''}` +
      `${options.live ? `, ${options.perDay} new stories a day (plus their copies)` : ''}`,
  );
  console.log(
    `  ${percent(options.syndicationRate)} of stories republished by other outlets (2 to 8 copies each), ` +
      `${percent(options.updateRate)} of articles revised later (UPDATED, rarely DELETED)`,
  );
  console.log('  Admin API: see --help. Stop with Ctrl-C.');

  const stop = () => {
    void simulator.stop().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(`news-simulator: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
