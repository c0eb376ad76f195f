/**
 * Under --json (or --output json) stdout is one JSON document whatever happens: every command
 * group is run in a failure mode against a real sandbox, and stdout must parse as
 * `{ ok: false, error: { code, message }, problems }` with the exit code of the table (usage 2,
 * not found 3, anything else 1) and the human message still on stderr.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, type CliSandbox, runCli, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;

beforeAll(async () => {
  sandbox = await startCliSandbox();
});

afterAll(async () => {
  await sandbox?.stop();
});

/** The exit code each stable error code promises. */
const exitCodeOfCode: Record<string, number> = {
  usage: 2,
  not_found: 3,
  aws_not_found: 3,
  no_region: 3,
  no_credentials: 3,
  expired_credentials: 3,
  unreachable: 3,
};

interface FailureDocument {
  ok: false;
  error: { code: string; message: string };
  problems: { message: string }[];
}

function expectFailureDocument(result: CliResult, what: string, exitCode: number): FailureDocument {
  const document = result.json<FailureDocument>();
  expect(document, what).toMatchObject({ ok: false, error: { code: expect.any(String), message: expect.any(String) } });
  expect(Array.isArray(document.problems), what).toBe(true);
  expect(result.code, `${what}\n${result.stderr}`).toBe(exitCode);
  expect(exitCodeOfCode[document.error.code] ?? 1, what).toBe(exitCode);
  // People still get the message on stderr.
  expect(result.stderr.length, what).toBeGreaterThan(0);
  return document;
}

describe('one JSON document on failure', () => {
  it('every command group, in a failure mode, prints one parseable failure document', async () => {
    const rulesFile = sandbox.file('broken-rules.yaml', '- ruleId: Not An Id\n  audienceId: nope\n');
    const cases: [string, readonly string[], number][] = [
      ['unknown command', ['frobnicate'], 2],
      ['unknown option', ['rules', 'list', '--bogus'], 2],
      ['missing argument', ['rules', 'show'], 2],
      ['rules show of a missing rule', ['rules', 'show', 'no-such-rule'], 3],
      ['rules validate of a broken file', ['rules', 'validate', rulesFile], 2],
      ['audiences show of a missing audience', ['audiences', 'show', 'no-such-audience'], 3],
      ['subscriptions of a missing audience', ['subscriptions', 'list', 'no-such-audience'], 3],
      ['preview with a bad window', ['preview', '--from', 'yesterday-ish'], 2],
      ['replay with a bad window', ['replay', '--from', 'yesterday-ish', '--yes'], 2],
      ['watermark rewind by nonsense', ['watermark', 'rewind', 'sideways', '--yes'], 2],
      ['runs list with a bad limit', ['runs', 'list', '--limit', '0'], 2],
      ['run with a bad option', ['run', '--bogus'], 2],
      ['lease release with a bad option', ['lease', 'release', '--bogus'], 2],
      ['deliveries of a missing audience', ['deliveries', 'no-such-audience'], 3],
      ['articles with a bad window', ['articles', 'categories', '--since', 'yesterday-ish'], 2],
      ['api-key set with the key on the command line', ['api-key', 'set', 'secret-on-argv'], 2],
      ['sandbox up with a bad seed', ['sandbox', 'up', '--seed', 'many'], 2],
      // An empty list (an unset shell variable) names nothing: refused, not "nothing to do".
      ['replay with an empty --audience', ['replay', '--from', '1h', '--audience', ''], 2],
      ['replay --parked with an empty --audience', ['replay', '--parked', '--dry-run', '--audience', ''], 2],
      ['deliveries with an empty --article', ['deliveries', 'chips-team', '--article', ''], 2],
    ];
    const results = await Promise.all(cases.map(([, args]) => sandbox.cli(['--json', ...args])));
    // --output json is the same; conflicting formats are usage; a command that printed its own
    // document before failing gets no second one.
    const [outputJson, noSandbox, conflicting] = await Promise.all([
      sandbox.cli(['--output', 'json', 'rules', 'show', 'no-such-rule']),
      runCli(['--json', '--sandbox-file', '/nonexistent/sandbox.json', 'sandbox', 'status']),
      runCli(['--json', '--output', 'table', 'rules', 'list']),
    ]);
    cases.forEach(([what, , exitCode], index) => {
      expectFailureDocument(results[index] as CliResult, what, exitCode);
    });
    expect(expectFailureDocument(outputJson, '--output json', 3).error.code).toBe('not_found');
    // sandbox status of no sandbox: one document (the command's own or the failure's, never both), exit 3.
    expect(noSandbox.code).toBe(3);
    expect(noSandbox.json()).toBeTypeOf('object');
    expect(expectFailureDocument(conflicting, '--json --output table', 2).error.message).toContain('--output table');

    // Commander's usage errors have a stable code and the message without "error: ".
    const unknownOption = (results[1] as CliResult).json<FailureDocument>();
    expect(unknownOption.error).toEqual({ code: 'usage', message: "unknown option '--bogus'" });
    // Validation problems are listed one by one.
    const broken = (results[4] as CliResult).json<FailureDocument>();
    expect(broken.problems.length).toBeGreaterThan(0);
    for (const problem of broken.problems) expect(problem.message).toEqual(expect.any(String));
    for (const index of [17, 18]) {
      // Every list option refuses an empty value the same way (cli/command.ts collectList).
      expect((results[index] as CliResult).json<FailureDocument>().error.message).toBe(
        "option '--audience <ids>' argument '' is invalid. it holds no value; give one or more, comma-separated, or leave the option out",
      );
    }
    expect((results[19] as CliResult).json<FailureDocument>().error.message).toContain(
      "option '--article <keys>' argument '' is invalid. it holds no value",
    );
    // The API key given on argv is never echoed back.
    expect((results[15] as CliResult).stdout).not.toContain('secret-on-argv');
    expect((results[15] as CliResult).stderr).not.toContain('secret-on-argv');
  });
});

describe('a failed run under --json', () => {
  it('prints the failure together with the summary the run recorded (a provider that refuses the key)', async () => {
    // A key the provider refuses: the run takes the lease, fails reading, and records itself as failed.
    const set = await sandbox.cli(['api-key', 'set'], { input: 'k9f3Qz7Wx2Lr8Vb4\n' });
    expect(set.code, set.stderr).toBe(0);

    const run = await sandbox.cli(['--json', 'run']);
    expect(run.code, run.stderr).toBe(1);
    const document = run.json<FailureDocument & { target: string; summary: Record<string, unknown> }>();
    expect(document).toMatchObject({ ok: false, error: { code: 'failed' }, problems: [] });
    expect(document.summary).toMatchObject({ status: 'failed', runId: expect.stringMatching(/^cli-/) });
    expect(String(document.summary.reason)).toMatch(/^Provider\w*Error: /);
    expect(run.stdout).not.toContain('k9f3Qz7Wx2Lr8Vb4');
    // The example rule saved wrongly on purpose is skipped with a readable warning, not raw JSON.
    expect(run.stderr).toMatch(
      /^warning: skipped an invalid item \(table rules, table name \S+, key typo-rule\): unknown attribute "keyword"/m,
    );
    expect(run.stderr).not.toContain('{"');

    // The same run is in the history, and people get the summary too (then the error on stderr).
    const runs = await sandbox.cli(['--json', 'runs', 'list', '--limit', '1']);
    expect(runs.json<{ runId: string; status: string }[]>()[0]).toMatchObject({
      runId: document.summary.runId,
      status: 'failed',
    });
    const human = await sandbox.cli(['--output', 'tsv', 'run']);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/^status\tfailed$/m);
    expect(human.stderr).toMatch(/Provider\w*Error/);
  });
});
