/**
 * cdk-nag (AwsSolutions and Serverless packs) and cfn-lint on the synthesized stack, for the
 * shipped configuration, for one that uses every option, and for that one in sharded mode. Every acknowledgement must sit next to
 * the resource it is about, carry a real reason, and still be needed.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PolicyValidationPluginReport, Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ensurePythonEnv, venvBin } from '../../sandbox/python-env.mjs';
import { fullContext, type Synthesized, synthesize } from './synth.ts';

const everything = {
  ...fullContext,
  tableEncryption: 'customer-managed',
  removalPolicy: 'destroy',
  apiKeySecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:news/api-key-AbCdEf',
  apiKeySecretKmsKeyArn: 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
};

/** Every option and sharded publishing (issue 14): the work queue, its dead-letter queue and the publisher. */
const sharded = { ...everything, publishMode: 'sharded', publisherConcurrency: 16 };

/** SES email (issue 31): identity, configuration set, queues, the three email functions, the endpoint. */
const email = { ...everything, emailDomain: 'alerts.example.com', emailReplyTo: 'desk@example.com' };

const variants: Record<string, Record<string, unknown>> = { shipped: {}, everything, sharded, email };

const violationsOf = (scope: IConstruct) =>
  [new AwsSolutionsChecks(), new ServerlessChecks()].flatMap(
    (pack) => (pack.validateScope(scope) as PolicyValidationPluginReport).violations,
  );

const describeViolations = (violations: ReturnType<typeof violationsOf>) =>
  violations.flatMap((violation) =>
    violation.violatingResources.map(
      (resource) =>
        `${violation.ruleName} at ${(resource as { constructPath?: string }).constructPath}: ${violation.description}`,
    ),
  );

const synthesized = new Map<string, Synthesized>();
beforeAll(() => {
  for (const [name, context] of Object.entries(variants)) synthesized.set(name, synthesize(context));
});

describe.each(Object.keys(variants))('the %s configuration', (name) => {
  const synth = () => synthesized.get(name) as Synthesized;

  it('has no unacknowledged cdk-nag finding (AwsSolutions and Serverless)', () => {
    expect(describeViolations(violationsOf(synth().app))).toEqual([]);
  });

  it('passes cfn-lint (errors and warnings, in three regions)', async () => {
    await ensurePythonEnv();
    const dir = mkdtempSync(join(tmpdir(), 'news-alerts-cfn-lint-'));
    try {
      const file = join(dir, 'template.json');
      writeFileSync(file, JSON.stringify(synth().template.toJSON(), null, 1));
      const result = spawnSync(
        venvBin('cfn-lint'),
        // Informational checks (I1022: "prefer Fn::Sub over Fn::Join") only restate how CDK renders ARNs.
        // The runtime-deprecation rules (E2531, E2533, W2531) compare the runtime with today's date, so
        // they would turn this test red on a calendar day rather than on a change; the runtime is
        // pinned by the stack tests instead, and moving it is a deliberate change (see DESIGN §6).
        [
          file,
          '--regions',
          'us-east-1',
          'eu-west-1',
          'ap-northeast-2',
          '--format',
          'parseable',
          '--ignore-checks',
          'E2531',
          'E2533',
          'W2531',
        ],
        { encoding: 'utf8' },
      );
      expect(result.error).toBeUndefined();
      expect(result.stdout.trim().split('\n').filter(Boolean)).toEqual([]);
      expect(result.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('acknowledgements', () => {
  interface Acknowledgement {
    readonly path: string;
    readonly id: string;
    readonly reason: string;
    readonly isStack: boolean;
  }
  const recorded: Acknowledgement[] = [];
  let unacknowledged: Synthesized;

  beforeAll(() => {
    // Build the richest stack once more, recording acknowledgements instead of applying them, so
    // the raw findings show which acknowledgement answers which finding.
    const realOf = Validations.of.bind(Validations);
    vi.spyOn(Validations, 'of').mockImplementation((scope: IConstruct) => {
      const real = realOf(scope);
      return Object.assign(Object.create(real) as Validations, {
        acknowledge: (...rules: { id: string; reason: string }[]) => {
          for (const rule of rules) {
            recorded.push({ path: scope.node.path, id: rule.id, reason: rule.reason, isStack: Stack.isStack(scope) });
          }
        },
      });
    });
    // Sharded mode with SES email has every resource there is: all acknowledgements are made.
    unacknowledged = synthesize({ ...sharded, ...email, publishMode: 'sharded' });
  });
  afterAll(() => {
    vi.restoreAllMocks();
  });

  it('are made on the resource or construct concerned, never on the stack or app', () => {
    expect(recorded.length).toBeGreaterThan(0);
    for (const acknowledgement of recorded) {
      expect(acknowledgement.isStack, acknowledgement.path).toBe(false);
      expect(acknowledgement.path.split('/').length, acknowledgement.path).toBeGreaterThan(2);
    }
  });

  it('each carry a real reason', () => {
    for (const acknowledgement of recorded) {
      expect(acknowledgement.reason.length, `${acknowledgement.id} at ${acknowledgement.path}`).toBeGreaterThan(60);
    }
  });

  it('each answer a finding that cdk-nag raises on that construct (none is stale)', () => {
    const findings = violationsOf(unacknowledged.app).flatMap((violation) =>
      violation.violatingResources.map((resource) => ({
        rule: violation.ruleName,
        path: String((resource as { constructPath?: string }).constructPath),
      })),
    );
    for (const acknowledgement of recorded) {
      const answered = findings.some(
        (finding) =>
          finding.rule === acknowledgement.id &&
          (finding.path === acknowledgement.path || finding.path.startsWith(`${acknowledgement.path}/`)),
      );
      expect(answered, `${acknowledgement.id} at ${acknowledgement.path}`).toBe(true);
    }
  });

  it('leave nothing else: every raw finding is acknowledged next to its resource', () => {
    const findings = violationsOf(unacknowledged.app).flatMap((violation) =>
      violation.violatingResources.map((resource) => ({
        rule: violation.ruleName,
        path: String((resource as { constructPath?: string }).constructPath),
      })),
    );
    const unanswered = findings.filter(
      (finding) =>
        !recorded.some(
          (acknowledgement) =>
            finding.rule === acknowledgement.id &&
            (finding.path === acknowledgement.path || finding.path.startsWith(`${acknowledgement.path}/`)),
        ),
    );
    expect(unanswered).toEqual([]);
  });
});
