import { fileURLToPath } from 'node:url';
import { type Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import {
  type BundlingOptions,
  NodejsFunction,
  type NodejsFunctionProps,
  OutputFormat,
} from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

/** The repository root: bundling and the lockfile are resolved from here, whatever the cwd. */
export const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Absolute path of a function entry point, e.g. `functions/alert-run/handler.ts`. */
export const functionEntry = (relativePath: string): string =>
  fileURLToPath(new URL(`../../${relativePath}`, import.meta.url));

/**
 * Powertools settings every function shares. They mirror functions/shared/powertools.ts, which
 * fixes the metrics namespace and the `service` dimension the alarms filter on.
 */
export const powertools = { namespace: 'NewsAlerts', serviceName: 'news-alerts' } as const;

/** The construct context key under which the stack names its deployment's `service` dimension. */
const serviceContextKey = 'news-alerts:service';

/**
 * Names the `service` dimension of every metric the functions under `stack` emit and its alarms
 * watch: the deployment's resource prefix, so two deployments in one account and region never
 * watch each other's metrics (with the default prefix it is the default, `news-alerts`). Called
 * first in the stack's constructor: context can only be set before children are added.
 */
export function nameService(stack: Construct, resourcePrefix: string): void {
  stack.node.setContext(serviceContextKey, resourcePrefix);
}

/** The `service` dimension of the deployment `scope` belongs to ({@link nameService}). */
export function serviceOf(scope: Construct): string {
  const named: unknown = scope.node.tryGetContext(serviceContextKey);
  return typeof named === 'string' ? named : powertools.serviceName;
}

/**
 * ESM needs a real `require` for the CommonJS dependencies esbuild leaves as `require()` calls
 * (parts of the AWS SDK and Powertools); the alias keeps it from clashing with bundled names.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __newsAlertsCreateRequire } from 'node:module'; const require = __newsAlertsCreateRequire(import.meta.url);";

/**
 * How every function is bundled: a minified ESM bundle for Node 22 with a source map, the AWS SDK
 * bundled in. Exported so the cold-start benchmark (bench/cold-start.ts) builds the handler with
 * exactly these options rather than a copy of them.
 */
export const FUNCTION_BUNDLING = {
  format: OutputFormat.ESM,
  target: 'node22',
  minify: true,
  // Class and function names survive minification, so stack traces name ConfigError, not `wr`.
  keepNames: true,
  sourceMap: true,
  sourcesContent: false,
  mainFields: ['module', 'main'],
  banner: ESM_REQUIRE_BANNER,
  bundleAwsSDK: true,
} as const satisfies BundlingOptions;

/** Props of {@link NewsAlertsFunction}: what differs between functions; everything else is fixed. */
export interface NewsAlertsFunctionProps
  extends Omit<NodejsFunctionProps, 'runtime' | 'architecture' | 'logGroup' | 'logRetention' | 'role'> {
  /** Entry file, relative to the repository root. */
  readonly entry: string;
  readonly description: string;
  /** Explicit on every function: the default (128 MB) is too small for the SDK clients. */
  readonly memorySize: number;
  /** Explicit on every function: the default (3 s) is too short for any network call. */
  readonly timeout: Duration;
  readonly logRetention: logs.RetentionDays;
  /** Applies to the function's log group. */
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The project's Lambda function: Node 22 on arm64, a minified ESM bundle with source maps (the AWS
 * SDK bundled in, so what runs is what the lockfile pinned and the tests ran), its own log group
 * with retention, an explicit role that may write only to that log group, X-Ray tracing and the
 * shared Powertools settings. `props.environment` is merged over the defaults, never instead of them.
 */
export class NewsAlertsFunction extends NodejsFunction {
  /** The function's own log group (created here, so its retention is part of the stack). */
  readonly functionLogGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: NewsAlertsFunctionProps) {
    const { entry, environment, bundling, logRetention, removalPolicy, ...rest } = props;
    const functionLogGroup = new logs.LogGroup(scope, `${id}LogGroup`, { retention: logRetention, removalPolicy });
    const role = new iam.Role(scope, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${props.description}`,
    });
    super(scope, id, {
      ...rest,
      entry: functionEntry(entry),
      projectRoot,
      depsLockFilePath: `${projectRoot}package-lock.json`,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      tracing: props.tracing ?? lambda.Tracing.ACTIVE,
      role,
      logGroup: functionLogGroup,
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: serviceOf(scope),
        POWERTOOLS_METRICS_NAMESPACE: powertools.namespace,
        POWERTOOLS_LOG_LEVEL: 'INFO',
        ...environment,
      },
      bundling: {
        ...FUNCTION_BUNDLING,
        mainFields: [...FUNCTION_BUNDLING.mainFields],
        forceDockerBundling: false,
        ...bundling,
      },
    });
    this.functionLogGroup = functionLogGroup;
    // Only this function's own log group; Lambda creates the streams inside it.
    functionLogGroup.grantWrite(role);
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Only X-Ray tracing (xray:PutTraceSegments, xray:PutTelemetryRecords), which supports no resource-level permissions: AWS requires Resource "*". test/infra asserts that no other statement has it.',
    });
    const runtimeReason =
      'Node.js 22 is the runtime this project deploys and bundles for (FUNCTION_BUNDLING above targets node22). Moving to a newer runtime is a deliberate change with its own test run.';
    Validations.of(this).acknowledge(
      { id: 'AwsSolutions-L1', reason: runtimeReason },
      { id: 'Serverless-LambdaLatestVersion', reason: runtimeReason },
    );
    // cfn-lint W3005: CDK always makes a function DependsOn its role (and the role's policy, which
    // must exist before the first invocation); the role part repeats what GetAtt Role.Arn already
    // enforces. Harmless, and removing it would mean overriding DependsOn by hand.
    (this.node.defaultChild as lambda.CfnFunction).addMetadata('cfn-lint', { config: { ignore_checks: ['W3005'] } });
  }
}
