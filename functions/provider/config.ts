/**
 * Configuration of the News Lookup client, validated once at cold start. Every message names the
 * environment variable (and the config field) and says what to fix, because the person reading it
 * is an ops engineer looking at a failed Lambda, not the author of this file.
 */

import * as z from 'zod/mini';
import { ConfigError } from '#core/errors';
import { isTimeZone } from '#core/model';
import { defaultPageSize } from '#core/ports';
import { quotableUrl } from '#shared/network-targets';
import { type ResponseMapping, ResponseMappingOverrideSchema, resolveMapping } from './response-mapping.ts';

/**
 * Environment variable of each setting, as the stack sets them (functions/alert-run/config.ts
 * reads them); used to name the variable in error messages.
 */
export const providerEnvironment = {
  baseUrl: 'NEWS_API_BASE_URL',
  pageSize: 'NEWS_API_PAGE_SIZE',
  timeZone: 'NEWS_API_TIME_ZONE',
  pagination: 'NEWS_API_PAGINATION',
  maxPages: 'NEWS_API_MAX_PAGES',
  connectTimeoutMs: 'NEWS_API_CONNECT_TIMEOUT_MS',
  readTimeoutMs: 'NEWS_API_READ_TIMEOUT_MS',
  responseTimeoutMs: 'NEWS_API_RESPONSE_TIMEOUT_MS',
  maxResponseBytes: 'NEWS_API_MAX_RESPONSE_BYTES',
  maxAttempts: 'NEWS_API_MAX_ATTEMPTS',
  baseDelayMs: 'NEWS_API_BASE_DELAY_MS',
  maxDelayMs: 'NEWS_API_MAX_DELAY_MS',
  maxRetryAfterMs: 'NEWS_API_MAX_RETRY_AFTER_MS',
  pageConcurrency: 'NEWS_API_PAGE_CONCURRENCY',
  mapping: 'NEWS_API_RESPONSE_MAPPING',
  caPem: 'NEWS_API_CA_PEM',
} as const;

type Field = keyof typeof providerEnvironment;

/** Nested settings that have a variable of their own. */
const nestedEnvironment: Record<string, string> = {
  'pagination.methodValue': 'NEWS_API_CURSOR_METHOD_VALUE',
  'pagination.cursorField': 'NEWS_API_CURSOR_FIELD',
};

const describe = (input: unknown): string => {
  const text = typeof input === 'string' ? JSON.stringify(input) : String(JSON.stringify(input) ?? input);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
};

const wholeNumber = (min: number, max: number, fallback: number) =>
  z._default(
    z
      .number({ error: (issue) => `must be a whole number from ${min} to ${max}; got ${describe(issue.input)}` })
      .check(
        z.int(`must be a whole number from ${min} to ${max}`),
        z.gte(min, `must be at least ${min}`),
        z.lte(max, `must be at most ${max}`),
      ),
    fallback,
  );

const baseUrl = z.pipe(
  z.string({ error: 'is required: the provider base URL, e.g. https://api.example.com/v1' }).check(
    z.trim(),
    z.minLength(1, 'is required: the provider base URL, e.g. https://api.example.com/v1'),
    z.superRefine((value, ctx) => {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        ctx.addIssue({ code: 'custom', message: `is not a URL; got ${describe(quotableUrl(value))}` });
        return;
      }
      if (url.protocol !== 'https:') {
        ctx.addIssue({
          code: 'custom',
          message: `must use https:// (the provider only allows HTTPS); got ${describe(quotableUrl(value))}`,
        });
      } else if (url.username || url.password) {
        ctx.addIssue({ code: 'custom', message: 'must not carry credentials; the API key comes from Secrets Manager' });
      } else if (url.search || url.hash) {
        // The query is not repeated: it is where a key would be put by mistake (`?apiKey=…`).
        ctx.addIssue({
          code: 'custom',
          message: `must not have a query or fragment (the API key comes from Secrets Manager); got ${describe(`${url.origin}${url.pathname}`)} followed by one`,
        });
      }
    }),
  ),
  // One trailing slash or none, the request path is joined the same way.
  z.transform((value: string) => value.replace(/\/+$/, '')),
);

/**
 * No default: a provider whose timestamps carry no offset must not be read as UTC by accident
 * (alerts nine hours off for a Seoul provider). Unset, date-only ranges are UTC dates and a
 * zone-less timestamp fails the run with ProviderTimeZoneError naming this setting.
 */
const timeZone = z.optional(
  z.string({ error: 'must be an IANA time zone such as "Asia/Seoul" or "UTC"' }).check(
    z.trim(),
    z.refine(isTimeZone, {
      error: (issue) => `must be an IANA time zone such as "Asia/Seoul" or "UTC"; got ${describe(issue.input)}`,
    }),
  ),
);

/** How results are paged; the stack's `newsApiPagination` option uses the same schema. */
export const PaginationSchema = z._default(
  z.discriminatedUnion(
    'method',
    [
      z.strictObject({ method: z.literal('PAGE') }),
      z.strictObject({
        method: z.literal('CURSOR'),
        /** The `paginationMethod` value that selects cursor paging (the provider does not name it). */
        methodValue: z._default(z.string().check(z.trim(), z.minLength(1, 'must not be empty')), 'CURSOR'),
        /** Request and response field of the cursor in the request body. */
        cursorField: z._default(
          z
            .string()
            .check(z.trim(), z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a plain JSON field name such as "cursor"')),
          'cursor',
        ),
      }),
    ],
    { error: 'must be {"method":"PAGE"} or {"method":"CURSOR","methodValue":"…","cursorField":"…"}' },
  ),
  { method: 'PAGE' as const },
);

const caPem = z.optional(
  z.string().check(
    z.refine((value) => value.includes('-----BEGIN CERTIFICATE-----'), {
      error: 'must be a PEM certificate (-----BEGIN CERTIFICATE----- …); it is only needed for the local simulator',
    }),
  ),
);

/** The provider client's settings with their defaults. */
export const ProviderConfigSchema = z.pipe(
  z
    .strictObject({
      baseUrl,
      /** Articles per page; the provider documents no bound, comparable APIs cap at 100 to 1000. */
      pageSize: wholeNumber(1, 1000, defaultPageSize),
      /**
       * The provider's zone: date-only ranges and zone-less timestamps are read in it. The output
       * keeps it for ranges (`UTC` when unset) and as `timestampTimeZone` only when set.
       */
      timeZone,
      pagination: PaginationSchema,
      /** Pages per date range before giving up with PageCapError. */
      maxPages: wholeNumber(1, 1_000_000, 1000),
      connectTimeoutMs: wholeNumber(1, 120_000, 5000),
      /** Longest wait for response headers and between body chunks. */
      readTimeoutMs: wholeNumber(1, 600_000, 15_000),
      /**
       * Longest a whole response may take, headers to last byte: the read timeout alone lets a
       * provider that drips one byte at a time hold a request (and the run) indefinitely.
       */
      responseTimeoutMs: wholeNumber(1, 600_000, 30_000),
      /** Largest response body read; a bigger one is refused rather than held in memory. */
      maxResponseBytes: wholeNumber(1024, 512 * 1024 * 1024, 32 * 1024 * 1024),
      /** Attempts per request, the first included. */
      maxAttempts: wholeNumber(1, 20, 5),
      baseDelayMs: wholeNumber(0, 600_000, 250),
      maxDelayMs: wholeNumber(0, 600_000, 20_000),
      /** A Retry-After longer than this ends the run instead of sleeping through it. */
      maxRetryAfterMs: wholeNumber(0, 3_600_000, 60_000),
      /** Pages fetched at once once the total is known. */
      pageConcurrency: wholeNumber(1, 32, 4),
      mapping: z.pipe(
        z._default(ResponseMappingOverrideSchema, {}),
        z.transform((partial): ResponseMapping => resolveMapping(partial)),
      ),
      /** An extra CA to trust besides the system roots (the local simulator's); never a way around verification. */
      caPem,
    })
    .check(
      z.superRefine((config, ctx) => {
        if (config.responseTimeoutMs < config.readTimeoutMs) {
          ctx.addIssue({
            code: 'custom',
            path: ['responseTimeoutMs'],
            message: `must be at least NEWS_API_READ_TIMEOUT_MS (${config.readTimeoutMs}): it bounds the whole response, the read timeout each wait`,
          });
        }
        if (config.maxDelayMs < config.baseDelayMs) {
          ctx.addIssue({
            code: 'custom',
            path: ['maxDelayMs'],
            message: `must be at least NEWS_API_BASE_DELAY_MS (${config.baseDelayMs})`,
          });
        }
      }),
    ),
  z.transform(({ timeZone: zone, ...config }) => ({
    ...config,
    /** Zone of the provider's date-only ranges: the configured one, else UTC. */
    timeZone: zone ?? 'UTC',
    /** Zone for timestamps without an offset; `undefined` (not configured): such timestamps are refused. */
    timestampTimeZone: zone,
  })),
);

/** Validated provider settings; `mapping` is the full mapping with overrides applied. */
export type ProviderConfig = z.output<typeof ProviderConfigSchema>;

/** The settings as written before defaults (what `parseProviderConfig` accepts). */
export type ProviderConfigInput = z.input<typeof ProviderConfigSchema>;

/** `NEWS_API_PAGE_SIZE (pageSize)`, `NEWS_API_RESPONSE_MAPPING.title[0] (mapping.title[0])`. */
function label(path: readonly PropertyKey[]): string {
  const [head, ...rest] = path;
  if (head === undefined) return 'the provider configuration';
  const field = String(head);
  const tail = rest.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('');
  const nested = nestedEnvironment[`${field}${tail}`];
  if (nested) return `${nested} (${field}${tail})`;
  const env = Object.hasOwn(providerEnvironment, field) ? providerEnvironment[field as Field] : undefined;
  return env ? `${env}${tail} (${field}${tail})` : `${field}${tail}`;
}

/**
 * Validates provider settings and applies defaults.
 * @throws ConfigError naming each bad setting (environment variable and field) and what to fix
 */
export function parseProviderConfig(input: unknown): ProviderConfig {
  const result = ProviderConfigSchema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return `${label(issue.path)}: unknown setting(s) ${issue.keys.join(', ')}; check the spelling`;
    }
    if (issue.path.length === 0) return `the provider configuration must be an object of settings (${issue.message})`;
    return `${label(issue.path)} ${issue.message}`;
  });
  throw new ConfigError(`invalid news API configuration: ${problems.join('; ')}`, { cause: result.error });
}
