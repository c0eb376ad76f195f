/**
 * The response mapping: where in the provider's JSON the article list, each article's fields and
 * the paging metadata live. The provider does not document its response body, so every field is a
 * list of candidate paths; the defaults read the bundled simulator first and then the shapes of
 * comparable news APIs (NewsAPI, NewsData, Newscatcher, Event Registry, GDELT, Naver, DeepSearch),
 * and ops can override any field in configuration without a code change.
 *
 * Path language: dotted keys (`media.code`), `[]` after a key projects over an array
 * (`categories[].code` reads `code` of every element), and `$` alone is the whole body (for a
 * provider that answers with a bare array). Only own properties are read.
 */
import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import { ProviderResponseError, ProviderTimeZoneError } from '#core/errors';
import type { Article } from '#core/model';
import type { SkippedItem } from '#core/ports';
import { redactSecrets as redactRegistered } from '#shared/secret-redaction';
import { articleText } from './article-text.ts';
import { carriesOffset, parseTimestamp, ZonelessTimestampError } from './timestamps.ts';

/** Candidate paths per field; the first path that yields a usable value wins. */
export interface ResponseMapping {
  /** The article list in the envelope. */
  readonly articles: readonly string[];
  readonly id: readonly string[];
  readonly title: readonly string[];
  readonly summary: readonly string[];
  readonly url: readonly string[];
  readonly publishedAt: readonly string[];
  /** Category codes (strings or numbers), or a single code. */
  readonly categories: readonly string[];
  readonly categoryNames: readonly string[];
  readonly media: readonly string[];
  readonly mediaName: readonly string[];
  readonly status: readonly string[];
  /** Total result count in the envelope (enables concurrent page fetches). */
  readonly totalCount: readonly string[];
  /** Next cursor in the envelope (cursor paging). */
  readonly nextCursor: readonly string[];
  /** Envelope fields whose presence (non-null, non-false, non-empty) means the provider failed. */
  readonly errorFields: readonly string[];
  /** Envelope fields holding an overall status, compared with `errorStatusValues`. */
  readonly errorStatusFields: readonly string[];
  /** Status values (case-insensitive) that mean the provider failed even though HTTP said 200. */
  readonly errorStatusValues: readonly string[];
  /**
   * Envelope fields holding a status code whose success values are fixed (`"code": "0000"`):
   * when such a field is present and its value is not one of `successStatusValues`, the provider
   * failed. Empty by default (no such check).
   */
  readonly successStatusFields: readonly string[];
  /** The only values (strings or numbers, compared as trimmed text) of `successStatusFields` that mean success. */
  readonly successStatusValues: readonly string[];
}

/** The mapping used when configuration overrides nothing. */
export const defaultResponseMapping: ResponseMapping = Object.freeze({
  articles: ['articles', 'data', 'results', 'items', 'docs', 'data.docs', 'articles.results'],
  id: ['articleId', 'id', 'article_id', 'newsId', 'news_id', '_id', 'uri'],
  title: ['title', 'headline'],
  summary: ['summary', 'description', 'lead', 'content', 'body'],
  url: ['url', 'link', 'originallink', 'originalUrl'],
  publishedAt: [
    'publishedAt',
    'published_at',
    'pubDate',
    'published_date',
    'publishDate',
    'dateTime',
    'date',
    'seendate',
  ],
  categories: ['categories[].code', 'categories', 'category.code', 'category', 'categoryCode'],
  categoryNames: ['categories[].name', 'category.name', 'categoryName'],
  media: ['media.code', 'mediaCode', 'media', 'source.id', 'source'],
  mediaName: ['media.name', 'mediaName', 'source.name'],
  status: ['status', 'articleStatus', 'state'],
  totalCount: [
    'totalCount',
    'totalResults',
    'total',
    'total_hits',
    'totalElements',
    'data.total_matches',
    'articles.totalResults',
  ],
  nextCursor: ['nextCursor', 'next_cursor', 'nextPage', 'cursor.next'],
  errorFields: ['error', 'errors', 'errorMessage'],
  errorStatusFields: ['status', 'result'],
  errorStatusValues: ['error', 'fail', 'failed', 'not_ok', 'ERROR'],
  successStatusFields: [],
  successStatusValues: [],
});

/** Mapping fields that hold values to compare, not paths. */
const valueFields: ReadonlySet<string> = new Set(['errorStatusValues', 'successStatusValues']);

// --- Paths ----------------------------------------------------------------------------------------

interface Segment {
  readonly key: string;
  readonly project: boolean;
}

const pathPattern = /^(\$|[^.[\]]+(\[\])?(\.[^.[\]]+(\[\])?)*)$/;

/** Whether `path` is a valid mapping path (`a.b`, `a[].b`, `$`). */
export const isMappingPath = (path: string): boolean => pathPattern.test(path);

const compiled = new Map<string, readonly Segment[]>();

function compilePath(path: string): readonly Segment[] {
  const cached = compiled.get(path);
  if (cached) return cached;
  if (!isMappingPath(path)) {
    throw new TypeError(`"${path}" is not a mapping path (use dotted keys, "[]" to project over a list, or "$")`);
  }
  const segments =
    path === '$'
      ? []
      : path
          .split('.')
          .map((part) =>
            part.endsWith('[]') ? { key: part.slice(0, -2), project: true } : { key: part, project: false },
          );
  compiled.set(path, segments);
  return segments;
}

function own(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  // Own properties only: `constructor` or `__proto__` in a path must not reach Object.prototype.
  return Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
}

function walk(value: unknown, segments: readonly Segment[], index: number): unknown {
  const segment = segments[index];
  if (segment === undefined) return value;
  const next = own(value, segment.key);
  if (!segment.project) return walk(next, segments, index + 1);
  if (!Array.isArray(next)) return undefined;
  const nested = segments.slice(index + 1).some((s) => s.project);
  const out: unknown[] = [];
  for (const element of next) {
    const result = walk(element, segments, index + 1);
    if (result === undefined || result === null) continue;
    // A later `[]` already produced a list per element; flatten so `a[].b[].c` is one flat list.
    if (nested && Array.isArray(result)) out.push(...result);
    else out.push(result);
  }
  return out;
}

/** Reads `path` from `value`; `undefined` when any step is missing. */
export function readPath(value: unknown, path: string): unknown {
  return walk(value, compilePath(path), 0);
}

// --- Configuration schema -------------------------------------------------------------------------

const pathList = z
  .pipe(
    z.union([z.string(), z.array(z.string()).check(z.minLength(1, 'must list at least one path'), z.maxLength(32))], {
      error: 'must be a path or a list of paths, e.g. ["articles", "data.items"]',
    }),
    z.transform((value) => (typeof value === 'string' ? [value] : value)),
  )
  .check(
    z.superRefine((paths, ctx) => {
      for (const [index, path] of paths.entries()) {
        if (!isMappingPath(path)) {
          ctx.addIssue({
            code: 'custom',
            path: [index],
            message: `"${path}" is not a mapping path (use dotted keys, "[]" to project over a list, or "$" for the whole body)`,
          });
        }
      }
    }),
  );

/**
 * A partial override of the response mapping as ops write it in configuration. Each given field
 * replaces that field's default candidates (list the defaults too if they should still be tried).
 */
export const ResponseMappingOverrideSchema = z
  .strictObject({
    articles: z.optional(pathList),
    id: z.optional(pathList),
    title: z.optional(pathList),
    summary: z.optional(pathList),
    url: z.optional(pathList),
    publishedAt: z.optional(pathList),
    categories: z.optional(pathList),
    categoryNames: z.optional(pathList),
    media: z.optional(pathList),
    mediaName: z.optional(pathList),
    status: z.optional(pathList),
    totalCount: z.optional(pathList),
    nextCursor: z.optional(pathList),
    errorFields: z.optional(pathList),
    errorStatusFields: z.optional(pathList),
    errorStatusValues: z.optional(z.array(z.string().check(z.minLength(1))).check(z.maxLength(32))),
    successStatusFields: z.optional(pathList),
    successStatusValues: z.optional(
      z
        .array(z.union([z.string().check(z.trim(), z.minLength(1)), z.pipe(z.number(), z.transform(String))]), {
          error: 'must be a list of the status values that mean success, e.g. ["0000"]',
        })
        .check(z.minLength(1, 'must list at least one success value, e.g. ["0000"]'), z.maxLength(32)),
    ),
  })
  .check(
    z.superRefine((mapping, ctx) => {
      // One without the other cannot be applied: say which half is missing.
      if (mapping.successStatusFields !== undefined && mapping.successStatusValues === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['successStatusValues'],
          message: 'is required with successStatusFields: list the values that mean success, e.g. ["0000"]',
        });
      }
      if (mapping.successStatusValues !== undefined && mapping.successStatusFields === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['successStatusFields'],
          message: 'is required with successStatusValues: the path of the status code field, e.g. ["code"]',
        });
      }
    }),
  );

/** A validated partial mapping, as produced by `ResponseMappingOverrideSchema`. */
export type ResponseMappingOverride = Partial<ResponseMapping>;

/** The default mapping with the given fields replaced. */
export function resolveMapping(partial: ResponseMappingOverride = {}): ResponseMapping {
  const merged: Record<string, readonly string[]> = { ...defaultResponseMapping };
  for (const [field, value] of Object.entries(partial)) {
    if (value !== undefined && Object.hasOwn(defaultResponseMapping, field)) merged[field] = value;
  }
  const mapping = merged as unknown as ResponseMapping;
  // Fail at configuration time rather than on the first page.
  for (const [field, paths] of Object.entries(mapping)) {
    if (valueFields.has(field)) continue;
    for (const path of paths as readonly string[]) compilePath(path);
  }
  return Object.freeze(mapping);
}

// --- Redaction and samples ------------------------------------------------------------------------

const maxSampleLength = 300;

/**
 * `text` with every registered secret and every value of `secrets` redacted: whole, any fragment
 * of eight or more characters, any case, raw, JSON-escaped, URL-encoded or base64
 * (functions/shared/secret-redaction.ts). Used on everything the provider sends back before it
 * reaches an error message or a log line, because some APIs echo request parameters, the key
 * among them.
 */
export function redactSecrets(text: string, secrets: Iterable<string> = []): string {
  return redactRegistered(text, secrets);
}

/** Deeper than this, a preview shows `…` instead of the nested value. */
const maxPreviewDepth = 16;

/**
 * A compact JSON rendering of at most about `max` characters that never recurses deeper than
 * {@link maxPreviewDepth} and never walks more than it shows: a 400 KB body of nested brackets
 * crashes JSON.stringify and String() with a stack overflow, and a huge body would be rendered
 * whole only to be cut.
 */
function previewJson(value: unknown, max: number): string {
  let out = '';
  const visit = (node: unknown, depth: number): void => {
    if (out.length > max) return;
    if (node === null || typeof node === 'number' || typeof node === 'boolean') {
      out += String(node);
      return;
    }
    if (typeof node === 'string') {
      out += JSON.stringify(node.length > max ? node.slice(0, max) : node);
      return;
    }
    if (typeof node !== 'object') {
      out += typeof node === 'undefined' ? 'undefined' : `[${typeof node}]`;
      return;
    }
    if (depth >= maxPreviewDepth) {
      out += Array.isArray(node) ? '[…]' : '{…}';
      return;
    }
    if (Array.isArray(node)) {
      out += '[';
      for (let i = 0; i < node.length && out.length <= max; i++) {
        if (i > 0) out += ',';
        visit(node[i], depth + 1);
      }
      out += ']';
      return;
    }
    out += '{';
    let first = true;
    for (const key in node) {
      if (!Object.hasOwn(node, key)) continue;
      if (out.length > max) break;
      if (!first) out += ',';
      first = false;
      out += `${JSON.stringify(key.length > max ? key.slice(0, max) : key)}:`;
      visit((node as Record<string, unknown>)[key], depth + 1);
    }
    out += '}';
  };
  visit(value, 0);
  return out;
}

/** A one-line, redacted preview of a JSON value of at most `max` characters. */
export function sampleOf(value: unknown, secrets: Iterable<string> = [], max = maxSampleLength): string {
  // Cut with room to spare before redacting, so a secret cut at the edge is still recognised
  // (fragments of eight characters or more are) and the redaction marker cannot push it over.
  const budget = max * 2 + 64;
  const raw = typeof value === 'string' ? value.slice(0, budget) : previewJson(value, budget);
  const redacted = redactSecrets(raw.slice(0, budget).replace(/\s+/g, ' '), secrets);
  return redacted.length <= max ? redacted : `${redacted.slice(0, max - 1)}…`;
}

// --- Body-level errors ----------------------------------------------------------------------------

function isPresent(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0) return false;
  if (typeof value === 'string') return value.trim().length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

function describeError(value: unknown): string | undefined {
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  const first = Array.isArray(value) ? value[0] : value;
  if (typeof first === 'string') return first;
  const code = own(first, 'code') ?? own(first, 'status');
  const message = own(first, 'message') ?? own(first, 'msg') ?? own(first, 'error');
  const parts = [code, message].filter((part) => typeof part === 'string' || typeof part === 'number');
  return parts.length > 0 ? parts.join(': ') : undefined;
}

/**
 * The provider's own error report in a response body, or `undefined` when the body reports none.
 * The result is redacted and trimmed, ready for an error message.
 */
export function findBodyError(
  body: unknown,
  mapping: ResponseMapping,
  secrets: Iterable<string> = [],
): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  for (const path of mapping.errorFields) {
    const value = readPath(body, path);
    if (isPresent(value)) {
      const detail = describeError(value) ?? describeError(body) ?? sampleOf(value, secrets, 200);
      return sampleOf(`${path}: ${detail}`, secrets, 300);
    }
  }
  const errorValues = new Set(mapping.errorStatusValues.map((v) => v.toLowerCase()));
  for (const path of mapping.errorStatusFields) {
    const value = readPath(body, path);
    if (typeof value === 'string' && errorValues.has(value.trim().toLowerCase())) {
      const detail = describeError(body);
      return sampleOf(`${path} "${value}"${detail ? `: ${detail}` : ''}`, secrets, 300);
    }
  }
  if (mapping.successStatusValues.length > 0) {
    const successValues = new Set(mapping.successStatusValues.map((v) => v.trim()));
    for (const path of mapping.successStatusFields) {
      const value = readPath(body, path);
      if (value === undefined || value === null) continue;
      const text = typeof value === 'string' || typeof value === 'number' ? String(value).trim() : undefined;
      if (text !== undefined && successValues.has(text)) continue;
      const detail = describeError(body);
      return sampleOf(
        `${path} ${previewJson(value, 40)} is not a success value (${mapping.successStatusValues.join(', ')})${detail ? `: ${detail}` : ''}`,
        secrets,
        300,
      );
    }
  }
  if (own(body, 'success') === false) {
    const detail = describeError(body);
    return sampleOf(`success false${detail ? `: ${detail}` : ''}`, secrets, 300);
  }
  return undefined;
}

/** Field names that error reports use for their code, status or message. */
const errorReportField =
  /^(errors?|err|error_?(code|message|msg|description)|fault|code|status_?code|result_?code|message|msg|reason|detail|description)$/i;
/** Values of such fields that say nothing went wrong. */
const successWords = /^(ok|success|succeeded|true|0|200|0+)$/i;

/**
 * Fields of a body without an article list that read like an error report (`code`, `message`,
 * `error`… with a value other than a success word), at the top or one level down, and the path of
 * the first: the mapping's error fields did not recognise it, so the advice points at them.
 * Undefined when the body has no such field, or holds a list elsewhere (then the articles are
 * likely just somewhere the mapping does not look).
 */
function errorReportIn(body: unknown): { path: string; fields: Record<string, unknown> } | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const fields: Record<string, unknown> = {};
  let first: string | undefined;
  const visit = (node: Record<string, unknown>, prefix: string, depth: number): boolean => {
    for (const [key, value] of Object.entries(node)) {
      const path = `${prefix}${key}`;
      if (Array.isArray(value) && value.some((entry) => typeof entry === 'object' && entry !== null)) return false;
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        if (depth === 0 && !visit(value as Record<string, unknown>, `${path}.`, depth + 1)) return false;
        continue;
      }
      if (!errorReportField.test(key) || value === null || value === '' || value === false) continue;
      if ((typeof value === 'string' || typeof value === 'number') && successWords.test(String(value).trim())) continue;
      fields[path] = value;
      first ??= path;
    }
    return true;
  };
  if (!visit(body as Record<string, unknown>, '', 0) || first === undefined) return undefined;
  return { path: first, fields };
}

// --- Field extraction -----------------------------------------------------------------------------

function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') {
    const trimmed = value.trim();
    return trimmed.length > 0 ? trimmed : undefined;
  }
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

interface Hit<T> {
  readonly value: T;
  readonly path: string;
}

function firstText(item: unknown, paths: readonly string[]): Hit<string> | undefined {
  for (const path of paths) {
    const text = scalarText(readPath(item, path));
    if (text !== undefined) return { value: text, path };
  }
  return undefined;
}

function firstList(item: unknown, paths: readonly string[]): string[] {
  for (const path of paths) {
    const value = readPath(item, path);
    const list = (Array.isArray(value) ? value : [value])
      .map(scalarText)
      .filter((text): text is string => text !== undefined);
    if (list.length > 0) return [...new Set(list)];
  }
  return [];
}

const utmParameter = /^utm_/i;

/** The URL used for identity: lowercase scheme and host (URL does that), no fragment, no utm_* tracking. */
export function canonicalUrl(url: string): string {
  const parsed = new URL(url);
  parsed.hash = '';
  for (const name of [...parsed.searchParams.keys()]) {
    if (utmParameter.test(name)) parsed.searchParams.delete(name);
  }
  // Deleting every parameter leaves a bare `?` in some runtimes; identity must not depend on it.
  if (parsed.searchParams.size === 0) parsed.search = '';
  return parsed.href;
}

/** The de-duplication and ledger key: `id:<id>`, else `url:<sha256 base64url of the canonical url>`. */
export function articleKey(id: string | undefined, url: string): string {
  if (id !== undefined) return `id:${id}`;
  return `url:${createHash('sha256').update(canonicalUrl(url)).digest('base64url')}`;
}

function httpUrl(text: string): string | undefined {
  try {
    const parsed = new URL(text);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

const tried = (paths: readonly string[]) => `tried ${paths.join(', ')}`;

/** A value as it appeared in the JSON (strings quoted), short and redacted, for skip reasons. */
const quoted = (value: unknown, secrets: Iterable<string>) =>
  sampleOf(typeof value === 'string' ? JSON.stringify(value) : value, secrets, 80);

type ItemResult = { article: Article; date: Hit<unknown> } | { reason: string };

function mapItem(
  item: unknown,
  mapping: ResponseMapping,
  timeZone: string | undefined,
  secrets: Iterable<string>,
): ItemResult {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    const kind = item === null ? 'null' : Array.isArray(item) ? 'a list' : typeof item;
    return { reason: `the item is not an object (got ${kind})` };
  }
  const problems: string[] = [];
  const title = firstText(item, mapping.title);
  if (!title) problems.push(`title missing (${tried(mapping.title)})`);
  const urlHit = firstText(item, mapping.url);
  const url = urlHit ? httpUrl(urlHit.value) : undefined;
  if (!urlHit) problems.push(`url missing (${tried(mapping.url)})`);
  else if (!url) problems.push(`url ${quoted(urlHit.value, secrets)} at ${urlHit.path} is not an absolute http(s) URL`);
  let publishedAt: number | undefined;
  let rawDate: Hit<unknown> | undefined;
  for (const path of mapping.publishedAt) {
    const value = readPath(item, path);
    if (value === undefined || value === null || value === '') continue;
    rawDate ??= { value, path };
    try {
      publishedAt = parseTimestamp(value, timeZone);
    } catch (error) {
      if (error instanceof ZonelessTimestampError) throw new ZonelessAtPath(error.value, path);
      throw error;
    }
    if (publishedAt !== undefined) break;
  }
  if (publishedAt === undefined) {
    problems.push(
      rawDate
        ? `publishedAt ${quoted(rawDate.value, secrets)} at ${rawDate.path} is not a recognised timestamp (${tried(mapping.publishedAt)})`
        : `publishedAt missing (${tried(mapping.publishedAt)})`,
    );
  }
  if (!title || !url || publishedAt === undefined) return { reason: problems.join('; ') };

  const id = firstText(item, mapping.id)?.value;
  const categoryNames = firstList(item, mapping.categoryNames);
  const categories = firstList(item, mapping.categories);
  const mediaName = firstText(item, mapping.mediaName)?.value;
  const summary = firstText(item, mapping.summary)?.value;
  const article: Article = {
    key: articleKey(id, url),
    id,
    title: articleText(title.value, 'title'),
    summary: summary === undefined ? '' : articleText(summary, 'summary'),
    url,
    publishedAt,
    // The model promises codes, or names when the provider sends no codes.
    categories: categories.length > 0 ? categories : categoryNames,
    categoryNames,
    media: firstText(item, mapping.media)?.value ?? mediaName,
    mediaName,
    status: firstText(item, mapping.status)?.value,
  };
  return { article, date: rawDate ?? { value: publishedAt, path: '' } };
}

// --- Pages ----------------------------------------------------------------------------------------

/** A zone-less timestamp and where it was found, carried from the item to the page. */
class ZonelessAtPath extends Error {
  constructor(
    readonly value: string,
    readonly path: string,
  ) {
    super(`zone-less timestamp at ${path}`);
    this.name = 'ZonelessAtPath';
  }
}

/** One response body read through the mapping. */
export interface MappedPage {
  /** Articles in page order; not yet de-duplicated across pages. */
  readonly articles: Article[];
  /** Items that could not be read. `articles.length + skipped.length` is the page's item count. */
  readonly skipped: SkippedItem[];
  readonly totalCount?: number | undefined;
  readonly nextCursor?: string | undefined;
  /**
   * Set (with the reason and a redacted sample) when the page has items and none of them could
   * be read; only with `unreadablePage: 'report'`.
   */
  readonly unreadable?: string | undefined;
  /**
   * A publication time on this page that carries no zone or offset and was read in the
   * configured provider zone (checked on the page's first article), e.g. `"2026-11-22 13:32:57"
   * at publishedAt`: worth a warning, since a wrong zone shifts every alert silently.
   */
  readonly zonelessTimestamp?: string | undefined;
}

/** Options of `mapPage`. */
export interface MapPageOptions {
  /** Values to redact from samples and reasons (the API key, in case the provider echoes it). */
  readonly secrets?: Iterable<string>;
  /**
   * What a page on which no item can be read is: `refuse` (the default) throws, because with
   * nothing else to go on the mapping is the likelier culprit; `report` returns it with
   * `unreadable` set, for a caller that can tell a wrong mapping (no page reads) from a poison
   * page (other pages read fine).
   */
  readonly unreadablePage?: 'refuse' | 'report';
}

function readTotal(body: unknown, mapping: ResponseMapping): number | undefined {
  for (const path of mapping.totalCount) {
    const value = readPath(body, path);
    const number = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
    if (typeof number === 'number' && Number.isSafeInteger(number) && number >= 0) return number;
  }
  return undefined;
}

/**
 * Reads one response body through `mapping`.
 *
 * Items that lack a title, an http(s) url or a parseable publication time are skipped with the
 * reason; the page is refused (ProviderResponseError) when it has no article list, when the body
 * reports an error, or when every item of a non-empty page fails, since then the mapping, not the
 * data, is wrong. Messages name the paths tried and show a redacted sample of at most 300 characters.
 *
 * @param timeZone - the provider's zone, for timestamps without an offset; `undefined` when none
 *   is configured, and then a timestamp without an offset fails the page (ProviderTimeZoneError)
 * @throws ProviderResponseError — and nothing else — when the body does not fit the mapping
 */
export function mapPage(
  body: unknown,
  mapping: ResponseMapping,
  timeZone: string | undefined,
  options: MapPageOptions = {},
): MappedPage {
  const secrets = [...(options.secrets ?? [])];
  const bodyError = findBodyError(body, mapping, secrets);
  if (bodyError !== undefined) {
    throw new ProviderResponseError(`the provider reported an error in the response body: ${bodyError}`);
  }
  if (typeof body !== 'object' || body === null) {
    throw new ProviderResponseError(
      `the response body is not a JSON object or list (got ${body === null ? 'null' : typeof body}): ${sampleOf(body, secrets)}`,
    );
  }
  const totalCount = readTotal(body, mapping);
  let nextCursor: string | undefined;
  for (const path of mapping.nextCursor) {
    nextCursor = scalarText(readPath(body, path));
    if (nextCursor !== undefined) break;
  }
  let items: unknown[] | undefined;
  for (const path of mapping.articles) {
    const value = readPath(body, path);
    if (Array.isArray(value)) {
      items = value;
      break;
    }
  }
  if (items === undefined) {
    // Some APIs (Newscatcher) drop the list entirely when nothing matched; a zero total says so.
    if (totalCount === 0) return { articles: [], skipped: [], totalCount, nextCursor };
    const report = errorReportIn(body);
    throw new ProviderResponseError(
      report === undefined
        ? `the response has no article list at any of ${mapping.articles.join(', ')}; set the mapping's "articles" paths to where this provider puts its list. Response sample: ${sampleOf(body, secrets)}`
        : `the response has no article list and reads like an error report (${sampleOf(report.fields, secrets, 200)}) that the mapping does not recognise as one: name the field in the mapping's "errorFields" (e.g. "errorFields": [${JSON.stringify(report.path)}]), or a status code whose success values are fixed in "successStatusFields" with "successStatusValues", so runs report the provider's own error. If it is not an error, set "articles" to where the list is (tried ${mapping.articles.join(', ')}). Response sample: ${sampleOf(body, secrets)}`,
    );
  }
  const articles: Article[] = [];
  const skipped: SkippedItem[] = [];
  let zonelessTimestamp: string | undefined;
  for (const [index, item] of items.entries()) {
    let result: ItemResult;
    try {
      result = mapItem(item, mapping, timeZone, secrets);
    } catch (error) {
      if (!(error instanceof ZonelessAtPath)) throw error;
      throw new ProviderTimeZoneError(
        `the provider sends timestamps without a time zone or offset (${quoted(error.value, secrets)} at ${error.path}, item ${index}) and no provider time zone is set, so alert times would be a guess: set NEWS_API_TIME_ZONE (cdk.json "newsApiTimeZone") to the provider's IANA time zone, e.g. "Asia/Seoul", or "UTC" if the provider documents UTC`,
      );
    }
    if ('article' in result) {
      if (articles.length === 0 && timeZone !== undefined && !carriesOffset(result.date.value)) {
        zonelessTimestamp = `${quoted(result.date.value, secrets)} at ${result.date.path}`;
      }
      articles.push(result.article);
    } else skipped.push({ index, reason: result.reason });
  }
  if (items.length > 0 && articles.length === 0) {
    const reasons = skipped
      .slice(0, 3)
      .map((s) => `item ${s.index}: ${s.reason}`)
      .join(' | ');
    const firstItem = sampleOf(items[0], secrets);
    if (options.unreadablePage === 'report') {
      const unreadable = sampleOf(
        `none of the ${items.length} items could be read: ${reasons}. First item: ${firstItem}`,
        secrets,
        600,
      );
      return { articles, skipped, totalCount, nextCursor, unreadable };
    }
    throw new ProviderResponseError(
      `none of the ${items.length} items on the page could be read, so the response mapping does not fit this provider: ${reasons}. First item: ${firstItem}`,
    );
  }
  return { articles, skipped, totalCount, nextCursor, ...(zonelessTimestamp ? { zonelessTimestamp } : {}) };
}
