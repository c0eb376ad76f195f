/**
 * Exit codes exactly as documented (docs/ops-guide.md "Exit codes", and `--help`), on real CLI
 * processes: usage 2 with a one-line message and a hint (never the whole help), not found 3,
 * and forgetting --local (no region, no credentials, an endpoint nothing answers on) 3 with the
 * settings to fix. Nothing reaches the internet: every AWS_* variable is cleared in the child and
 * the endpoint is a loopback port nothing listens on. How each error class maps to its code is
 * test/unit/cli-errors.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { unusedPort } from '#test/aws';
import { ExitCode, exitCodeHelp } from '../../cli/errors.ts';
import { projectRoot, runCli } from './support.ts';

/** The child's environment without any AWS setting of this machine or of the test run. */
const noAws: Record<string, string | undefined> = {
  ...Object.fromEntries(
    Object.keys(process.env)
      .filter((name) => name.startsWith('AWS_'))
      .map((name) => [name, undefined]),
  ),
  AWS_CONFIG_FILE: '/nonexistent/aws-config',
  AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials',
  AWS_EC2_METADATA_DISABLED: 'true',
  NEWS_ALERTS_TARGET: undefined,
};

describe('exit codes', () => {
  it('the documented table names the codes the CLI uses', () => {
    const guide = readFileSync(join(projectRoot, 'docs', 'ops-guide.md'), 'utf8');
    const section = guide.slice(guide.indexOf('## Exit codes'));
    for (const code of Object.values(ExitCode)) {
      expect(section).toMatch(new RegExp(`\\| \`${code}\` +\\|`));
      expect(exitCodeHelp).toMatch(new RegExp(`^  ${code}  `, 'm'));
    }
  });

  it('each failure exits with its documented code and says what to do', async () => {
    const endpoint = `http://127.0.0.1:${await unusedPort()}`;
    const credentials = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
    const cases: [string, readonly string[], Record<string, string | undefined>, number, RegExp][] = [
      ['--version', ['--version'], {}, 0, /^$/],
      ['--help', ['--help'], {}, 0, /^$/],
      [
        'an unknown command',
        ['frobnicate'],
        {},
        2,
        /^error: unknown command 'frobnicate'\n\(add --help for usage\)\n$/,
      ],
      [
        'an unknown option',
        ['rules', 'list', '--bogus'],
        {},
        2,
        /^error: unknown option '--bogus'\n\(add --help for usage\)\n$/,
      ],
      ['a missing argument', ['rules', 'show'], {}, 2, /^error: missing required argument 'ruleId'\n/],
      [
        'a missing required option',
        ['spikes', 'evaluate'],
        {},
        2,
        /^error: required option '--csv <file>' not specified\n\(add --help for usage\)\n$/,
      ],
      [
        // Was "required option '--csv <file>' not specified": the typo was never named.
        'a typo of a required option',
        ['spikes', 'evaluate', '--csvv', 'series.csv'],
        {},
        2,
        /^error: unknown option '--csvv'\n\(Did you mean --csv\?\)\n\(add --help for usage\)\n$/,
      ],
      ['a bad --output', ['--output', 'csv', 'rules', 'list'], {}, 2, /argument 'csv' is invalid/],
      [
        // commander kept the last value: `beta` was saved without a word. The values are not quoted.
        'a one-value option given twice',
        ['rules', 'put', 'r1', '--query', 'alpha', '--query', 'beta'],
        {},
        2,
        /^error: option '--query <query>' was given twice; give it once \(the second would replace the first\)\n\(add --help for usage\)\n$/,
      ],
      [
        // Was "categories: the rule has no categories…": the empty list was taken as given.
        'a list option with no value in it',
        ['rules', 'create', 'lc-2', '--audience', 'desk', '--keywords', ','],
        {},
        2,
        /^error: option '--keywords <list>' argument ',' is invalid\. it holds no value; give one or more, comma-separated, or leave the option out\n/,
      ],
      [
        // Was split into the keywords "1" and "000 jobs" without a word.
        'a comma inside a number in a keyword list',
        ['rules', 'create', 'lc-3', '--audience', 'desk', '--keywords', 'layoffs,1,000 jobs'],
        {},
        2,
        /^error: option '--keywords <list>' argument 'layoffs,1,000 jobs' is invalid\. the comma in 1,000 would split it \(into "layoffs", "1", "000 jobs"\), as every comma in a list does\. Write the number as 1000 if the articles do; to keep the comma, put the keyword in a rules file \(keywords: \["1,000 jobs"\]\) and use 'rules put --file'; for separate values, give the option once for each \(--keywords layoffs --keywords 1 --keywords '000 jobs'\)\n/,
      ],
      [
        // A keyword list stays repeatable: this one gets past the options, to the missing region.
        'a keyword list option given twice',
        ['rules', 'create', 'lc-4', '--audience', 'desk', '--exclude-keywords', 'a', '--exclude-keywords', 'b'],
        {},
        3,
        /no AWS region/,
      ],
      [
        // Was looked up: "audience  does not exist" (exit 3).
        'an empty operand',
        ['holds', ''],
        {},
        2,
        /^news-alerts: <audienceId> is empty: give one, or leave it out where --help says it may be\n$/,
      ],
      [
        'a blank required operand',
        ['audiences', 'show', ' '],
        {},
        2,
        /^news-alerts: <audienceId> is empty: give one\n$/,
      ],
      [
        // Was looked up as an audience nothing has (exit 3).
        'an empty id option',
        ['rules', 'list', '--audience', ''],
        {},
        2,
        /^error: option '--audience <audienceId>' argument '' is invalid\. it is empty; give a value, or leave the option out\n/,
      ],
      [
        // Was no filter at all: every article was listed.
        'an empty filter option',
        ['articles', 'search', '--text', ' '],
        {},
        2,
        /^error: option '--text <words>' argument ' ' is invalid\. it is empty; give a value, or leave the option out\n/,
      ],
      [
        // The value was not quoted: '--time-zone  is not an IANA time zone'.
        'a time zone that is not one',
        ['spikes', 'explain', 'r1', '--time-zone', 'Mars/Base'],
        {},
        2,
        /^news-alerts: --time-zone "Mars\/Base" is not an IANA time zone \(such as Asia\/Seoul or UTC\)\n$/,
      ],
      [
        'an attribute both set and cleared',
        ['rules', 'update', 'lc-1', '--query', 'gamma', '--clear', 'query'],
        {},
        2,
        /^news-alerts: --query and --clear query conflict: give --query to change it, or --clear query to remove it\n$/,
      ],
      [
        'a global one-value option given twice',
        ['--stack', 'A', '--stack', 'B', 'rules', 'list'],
        {},
        2,
        /^error: option '--stack <name>' was given twice/,
      ],
      [
        '--json with another --output',
        ['--json', '--output', 'tsv', 'rules', 'list'],
        {},
        2,
        /ask for different formats/,
      ],
      ['a bad NEWS_ALERTS_TARGET', ['rules', 'list'], { NEWS_ALERTS_TARGET: 'prod' }, 2, /set it to local or stack/],
      [
        'no sandbox',
        ['--sandbox-file', '/nonexistent/sandbox.json', 'rules', 'list'],
        {},
        3,
        // The hint names the same descriptor (cli/hints.ts).
        /'news-alerts --sandbox-file \/nonexistent\/sandbox.json sandbox up'/,
      ],
      [
        // Was exit 1 with the SDK's "Region not accepted", once the first request was built.
        'a --region that is not a region name',
        ['--region', 'us east 1', 'rules', 'list'],
        {},
        2,
        /^error: option '--region <region>' argument 'us east 1' is invalid\. an AWS region is written like eu-west-1/,
      ],
      [
        'an AWS_REGION that is not a region name',
        ['rules', 'list'],
        { ...credentials, AWS_REGION: 'us east 1' },
        3,
        /^news-alerts: the AWS region "us east 1" is not a region name: fix AWS_REGION/,
      ],
      // Was taken as no stack name at all.
      ['an empty --stack', ['--stack', '', 'rules', 'list'], {}, 2, /argument '' is invalid\. a stack name is/],
      [
        // Was ignored: the sandbox was acted on whatever stack was named.
        '--local with --stack',
        ['--local', '--stack', 'Other', 'rules', 'list'],
        {},
        2,
        /^news-alerts: --local acts on the local sandbox, and --stack on a deployed stack; give one or the other\n$/,
      ],
      ['no region', ['rules', 'list'], {}, 3, /no AWS region.*set AWS_REGION \(or --region\)/],
      [
        // A profile that is not configured has neither: it is named.
        'no region with a profile that does not exist',
        ['--profile', 'nosuch', 'rules', 'list'],
        {},
        3,
        /no AWS region.*\(profile "nosuch": is it in ~\/\.aws\/config\?/,
      ],
      [
        'no credentials with a profile that does not exist',
        ['rules', 'list'],
        { AWS_REGION: 'eu-west-1', AWS_PROFILE: 'nosuch' },
        3,
        /no AWS credentials \(profile "nosuch": is it in ~\/\.aws\/config\?/,
      ],
      [
        'no credentials',
        ['rules', 'list'],
        { AWS_REGION: 'eu-west-1' },
        3,
        /no AWS credentials.*AWS_PROFILE \(or --profile\)/,
      ],
      [
        'an endpoint nothing answers on',
        ['--region', 'eu-west-1', 'rules', 'list'],
        { ...credentials, AWS_ENDPOINT_URL: endpoint, AWS_MAX_ATTEMPTS: '1' },
        3,
        /cannot reach AWS for CloudFormation stack NewsAlerts: check the network, --region/,
      ],
    ];
    const [debug, ...results] = await Promise.all([
      runCli(['--sandbox-file', '/nonexistent/sandbox.json', 'rules', 'list'], { env: { NEWS_ALERTS_DEBUG: '1' } }),
      ...cases.map(([, args, env]) => runCli(args, { env: { ...noAws, ...env } })),
    ]);
    // NEWS_ALERTS_DEBUG=1 adds the stack under the message.
    expect(debug?.code).toBe(3);
    expect(debug?.stderr).toMatch(/^news-alerts: no sandbox descriptor[^\n]*\nNotFoundError: [^\n]*\n\s+at /);
    cases.forEach(([what, , , code, stderr], index) => {
      const result = results[index];
      expect(result?.code, `${what}: ${result?.stderr}`).toBe(code);
      expect(result?.stderr, what).toMatch(stderr);
      // Usage errors are one line and a hint, never the whole help; nothing else prints a stack.
      expect(result?.stderr, what).not.toContain('Commands:');
      expect(result?.stderr, what).not.toMatch(/\n\s+at /);
    });
  });
});
