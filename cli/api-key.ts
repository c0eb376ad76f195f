/**
 * `news-alerts api-key set|status`: the news provider's API key in the target's secret (the
 * stack's `ApiKeySecretArn`, or the sandbox's `<prefix>news-api-key`).
 *
 * The key is read from stdin, never from argv (the process list and shell history would keep
 * it): piped input is read whole, at a terminal it is typed without echo. Nothing this module
 * prints contains it: not the output, not an error (AWS errors are reported by their code and
 * the secret's name only).
 */
import {
  DescribeSecretCommand,
  PutSecretValueCommand,
  ResourceNotFoundException,
} from '@aws-sdk/client-secrets-manager';
import type { Command } from 'commander';
import { action } from './command.ts';
import type { CommandContext } from './context.ts';
import { NotFoundError, OperationFailedError, UsageError } from './errors.ts';
import { newsAlerts } from './hints.ts';
import { formatInstant } from './output.ts';
import type { Target } from './target.ts';

/** Secrets Manager's limit on a secret value. */
const maxSecretBytes = 65_536;

/**
 * The key as it will be stored: a bare key (one token), or the `{"apiKey": "…"}` form the run
 * also reads.
 * @throws UsageError for empty input, more than one token, or a JSON object without `apiKey`
 */
export function apiKeyValueOf(input: string): string {
  const value = input.trim();
  if (value === '') {
    throw new UsageError(
      `no API key on stdin: pipe it in (${newsAlerts()} api-key set < key.txt) or type it at the prompt`,
    );
  }
  if (Buffer.byteLength(value) > maxSecretBytes) {
    throw new UsageError(`the input is longer than a secret can hold (${maxSecretBytes} bytes); pipe only the key`);
  }
  if (value.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new UsageError('the input starts with "{" but is not JSON; pipe the bare key or {"apiKey": "<key>"}');
    }
    const apiKey = (parsed as { apiKey?: unknown } | null)?.apiKey;
    if (typeof apiKey !== 'string' || apiKey.trim() === '' || /[\s\p{Cc}]/u.test(apiKey)) {
      throw new UsageError('the JSON input needs a non-empty "apiKey" string without spaces: {"apiKey": "<key>"}');
    }
    refuseNonAscii(apiKey.trim());
    return value;
  }
  // Checked without quoting the input: it is the key, or close to it.
  if (/[\s\p{Cc}]/u.test(value)) {
    throw new UsageError(
      `the input holds spaces, line breaks or control characters inside it; pipe only the key (e.g. printf %s "$KEY" | ${newsAlerts()} api-key set)`,
    );
  }
  refuseNonAscii(value);
  return value;
}

/**
 * Provider keys are printable ASCII, and an HTTP header carries nothing else: the run refuses any
 * other key (functions/provider/news-client.ts), so storing one would only fail every run. Says
 * where (not the key's length), never what.
 */
function refuseNonAscii(key: string): void {
  const odd = key.search(/[^\x21-\x7e]/);
  if (odd === -1) return;
  throw new UsageError(
    `the key has a space, control or non-ASCII character (character ${odd + 1}), and an HTTP header cannot carry it; pipe the key exactly as the provider issued it, e.g. printf %s "$KEY" | ${newsAlerts()} api-key set`,
  );
}

/** An AWS failure about the secret, named by the secret only (never the value). */
function secretError(target: Target, secretId: string, verb: string, error: unknown): Error {
  if (error instanceof ResourceNotFoundException) {
    return new NotFoundError(
      `the API key secret ${secretId} of ${target.label} does not exist${target.kind === 'local' ? '; restart the sandbox' : '; check --stack and --region'}`,
      { cause: error },
    );
  }
  const name = error instanceof Error ? error.name : 'Error';
  const access = /AccessDenied|NotAuthorized/i.test(name)
    ? ` (your AWS identity needs secretsmanager:${verb === 'write' ? 'PutSecretValue' : 'DescribeSecret'} on it${verb === 'write' ? ', and kms:Encrypt on its key when it has a customer key' : ''})`
    : '';
  return new OperationFailedError(
    `could not ${verb} the API key secret ${secretId} of ${target.label}: ${name}${access}`,
    {
      cause: error,
    },
  );
}

/** What `api-key status` knows about the secret. */
interface ApiKeyState {
  readonly secretId: string;
  readonly set: boolean;
  readonly lastChanged: string | undefined;
}

async function apiKeyState(target: Target): Promise<ApiKeyState> {
  const secretId = target.names.apiKeySecretId;
  try {
    const secret = await target.clients.secrets.send(new DescribeSecretCommand({ SecretId: secretId }));
    const set = Object.values(secret.VersionIdsToStages ?? {}).some((stages) => stages.includes('AWSCURRENT'));
    return { secretId, set, lastChanged: set ? secret.LastChangedDate?.toISOString() : undefined };
  } catch (error) {
    throw secretError(target, secretId, 'read', error);
  }
}

async function setApiKey(context: CommandContext, args: readonly unknown[]): Promise<void> {
  const [onCommandLine] = args as [string | undefined];
  if (onCommandLine !== undefined) {
    throw new UsageError(
      `the API key is read from stdin, never from the command line (the process list and shell history keep arguments): ${newsAlerts()} api-key set < key.txt`,
    );
  }
  const target = await context.target();
  const secretId = target.names.apiKeySecretId;
  const value = apiKeyValueOf(await context.readSecret(`API key for ${secretId} (input hidden): `));
  let versionId: string | undefined;
  try {
    ({ VersionId: versionId } = await target.clients.secrets.send(
      new PutSecretValueCommand({ SecretId: secretId, SecretString: value }),
    ));
  } catch (error) {
    throw secretError(target, secretId, 'write', error);
  }
  context.output.result({ secretId, stored: true, versionId }, () => {
    context.output.line(`stored the API key in ${secretId} (${target.label})`);
    context.output.line(
      target.kind === 'local'
        ? `the next run reads it: ${newsAlerts()} run`
        : 'the next scheduled run reads it (a warm function may keep the old key for up to SECRET_CACHE_SECONDS, 300 s by default)',
    );
  });
}

async function apiKeyStatus(context: CommandContext): Promise<void> {
  const target = await context.target();
  const state = await apiKeyState(target);
  if (!state.set) {
    throw new NotFoundError(
      `no API key in ${state.secretId} (${target.label}): put it in with ${newsAlerts()} api-key set`,
    );
  }
  context.output.result(state, () =>
    context.output.line(
      `an API key is set in ${state.secretId} (${target.label})${
        state.lastChanged ? `, last changed ${formatInstant(Date.parse(state.lastChanged))}` : ''
      }`,
    ),
  );
}

/** Registers `api-key`. */
export function registerApiKey(program: Command): void {
  const apiKey = program
    .command('api-key')
    .description("the news provider API key in the target's secret (read from stdin, never printed)");

  apiKey
    .command('set')
    .description("store the provider API key in the target's secret, read from stdin (hidden at a terminal)")
    // A key pasted onto the command line is refused by the command, not listed as an argument.
    .allowExcessArguments()
    .addHelpText(
      'after',
      `
The key is read from stdin: piped (news-alerts api-key set < key.txt, or
printf %s "$NEWS_API_KEY" | news-alerts api-key set) or typed at the prompt without echo.
A bare key or {"apiKey": "<key>"}. Nothing printed contains it.
Works for the deployed stack (its ApiKeySecretArn) and the sandbox (--local).`,
    )
    .action(action(setApiKey));

  apiKey
    .command('status')
    .description('whether the secret holds an API key (never prints it; exit 3 when none is set)')
    .action(action(apiKeyStatus));
}
