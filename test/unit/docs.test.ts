/**
 * The README is the front door and docs/*.md the manual. These tests keep them navigable: every
 * relative link (and `#anchor`) resolves, no page repeats a heading, every page opens with a table
 * of contents, prose lines stay readable, the README keeps the two quick-start commands and links
 * every page, and every `news-alerts` command the docs show exists in the CLI.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../cli/program.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const docsDir = join(root, 'docs');
/** README.md and every page directly under docs/ (generated sub-folders such as docs/samples/ have their own test). */
const pages = [
  join(root, 'README.md'),
  ...readdirSync(docsDir)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => join(docsDir, name)),
];
/** Pages written by a program rather than by hand (docs/cost.md comes from `npm run bench`). */
const generated = new Set([join(docsDir, 'cost.md')]);
const name = (file: string) => relative(root, file);

interface Line {
  readonly number: number;
  readonly text: string;
}

/** The lines of a markdown file outside fenced code blocks, with their line numbers. */
function proseLines(text: string): Line[] {
  const lines: Line[] = [];
  let fenced = false;
  text.split('\n').forEach((line, index) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else if (!fenced) lines.push({ number: index + 1, text: line });
  });
  return lines;
}

/** The lines inside fenced code blocks. */
function codeLines(text: string): Line[] {
  const prose = new Set(proseLines(text).map((line) => line.number));
  return text
    .split('\n')
    .map((line, index) => ({ number: index + 1, text: line }))
    .filter((line) => !prose.has(line.number) && !/^\s*```/.test(line.text));
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces become hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

interface Heading {
  readonly level: number;
  readonly text: string;
  readonly line: number;
}

function headingsOf(file: string): Heading[] {
  const headings: Heading[] = [];
  for (const line of proseLines(readFileSync(file, 'utf8'))) {
    const match = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line.text);
    if (match?.[1] && match[2] !== undefined)
      headings.push({ level: match[1].length, text: match[2], line: line.number });
  }
  return headings;
}

interface Link {
  readonly target: string;
  readonly line: number;
}

/** Inline links `[text](target)` in prose, code spans left out. */
function linksOf(file: string): Link[] {
  const links: Link[] = [];
  for (const line of proseLines(readFileSync(file, 'utf8'))) {
    const text = line.text.replace(/`[^`]*`/g, '');
    for (const match of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (match[1]) links.push({ target: match[1], line: line.number });
    }
  }
  return links;
}

/** What is wrong with one link, or undefined when it resolves. */
function brokenLink(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto: — not checked offline
  const [path = '', anchor] = target.split('#', 2);
  const destination = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
  if (!existsSync(destination)) return `no file ${name(destination)}`;
  if (anchor === undefined) return undefined;
  if (statSync(destination).isDirectory() || !destination.endsWith('.md')) return `#${anchor} on a non-markdown target`;
  const anchors = headingsOf(destination).map((heading) => anchorOf(heading.text));
  return anchors.includes(anchor) ? undefined : `no heading #${anchor} in ${name(destination)}`;
}

/** The text of the `## heading` section of a page (up to the next heading of level 2 or less). */
function section(file: string, heading: string): string {
  const lines = readFileSync(file, 'utf8').split('\n');
  const start = lines.indexOf(`## ${heading}`);
  expect(start, `${name(file)} has a "## ${heading}" section`).toBeGreaterThan(-1);
  const end = lines.findIndex((line, index) => index > start && /^#{1,2} /.test(line));
  return lines.slice(start, end === -1 ? undefined : end).join('\n');
}

describe('anchorOf', () => {
  it('follows GitHub: code marks and punctuation go, spaces become hyphens, letters of any script stay', () => {
    expect(anchorOf('The local sandbox (`--local`)')).toBe('the-local-sandbox---local');
    expect(anchorOf('2. Configure `cdk.json`')).toBe('2-configure-cdkjson');
    expect(anchorOf("The first run's look-back")).toBe('the-first-runs-look-back');
    expect(anchorOf('Quiet hours, digests and budgets')).toBe('quiet-hours-digests-and-budgets');
    expect(anchorOf('기준금리 alerts_now')).toBe('기준금리-alerts_now');
  });
});

describe('README and docs/', () => {
  it.each(pages.map((file) => [name(file), file]))('%s: every relative link and #anchor resolves', (_, file) => {
    const broken = linksOf(file)
      .map((link) => ({ link, problem: brokenLink(file, link.target) }))
      .filter(({ problem }) => problem !== undefined)
      .map(({ link, problem }) => `${name(file)}:${link.line}: (${link.target}) ${problem}`);
    expect(broken).toEqual([]);
  });

  it.each(pages.map((file) => [name(file), file]))('%s: no heading appears twice', (_, file) => {
    const seen = new Map<string, number>();
    const duplicates: string[] = [];
    for (const heading of headingsOf(file)) {
      const anchor = anchorOf(heading.text);
      const first = seen.get(anchor);
      if (first !== undefined) duplicates.push(`"${heading.text}" on lines ${first} and ${heading.line}`);
      else seen.set(anchor, heading.line);
    }
    expect(duplicates).toEqual([]);
  });

  it.each(pages.filter((file) => !generated.has(file)).map((file) => [name(file), file]))(
    '%s: opens with a table of contents that links every ## section',
    (_, file) => {
      const headings = headingsOf(file);
      const firstSection = headings.find((heading) => heading.level === 2);
      expect(firstSection, 'the page has ## sections').toBeDefined();
      const intro = readFileSync(file, 'utf8')
        .split('\n')
        .slice(0, (firstSection?.line ?? 1) - 1)
        .join('\n');
      const missing = headings
        .filter((heading) => heading.level === 2)
        .map((heading) => `#${anchorOf(heading.text)}`)
        .filter((anchor) => !intro.includes(`](${anchor})`));
      expect(missing).toEqual([]);
    },
  );

  it.each(pages.filter((file) => !generated.has(file)).map((file) => [name(file), file]))(
    '%s: no prose line is longer than 160 characters',
    (_, file) => {
      const long = proseLines(readFileSync(file, 'utf8'))
        .filter((line) => !line.text.trimStart().startsWith('|') && [...line.text].length > 160)
        .map((line) => `${name(file)}:${line.number} (${[...line.text].length} characters)`);
      expect(long).toEqual([]);
    },
  );
});

describe('README', () => {
  const readme = join(root, 'README.md');

  it('is a front door: short, with the quick start of exactly `npm start` and `npm test`', () => {
    const text = readFileSync(readme, 'utf8');
    expect(text.split('\n').length).toBeLessThanOrEqual(150);
    expect(section(readme, 'Quick start')).toContain('```sh\nnpm start\nnpm test\n```');
  });

  it('shows the CLI: the install step that puts news-alerts on the PATH, then the sandbox and --help', () => {
    const cli = section(readme, 'The CLI in five lines');
    const commands = codeLines(cli).map((line) => line.text.replace(/\s+#.*$/, '').trim());
    expect(commands).toEqual([
      'npm ci && npm link',
      'news-alerts sandbox up',
      'news-alerts --local rules list',
      'news-alerts --local run',
      'news-alerts --help',
    ]);
  });

  it('links every page of docs/', () => {
    const links = new Set(linksOf(readme).map((link) => link.target.split('#')[0]));
    const unlinked = pages.filter((file) => file !== readme && !links.has(name(file)));
    expect(unlinked.map(name)).toEqual([]);
  });
});

describe('news-alerts commands in the docs', () => {
  /** Every `news-alerts …` command line in code blocks and code spans, as its words. */
  function documentedCommands(): { where: string; words: string[] }[] {
    const found: { where: string; words: string[] }[] = [];
    for (const file of pages) {
      const text = readFileSync(file, 'utf8');
      const candidates = [
        ...codeLines(text),
        ...proseLines(text).flatMap((line) =>
          [...line.text.matchAll(/`([^`]+)`/g)].map((match) => ({ number: line.number, text: match[1] ?? '' })),
        ),
      ];
      for (const line of candidates) {
        for (const match of line.text.matchAll(/(?:^|[|;&]\s*|\$\(\s*)news-alerts((?:\s+[^\s|;&#]+)*)/g)) {
          found.push({
            where: `${name(file)}:${line.number}`,
            words: (match[1] ?? '').trim().split(/\s+/).filter(Boolean),
          });
        }
      }
    }
    return found;
  }

  it('name commands and subcommands the CLI has (the verb is `rules put`, not `rules add`)', async () => {
    const program = await buildProgram();
    const valued = new Set(
      program.options.filter((option) => option.required || option.optional).map((option) => option.long),
    );
    const unknown: string[] = [];
    const commands = documentedCommands();
    expect(commands.length).toBeGreaterThan(30);
    for (const { where, words } of commands) {
      let index = 0;
      while (index < words.length && words[index]?.startsWith('-')) index += valued.has(words[index]) ? 2 : 1;
      const group = words[index];
      if (group === undefined || group.includes('…') || group.startsWith('<')) continue; // `news-alerts --help`, `news-alerts …`
      const command = program.commands.find(
        (candidate) => candidate.name() === group || candidate.aliases().includes(group),
      );
      if (!command) {
        unknown.push(`${where}: news-alerts ${words.join(' ')} (no command "${group}")`);
        continue;
      }
      const verb = words[index + 1];
      if (command.commands.length === 0 || verb === undefined || verb.startsWith('-') || /[<…|]/.test(verb)) continue;
      if (!command.commands.some((sub) => sub.name() === verb || sub.aliases().includes(verb))) {
        unknown.push(`${where}: news-alerts ${words.join(' ')} (no "${group} ${verb}")`);
      }
    }
    expect(unknown).toEqual([]);
  });
});

describe('facts the docs and the CLI state alike', () => {
  const cliSources = readdirSync(join(root, 'cli'))
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(root, 'cli', file));

  it('SNS confirmation tokens (and unconfirmed subscriptions) last two days, as AWS documents, everywhere', async () => {
    // Every "N days" said of a confirmation token or an unconfirmed subscription, in a sentence.
    const said: string[] = [];
    for (const file of [...pages, ...cliSources]) {
      const text = readFileSync(file, 'utf8').replace(/\s+/g, ' ');
      for (const match of text.matchAll(/[^.?!]*\b(?:tokens?|unconfirmed|pending confirmation)\b[^.?!]*/gi)) {
        for (const days of match[0].matchAll(/\b(\w+) days\b/g)) said.push(`${name(file)}: ${days[1]} days`);
      }
    }
    expect(said.length).toBeGreaterThan(0);
    expect(said.filter((entry) => !/: (two|2) days$/.test(entry))).toEqual([]);
    // The CLI's hints say it through one constant.
    const { confirmationLifetime } = await import('../../cli/subscriptions.ts');
    expect(confirmationLifetime).toBe('two days');
  });
});

describe('docs/deploy.md keeps the facts a first deployer relies on', () => {
  const deploy = join(docsDir, 'deploy.md');

  interface PolicyDocument {
    readonly Statement: readonly { readonly Sid: string; readonly Action: string | readonly string[] }[];
  }

  /** The first ```json block after the heading `heading` (any level) of a page, parsed. */
  function policyAfter(file: string, heading: string): PolicyDocument {
    const text = readFileSync(file, 'utf8');
    const at = text.search(new RegExp(`^#+ ${heading.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    expect(at, `${name(file)} has a "${heading}" heading`).toBeGreaterThan(-1);
    const block = /```json\n([\s\S]*?)\n```/.exec(text.slice(at));
    expect(block, `a json block after "${heading}"`).not.toBeNull();
    return JSON.parse(block?.[1] ?? '{}') as PolicyDocument;
  }

  const actionsOf = (policy: PolicyDocument): Set<string> =>
    new Set(policy.Statement.flatMap((statement) => [statement.Action].flat()));

  /** IAM service prefix of an AWS SDK v3 package. */
  const serviceOfPackage: Record<string, string> = {
    '@aws-sdk/client-dynamodb': 'dynamodb',
    '@aws-sdk/lib-dynamodb': 'dynamodb',
    '@aws-sdk/client-sns': 'sns',
    '@aws-sdk/client-sqs': 'sqs',
    '@aws-sdk/client-secrets-manager': 'secretsmanager',
    '@aws-sdk/client-lambda': 'lambda',
    '@aws-sdk/client-cloudformation': 'cloudformation',
    '@aws-sdk/client-sts': 'sts',
    '@aws-sdk/client-sesv2': 'ses',
  };

  /** The IAM actions one SDK command needs, where they are not `<service>:<command name>`. */
  const actionsOfCommand: Record<string, readonly string[]> = {
    'dynamodb:Get': ['dynamodb:GetItem'],
    'dynamodb:Put': ['dynamodb:PutItem'],
    'dynamodb:Update': ['dynamodb:UpdateItem'],
    'dynamodb:Delete': ['dynamodb:DeleteItem'],
    'dynamodb:Query': ['dynamodb:Query'],
    'dynamodb:Scan': ['dynamodb:Scan'],
    'dynamodb:BatchGet': ['dynamodb:BatchGetItem'],
    'dynamodb:BatchWrite': ['dynamodb:BatchWriteItem'],
    // A transaction is authorised item by item, by the action of each item.
    'dynamodb:TransactWrite': [
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:ConditionCheckItem',
    ],
    'sns:PublishBatch': ['sns:Publish'],
    'sns:CreateTopic': ['sns:CreateTopic', 'sns:TagResource'],
    'secretsmanager:CreateSecret': ['secretsmanager:CreateSecret', 'secretsmanager:TagResource'],
    'sqs:DeleteMessageBatch': ['sqs:DeleteMessage'],
    'sqs:ChangeMessageVisibilityBatch': ['sqs:ChangeMessageVisibility'],
    'sqs:SendMessageBatch': ['sqs:SendMessage'],
    'lambda:Invoke': ['lambda:InvokeFunction'],
    // Needs no permission: anyone may ask who they are.
    'sts:GetCallerIdentity': [],
  };

  /** Calls that never reach a deployed stack, by file (and command), with why. */
  const sandboxOnly: Record<string, string> = {
    'cli/sandbox.ts': 'sandbox status reads the tables, secret and queues of the local sandbox',
    'cli/deliveries.ts': 'deliveries reads the audit queues only the sandbox has',
    'cli/audit-queues.ts': 'the audit queues only the sandbox has',
    'cli/subscriptions.ts:CreateQueue': 'the Slack stand-in queue of the sandbox',
    'cli/subscriptions.ts:GetQueueAttributes': 'the Slack stand-in queue of the sandbox',
    'functions/aws/sqs-work-queue.ts:SendMessageBatch':
      'the CLI queues work items only in a sharded sandbox (run --local); on a stack the function does',
  };

  /** Calls made through a library rather than a `new …Command`, by file. */
  const libraryCalls: Record<string, { readonly uses: RegExp; readonly actions: readonly string[] }> = {
    'functions/aws/secret-source.ts': { uses: /new SecretsProvider\(/, actions: ['secretsmanager:GetSecretValue'] },
  };

  /** Every IAM action the CLI's code (cli/ and the adapters it runs, functions/aws/) needs on a stack. */
  function actionsTheCliCalls(): Map<string, string[]> {
    const files = ['cli', 'functions/aws'].flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.ts'))
        .map((file) => `${dir}/${file}`),
    );
    const calls = new Map<string, string[]>();
    const add = (action: string, where: string) => calls.set(action, [...(calls.get(action) ?? []), where]);
    for (const file of files) {
      const text = readFileSync(join(root, file), 'utf8');
      const packageOf = new Map<string, string>();
      for (const match of text.matchAll(
        /(?:import\s*(?:type\s*)?\{([^{}]*)\}\s*from\s*|\{([^{}]*)\}\s*=\s*await import\()'(@aws-sdk\/[\w-]+)'/g,
      )) {
        for (const imported of (match[1] ?? match[2] ?? '').split(',')) {
          packageOf.set(imported.trim().split(/\s+as\s+/)[0] ?? '', match[3] ?? '');
        }
      }
      for (const match of text.matchAll(/new (\w+)Command\(/g)) {
        const command = match[1] ?? '';
        if (sandboxOnly[file] !== undefined || sandboxOnly[`${file}:${command}`] !== undefined) continue;
        const service = serviceOfPackage[packageOf.get(`${command}Command`) ?? ''];
        expect(service, `${file}: the package of ${command}Command`).toBeDefined();
        for (const action of actionsOfCommand[`${service}:${command}`] ?? [`${service}:${command}`]) add(action, file);
      }
      const library = libraryCalls[file];
      if (library !== undefined) {
        expect(text, `${file} still calls through its library`).toMatch(library.uses);
        for (const action of library.actions) add(action, file);
      }
    }
    return calls;
  }

  it("the ops team's policy allows every AWS call the CLI makes on a stack, and nothing it never makes", () => {
    const policy = actionsOf(policyAfter(deploy, 'The ops team'));
    const calls = actionsTheCliCalls();
    expect(calls.size).toBeGreaterThan(20);
    const missing = [...calls]
      .filter(([action]) => !policy.has(action))
      .map(([action, where]) => `${action} (${where[0]})`);
    expect(missing).toEqual([]);
    // Publishing to the audience topics, which are encrypted, needs their key.
    const implied = new Set(calls.has('sns:Publish') ? ['kms:GenerateDataKey', 'kms:Decrypt'] : []);
    expect([...policy].filter((action) => !calls.has(action) && !implied.has(action))).toEqual([]);
  });

  it('the CloudFormation execution policy covers the services of every resource the stack makes, and no other', async () => {
    const { synthesize, fullContext } = await import('../infra/synth.ts');
    // Every option that adds resources on: SES email (its identity and the preference page's HTTP
    // API), sharded publishing, the tables' own key.
    const { template } = synthesize({
      ...fullContext,
      publishMode: 'sharded',
      tableEncryption: 'customer-managed',
      emailDomain: 'alerts.example.com',
    });
    // IAM names API Gateway's HTTP APIs (AWS::ApiGatewayV2) apigateway.
    const iamName = (service: string) => (service === 'apigatewayv2' ? 'apigateway' : service);
    const services = new Set(
      Object.values(template.toJSON().Resources as Record<string, { Type: string }>)
        .map((resource) => iamName(resource.Type.split('::')[1]?.toLowerCase() ?? ''))
        .filter((service) => service !== 'cdk'),
    );
    // The deployer only assumes the bootstrap roles; the execution role's policy is the next block.
    expect([...actionsOf(policyAfter(deploy, 'The deployer'))]).toEqual(['sts:AssumeRole']);
    const blocks = [...readFileSync(deploy, 'utf8').matchAll(/```json\n([\s\S]*?)\n```/g)].map(
      (block) => block[1] ?? '',
    );
    const execution = actionsOf(
      JSON.parse(
        blocks.find((block) => block.includes('"TheStacksServices"')) ?? '{"Statement": []}',
      ) as PolicyDocument,
    );
    const servicesGranted = new Set([...execution].map((action) => action.split(':')[0] ?? ''));
    expect(services.size).toBeGreaterThan(8);
    expect([...services].filter((service) => !servicesGranted.has(service)).sort()).toEqual([]);
    expect([...servicesGranted].filter((service) => !services.has(service)).sort()).toEqual([]);
  });

  it('names the CDK switches the installed CDK CLI really has, to keep it from calling home', () => {
    const cdk = readFileSync(join(root, 'node_modules', 'aws-cdk', 'lib', 'index.js'), 'utf8');
    const text = readFileSync(deploy, 'utf8');
    for (const [switchName, inCli] of [
      ['CDK_DISABLE_CLI_TELEMETRY', 'process.env.CDK_DISABLE_CLI_TELEMETRY'],
      ['CDK_DISABLE_VERSION_CHECK', 'process.env.CDK_DISABLE_VERSION_CHECK'],
      ['"cli-telemetry": false', 'context.get("cli-telemetry")'],
      ['"notices": false', 'settings.get(["notices"])'],
      ['"versionReporting": false', 'settings.get(["versionReporting"])'],
      ['--no-notices', 'notices'],
      ['--no-version-reporting', 'version-reporting'],
    ] as const) {
      expect(text, `deploy.md names ${switchName}`).toContain(switchName);
      expect(cdk, `the CDK CLI reads ${inCli}`).toContain(inCli);
    }
  });

  it('tells where the provider key comes from and how to try one’s own provider before deploying', () => {
    const prerequisites = section(deploy, '1. Prerequisites');
    expect(prerequisites).toMatch(/developer portal/);
    expect(prerequisites).toContain('npm start -- --provider-url');
    expect(prerequisites).toContain('news-alerts sandbox up --provider-url');
    // Step 5 writes the items with the CLI, pointing at the topic cdk.json made.
    const step5 = section(deploy, '5. Create an audience and a rule');
    expect(step5).toContain('news-alerts audiences create markets');
    expect(step5).toContain('--topic-arn arn:aws:sns:<region>:<account>:news-alerts-audience-markets');
    expect(step5).not.toContain('aws dynamodb put-item');
  });
});

describe('npm install', () => {
  it('leaves npm 11 nothing to warn about: every dependency with install scripts is in allowScripts', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      allowScripts?: Record<string, boolean>;
    };
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { hasInstallScript?: boolean }>;
    };
    // npm matches a bare name against every installed version (npm help install-scripts).
    const withScripts = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && entry.hasInstallScript === true)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts).toContain('esbuild');
    expect(withScripts.filter((name) => typeof pkg.allowScripts?.[name] !== 'boolean')).toEqual([]);
    // esbuild's postinstall only optimises; its platform package works without it: denied, not allowed.
    expect(pkg.allowScripts?.esbuild).toBe(false);
  });
});
