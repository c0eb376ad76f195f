/**
 * What a failure becomes (cli/errors.ts): exit code, stable code, message and problems. AWS errors
 * come from real SDK clients (the CLI's own, against a loopback port nothing listens on), so the
 * mapping is checked against what the SDK really throws; the errors of a live emulator are in
 * test/integration/cli-aws-errors.test.ts (this folder runs without one).
 */

import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { CommanderError } from 'commander';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { LeaseHeldError, ProviderError, ProviderStalledError, WatermarkConflictError } from '#core/errors';
import { unusedPort } from '#test/aws';
import { AwsClients } from '../../cli/aws-clients.ts';
import {
  CliError,
  ConcurrentChangeError,
  failureDocument,
  failureLines,
  failureOf,
  NotFoundError,
  OperationFailedError,
  type Problem,
  UsageError,
  versionConflict,
  withoutOptionValues,
} from '../../cli/errors.ts';

const clients: AwsClients[] = [];
afterAll(() => {
  for (const client of clients) client.destroy();
});

/** What `send` threw. */
async function thrown(send: () => Promise<unknown>): Promise<unknown> {
  try {
    await send();
  } catch (error) {
    return error;
  }
  throw new Error('the call succeeded');
}

describe('the CLI errors', () => {
  it.each([
    ['usage', new UsageError('bad'), 2, 'usage'],
    ['not found', new NotFoundError('rule x does not exist'), 3, 'not_found'],
    ['failed', new OperationFailedError('partly'), 1, 'failed'],
    ['concurrent change', new ConcurrentChangeError('rule x changed'), 1, 'conflict'],
    ['watermark conflict', new WatermarkConflictError('the watermark moved'), 1, 'conflict'],
    ['lease held', new LeaseHeldError('run-1', 1_800_000_000_000), 1, 'lease_held'],
    [
      'only version conflicts',
      new UsageError('1 problem', [versionConflict('rule x: made from version 1')]),
      1,
      'conflict',
    ],
    ['conflicts and usage', new UsageError('2 problems', [versionConflict('v'), 'bad keyword']), 2, 'usage'],
    ['interrupted', new CliError('interrupted (SIGINT)', 130 as 1), 130, 'interrupted'],
    ['anything else', new Error('boom'), 1, 'failed'],
  ])('%s: exit %i, code %s', (_name, error, exitCode, code) => {
    expect(failureOf(error)).toMatchObject({ exitCode, code });
  });

  it('problems keep their structure for --json and read as file:line: item: message on stderr', () => {
    const error = new UsageError('rules.yaml: 2 problem(s)', [
      { message: 'unknown attribute "colour"', file: 'rules.yaml', line: 4, item: 'quakes' },
      'plain line',
    ]);
    expect(error.details).toEqual(['rules.yaml:4: quakes: unknown attribute "colour"', 'plain line']);
    expect(failureLines(error).map((line) => line.text)).toEqual([
      'rules.yaml: 2 problem(s)',
      '  rules.yaml:4: quakes: unknown attribute "colour"',
      '  plain line',
    ]);
    expect(failureDocument(failureOf(error))).toEqual({
      ok: false,
      error: { code: 'usage', message: 'rules.yaml: 2 problem(s)' },
      problems: [
        { message: 'unknown attribute "colour"', file: 'rules.yaml', line: 4, item: 'quakes' },
        { message: 'plain line' },
      ],
    });
  });

  it('a problem’s detail lines follow it as they are, and stay out of --json', () => {
    const error = new UsageError('the query does not parse', [
      { message: 'query: expected a term at column 3', detail: ['    a (', '      ^'] },
    ]);
    expect(failureLines(error)).toEqual([
      { text: 'the query does not parse' },
      { text: '  query: expected a term at column 3' },
      { text: '    a (', detail: true },
      { text: '      ^', detail: true },
    ]);
    expect(failureDocument(failureOf(error)).problems).toEqual([{ message: 'query: expected a term at column 3' }]);
  });
});

describe('AWS errors point the way', () => {
  it('an endpoint nothing answers on is exit 3 naming AWS_ENDPOINT_URL and --region', async () => {
    const aws = new AwsClients({
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${await unusedPort()}`,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    clients.push(aws);
    const error = await thrown(() => aws.documents.send(new GetCommand({ TableName: 'rules', Key: { id: 'x' } })));
    const failure = failureOf(error, { sandboxDescriptor: '/repo/.sandbox/sandbox.json' });
    expect(failure).toMatchObject({ exitCode: 3, code: 'unreachable' });
    expect(failure.message).toContain('cannot reach AWS for DynamoDB table rules');
    expect(failure.message).toContain('--region');
    expect(failure.message).toContain('did you mean --local?');
    expect(failureOf(error, { local: true }).message).toContain("is the sandbox up? ('news-alerts sandbox status')");
  });

  it('leaves the value of an --option=value out of commander messages (it may be a secret)', () => {
    expect(withoutOptionValues("error: unknown option '--slack-webhook=https://hooks.slack.com/services/T/B/x'")).toBe(
      "error: unknown option '--slack-webhook=…'",
    );
    expect(withoutOptionValues("error: unknown option '-k=s3cret' (Did you mean --key?)")).toBe(
      "error: unknown option '-k=…' (Did you mean --key?)",
    );
    expect(withoutOptionValues("error: unknown option '--colour'")).toBe("error: unknown option '--colour'");
    // A value with spaces or quotes in it (given quoted to the shell) is left out whole.
    expect(withoutOptionValues("error: unknown option '--key=a b c'\n(Did you mean --json?)")).toBe(
      "error: unknown option '--key=…'\n(Did you mean --json?)",
    );
    expect(withoutOptionValues("error: unknown option '--key=it's-s3cret'.")).toBe("error: unknown option '--key=…'.");
    const error = new CommanderError(1, 'commander.unknownOption', "error: unknown option '--key=abc123secret'");
    expect(failureOf(error).message).toBe("unknown option '--key=…'");
  });

  it('leaves out a value attached to a short option, and a "command" that is no word (a key, set forgotten)', () => {
    expect(withoutOptionValues("error: unknown option '-kSECRETKEY123'")).toBe("error: unknown option '-k…'");
    expect(withoutOptionValues("error: unknown option '-kit's s3cret'.")).toBe("error: unknown option '-k…'.");
    expect(withoutOptionValues("error: unknown option '-k'")).toBe("error: unknown option '-k'");
    const command = new CommanderError(1, 'commander.unknownCommand', "error: unknown command 'SECRETKEY123'");
    expect(failureOf(command).message).toBe(
      'unknown command (12 characters, not shown: a value typed where a command goes may be a secret)',
    );
    expect(withoutOptionValues("error: unknown command 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'")).not.toContain('4eC39');
    // A misspelt command is still quoted, with commander's suggestion.
    expect(withoutOptionValues("error: unknown command 'rulse'\n(Did you mean rules?)")).toBe(
      "error: unknown command 'rulse'\n(Did you mean rules?)",
    );
  });

  it('a provider that cannot be reached is the provider, exit 1, not "cannot reach AWS"', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    const errors = [
      new ProviderError(
        'the news API request for 2026-11-24..2026-11-24 page 1 failed after 5 attempt(s): network error ECONNREFUSED',
        { retryable: true },
        { cause: refused },
      ),
      new ProviderStalledError("the run's time budget ran out while the provider was failing", {
        cause: Object.assign(new Error('getaddrinfo ENOTFOUND news.example'), { code: 'ENOTFOUND' }),
      }),
      new Error('the run failed', {
        cause: new ProviderError('session expired at the provider', { retryable: true }, { cause: refused }),
      }),
      new AggregateError(
        [new ProviderError('page 3 failed', { retryable: true }, { cause: refused })],
        'two reads failed',
      ),
    ];
    for (const error of errors) {
      for (const setting of [{}, { local: true }, { sandboxDescriptor: '/s.json' }]) {
        const failure = failureOf(error, setting);
        expect(failure).toMatchObject({ exitCode: 1, code: 'failed' });
        expect(failure.message).not.toMatch(/AWS|sandbox|--local|sso/);
        expect(failure.message).toContain(error.message);
      }
    }
  });

  it.each([
    // What the SDK throws, by name and message.
    ['Error', 'Region is missing', 'no_region', 3, /set AWS_REGION \(or --region\)/],
    [
      'CredentialsProviderError',
      'Could not load credentials from any providers',
      'no_credentials',
      3,
      /AWS_PROFILE \(or --profile\)/,
    ],
    [
      'ExpiredTokenException',
      'The security token included in the request is expired',
      'expired_credentials',
      3,
      /run aws sso login/,
    ],
    [
      'UnrecognizedClientException',
      'The security token included in the request is invalid.',
      'expired_credentials',
      3,
      /run aws sso login/,
    ],
    [
      'AccessDeniedException',
      'User: arn:aws:iam::1:user/x is not authorized',
      'access_denied',
      1,
      /lacks the permission/,
    ],
  ])('%s (%s) → %s, exit %i', (name, message, code, exitCode, fix) => {
    const error = Object.assign(new Error(message), { name, $metadata: {} });
    const failure = failureOf(error);
    expect(failure).toMatchObject({ code, exitCode });
    expect(failure.message).toMatch(fix);
    expect(failure.message).not.toContain('did you mean --local?');
    if (exitCode === 3)
      expect(failureOf(error, { sandboxDescriptor: '/s.json' }).message).toContain('did you mean --local?');
  });
});

describe('a problem given as a line of text', () => {
  it('reads back exactly as written, and carries its file, line and item as fields', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z./ -]{1,20}$/).filter((file) => !file.includes(': ')),
        fc.integer({ min: 1, max: 99_999 }),
        fc.option(fc.stringMatching(/^[a-z0-9-]{1,12}$/), { nil: undefined }),
        fc.string({ maxLength: 40 }),
        (file, line, item, text) => {
          const message = `${item === undefined ? '' : `rule "${item}": `}${text}`;
          const written = `${file}:${line}: ${message}`;
          const [problem] = new UsageError('bad file', [written]).problems;
          expect(problem).toMatchObject({ file, line, message });
          expect(problem?.item).toBe(item);
          expect(new UsageError('bad file', [written]).details).toEqual([written]);
        },
      ),
    );
    expect(new UsageError('x', ['command line: rule "a": no such thing']).problems).toEqual([
      { message: 'command line: rule "a": no such thing' },
    ]);
  });

  it('a syntax error’s line and column are its line and column, not a file named file:line at line column', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z./ -]{1,20}$/).filter((file) => !file.includes(': ')),
        fc.integer({ min: 1, max: 99_999 }),
        fc.integer({ min: 1, max: 999 }),
        fc.string({ maxLength: 40 }),
        (file, line, column, message) => {
          const written = `${file}:${line}:${column}: ${message}`;
          const error = new UsageError('bad file', [written]);
          expect(error.problems).toEqual([{ file, line, column, message }]);
          expect(error.details).toEqual([written]);
        },
      ),
    );
  });
});

describe('problems in line order', () => {
  const problem: fc.Arbitrary<Problem> = fc.oneof(
    fc.record({
      message: fc.string(),
      file: fc.constantFrom('a.yaml', 'b.yaml', 'stdin'),
      line: fc.integer({ min: 1, max: 40 }),
    }),
    fc.record({ message: fc.string() }),
  );

  it('lists a file’s problems by line, files in the order they first appear, and leaves the rest where they were', () => {
    fc.assert(
      fc.property(fc.array(problem, { maxLength: 30 }), (problems) => {
        const listed = new UsageError('x', problems).problems;
        // Nothing lost or added.
        expect([...listed].sort(byText)).toEqual([...problems].sort(byText));
        const located = (entry: Problem) => entry.file !== undefined && entry.line !== undefined;
        // What has no line keeps its place.
        for (const [index, entry] of problems.entries()) if (!located(entry)) expect(listed[index]).toBe(entry);
        // The located ones read down each file, one file after another.
        const files = [...new Set(problems.filter(located).map((entry) => entry.file))];
        const order = listed.filter(located).map((entry) => [files.indexOf(entry.file), entry.line ?? 0]);
        const sorted = [...order].sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0) || (a[1] ?? 0) - (b[1] ?? 0));
        expect(order).toEqual(sorted);
        // Problems on one line stay in the order they were found.
        for (const file of files) {
          for (let line = 1; line <= 40; line++) {
            const same = (entry: Problem) => entry.file === file && entry.line === line;
            expect(listed.filter(same)).toEqual(problems.filter(same));
          }
        }
      }),
    );
  });

  it('as they are printed: a problem found in a later pass on an earlier line comes first', () => {
    const error = new UsageError('rules.yaml: 2 problem(s)', [
      'rules.yaml:7: rule "typo": unknown attribute "keyword"',
      'rules.yaml:3: rule "ghost": audienceId: no valid audience',
    ]);
    expect(error.details).toEqual([
      'rules.yaml:3: rule "ghost": audienceId: no valid audience',
      'rules.yaml:7: rule "typo": unknown attribute "keyword"',
    ]);
  });
});

const byText = (a: { message: string }, b: { message: string }) => JSON.stringify(a).localeCompare(JSON.stringify(b));
