/**
 * `news-alerts rules explain <ruleId|--query '…'>`: what a rule's query means to the matcher. It
 * prints the query in canonical form, its parsed tree, the anchor terms the keyword index files the
 * rule under, and whether the rule needs `matchAll`; given an article (`--title`/`--summary` or
 * `--article-file`), it says whether the query is true for it and which terms made it so.
 *
 * Everything shown is the core's own verdict (`parseQuery`, `formatQuery`, `describeQueryTree`,
 * `queryAnchors`, `evaluateQuery`), so what explain says is what the run does. `--query` needs no
 * AWS: the target is only resolved when a rule is read from the table.
 *
 * It also owns how a query that does not parse is shown ({@link querySyntaxProblem}): the message
 * with its column, and under it the query with a caret at that column, aligned in terminal columns
 * (Hangul and CJK take two) and with anything a terminal could act on escaped first, so the caret
 * sits under the character the parser stopped at whatever the query holds.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import { queryLeafCost } from '#core/matcher';
import { type Article, DESCRIBED_ARTICLE_KEY, describeIssues, parseRule } from '#core/model';
import {
  describeQueryTree,
  evaluateQuery,
  falseBecauseText,
  formatQuery,
  operatorLookalikes,
  parseQuery,
  type QueryNode,
  QuerySyntaxError,
  queryAnchors,
  queryFalseBecause,
  type TermFrequency,
} from '#core/query';
import { normalizeText } from '#core/text';
import type { DeliveryExplanation } from '#core/workbench/explain';
import { cutArticleText, holdsMarkup } from '#provider/article-text';
import { action, collectList, nonEmptyOption } from './command.ts';
import type { CommandContext } from './context.ts';
import { NotFoundError, type Problem, UsageError } from './errors.ts';
import { newsAlerts } from './hints.ts';
import { getItem, type ItemTable } from './items.ts';
import { stderrLog } from './log.ts';
import { displayWidth, formatInstant, safeText } from './output.ts';
import { closestId, didYouMean, hinted } from './unknown-ids.ts';
import { inputName, readUtf8File } from './utf8.ts';
import { audienceTableOf } from './workbench/tables.ts';

// --- Showing a syntax error ---------------------------------------------------------------------

/** Display columns of query text kept before the caret; longer queries are cut with `...`. */
const CONTEXT_BEFORE = 48;
/** Display columns of query text kept after the caret. */
const CONTEXT_AFTER = 24;
// ASCII dots, not `…`: an ellipsis is "ambiguous width" and takes two columns on many CJK
// terminals, which would push the caret off its character.
const CUT = '...';

/**
 * The query around `column` (1-based, in code points as the parser counts) and a caret line under
 * it: two lines for a terminal, already escaped, with `indent` in front of both. The caret stands
 * under the first character at `column`, or just after the query when the parser ran out of input.
 */
export function caretLines(query: string, column: number, indent = '    '): [string, string] {
  const chars = Array.from(query);
  const index = Math.min(Math.max(column - 1, 0), chars.length);
  let before = safeText(chars.slice(0, index).join(''));
  let after = safeText(chars.slice(index).join(''));
  if (displayWidth(before) > CONTEXT_BEFORE)
    before =
      CUT +
      keepWidth([...before].reverse(), CONTEXT_BEFORE)
        .reverse()
        .join('');
  if (displayWidth(after) > CONTEXT_AFTER) after = keepWidth([...after], CONTEXT_AFTER).join('') + CUT;
  return [`${indent}${before}${after}`, `${indent}${' '.repeat(displayWidth(before))}^`];
}

/** The leading characters of `chars` that fit in `width` display columns. */
function keepWidth(chars: readonly string[], width: number): string[] {
  const kept: string[] = [];
  let used = 0;
  for (const char of chars) {
    used += displayWidth(char);
    if (used > width) break;
    kept.push(char);
  }
  return kept;
}

/** A problem with a query's column, for the `--json` failure document's `problems`. */
export interface QueryProblem extends Problem {
  /** 1-based column of the query the parser stopped at. */
  readonly column: number;
  /** What the parser expected there (`')'`, `a term`…). */
  readonly expected: string;
}

/**
 * A query that does not parse as one problem: `<where>: query: expected ')' at column 23`, and,
 * for people (`caret`), the query with a caret under that column on the next two lines.
 */
export function querySyntaxProblem(
  where: string,
  query: string,
  error: QuerySyntaxError,
  caret: boolean,
): QueryProblem {
  return {
    message: `${where}query: ${error.message}`,
    ...(caret ? { detail: caretLines(query, error.column) } : {}),
    column: error.column,
    expected: error.expected,
  };
}

// --- rules explain ----------------------------------------------------------------------------

/** What `rules explain --json` prints. */
export interface QueryExplanation {
  /** The rule the query was read from, when one was named. */
  readonly ruleId?: string;
  /** The query as written. */
  readonly query: string;
  /** The same query in canonical form (`formatQuery`): operators spelled out, groups explicit. */
  readonly canonical: string;
  /** The parsed tree, one node per line, indented by depth (`describeQueryTree`). */
  readonly tree: readonly string[];
  /** Terms the index files the query under (an article must contain one to be checked); null: none. */
  readonly anchors: readonly string[] | null;
  /**
   * True when the query gives the index nothing to file it under (NOT-only, `a OR NOT b`): as the
   * only criterion of a rule, the rule needs `matchAll` (or another positive criterion).
   */
  readonly needsMatchAll: boolean;
  /** The verdict on the given article, when one was given. */
  readonly article?: {
    readonly matches: boolean;
    readonly terms: readonly string[];
    /** When it does not match, why: each part of the query that failed (`queryFalseBecause`). */
    readonly because: readonly string[];
  };
}

/** The index's own anchor costs (functions/core/matcher.ts), so `explain` shows the anchors it uses. */
export const indexTermFrequency: TermFrequency = queryLeafCost;

/** The explanation of a parsed query (and its verdict on `text`, when given). */
export function explainQuery(
  query: string,
  tree: QueryNode,
  text?: { readonly title: string; readonly summary: string },
): QueryExplanation {
  const anchors = queryAnchors(tree, indexTermFrequency);
  const explanation: QueryExplanation = {
    query,
    canonical: formatQuery(tree),
    tree: describeQueryTree(tree),
    anchors: anchors === undefined ? null : anchors.map((node) => formatQuery(node)),
    needsMatchAll: anchors === undefined,
  };
  if (text === undefined) return explanation;
  const normalized = { title: normalizeText(text.title), summary: normalizeText(text.summary) };
  const reasons = evaluateQuery(tree, normalized);
  return {
    ...explanation,
    article: {
      matches: reasons !== undefined,
      terms: (reasons ?? []).map((r) => r.term),
      because: reasons === undefined ? queryFalseBecause(tree, normalized) : [],
    },
  };
}

interface ExplainOptions {
  query?: string;
  title?: string;
  summary?: string;
  articleFile?: string;
  article?: string;
  category?: string[];
  media?: string;
  status?: string;
  audience?: string;
  /** With --article only (default 2d): refused without it rather than ignored. */
  since?: string;
}

/** What `--article-file` holds: an article (as `articles show --json` or a provider prints it). */
const ArticleTextSchema = z.looseObject({
  title: z.string({ error: 'title must be a string' }).optional(),
  summary: z.string({ error: 'summary must be a string' }).optional(),
  categories: z.array(z.string(), { error: 'categories must be a list of strings' }).optional(),
  categoryNames: z.array(z.string(), { error: 'categoryNames must be a list of strings' }).optional(),
  media: z.string({ error: 'media must be a string' }).optional(),
  mediaName: z.string({ error: 'mediaName must be a string' }).optional(),
  status: z.string({ error: 'status must be a string' }).optional(),
  key: z.string({ error: 'key must be a string' }).optional(),
  /** As `articles show --json` prints it; the reading verdict depends on it. Absent: now. */
  publishedAt: z
    .union([z.string(), z.number()], { error: 'publishedAt must be a date-time (ISO 8601) or epoch milliseconds' })
    .optional(),
});

/** An article described on the command line or in a file (not looked up). */
type GivenArticle = z.infer<typeof ArticleTextSchema>;

/** What an article file may hold besides the text judged: the rest of what `articles show --json` prints. */
const articleFileFields = new Set([...Object.keys(ArticleTextSchema.shape), 'id', 'url', 'publishedAt']);

/**
 * The title and summary of a described article, taken as read text (what `articles show` prints,
 * what subscribers see): cut as the run cuts provider text, with a warning when that cut them,
 * and a warning when they hold HTML tags or entities, which the run would have decoded had the
 * provider sent them (the text is judged as written: decoding it again would make `the <marquee>
 * tag`, as `articles show` prints it, `the tag`).
 */
function asReadText(given: GivenArticle, where: string, warn: (text: string) => void): GivenArticle {
  const read = { ...given };
  for (const field of ['title', 'summary'] as const) {
    const text = given[field];
    if (text === undefined) continue;
    const name = where === '' ? `--${field}` : `${where}: ${field}`;
    read[field] = cutArticleText(text, field);
    if (read[field] !== text) {
      warn(
        `${name} is cut to ${field === 'title' ? '1,000' : '2,000'} characters, as the run cuts provider text; the article in the output shows what was judged`,
      );
    }
    if (holdsMarkup(text)) {
      warn(
        `${name} holds HTML tags or entities and is judged as written; the run decodes them in what the provider sends, so if this was copied from the provider's raw response, give the text as 'articles show' prints it`,
      );
    }
  }
  return read;
}

/** The article given with `--article-file` or the text flags; undefined when none was given. */
function givenArticle(options: ExplainOptions, warn: (text: string) => void): GivenArticle | undefined {
  const flags =
    options.title !== undefined ||
    options.summary !== undefined ||
    options.category !== undefined ||
    options.media !== undefined ||
    options.status !== undefined;
  if (options.article !== undefined && (flags || options.articleFile !== undefined)) {
    throw new UsageError(
      'give --article <key>, --article-file, or --title/--summary/--category/--media/--status: one way',
    );
  }
  if (options.articleFile !== undefined) {
    if (flags) throw new UsageError('give either --article-file or --title/--summary, not both');
    const text = readUtf8File(options.articleFile);
    const path = inputName(options.articleFile);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`cannot read ${path} as JSON: ${(error as Error).message}`, [], { cause: error });
    }
    const parsed = ArticleTextSchema.safeParse(value);
    if (!parsed.success) {
      throw new UsageError(`${path}: not an article: ${describeIssues(parsed.error)}`, [], { cause: parsed.error });
    }
    if (parsed.data.title === undefined && parsed.data.summary === undefined) {
      throw new UsageError(`${path}: the article has neither "title" nor "summary"; give an object with them`);
    }
    const ignored = Object.keys(parsed.data).filter((field) => !articleFileFields.has(field));
    if (ignored.length > 0) {
      const named = ignored.map((field) => {
        const near = closestId(field, articleFileFields);
        return near === undefined ? safeText(field) : `${safeText(field)} (did you mean ${near}?)`;
      });
      warn(`${path}: ignored ${named.join(', ')}: explain reads ${[...ArticleTextSchema.keyof().options].join(', ')}`);
    }
    return asReadText(parsed.data, path, warn);
  }
  if (!flags) return undefined;
  return asReadText(
    {
      title: options.title ?? '',
      summary: options.summary ?? '',
      ...(options.category === undefined ? {} : { categories: options.category }),
      ...(options.media === undefined ? {} : { media: options.media }),
      ...(options.status === undefined ? {} : { status: options.status }),
    },
    '',
    warn,
  );
}

/** A described article as the matcher sees one (published now, key `given:article`). */
function articleOf(given: GivenArticle, now: number): Article {
  // The file's own time, when it has one: whether a run reads the article depends on it.
  const published = typeof given.publishedAt === 'string' ? Date.parse(given.publishedAt) : (given.publishedAt ?? now);
  // A number past what a Date holds (1e300) is no time either: every instant printed would throw.
  if (!Number.isFinite(new Date(published).getTime())) {
    throw new UsageError(
      `--article-file: publishedAt ${safeText(JSON.stringify(given.publishedAt))} is not a date-time; give ISO 8601 (2026-11-30T12:00:00Z) or epoch milliseconds, as 'articles show --json' prints it`,
    );
  }
  return {
    key: given.key ?? DESCRIBED_ARTICLE_KEY,
    title: given.title ?? '',
    summary: given.summary ?? '',
    url: '',
    publishedAt: published,
    categories: given.categories ?? [],
    categoryNames: given.categoryNames ?? [],
    media: given.media,
    mediaName: given.mediaName,
    status: given.status,
  };
}

/** Parses a query, or refuses it as a usage error showing the column (and a caret, for people). */
function parseOrRefuse(context: CommandContext, query: string, where: string): QueryNode {
  try {
    const parsed = parseQuery(query);
    // Why it may not match: a word that looks like an operator is one more word the text must hold.
    for (const { message } of operatorLookalikes(query))
      context.output.warn(`${where === '--query' ? where : `${where}: query`}: ${message}`);
    return parsed;
  } catch (error) {
    if (!(error instanceof QuerySyntaxError)) throw error;
    throw new UsageError(
      `${where}: the query does not parse`,
      [querySyntaxProblem('', query, error, !context.output.json)],
      {
        cause: error,
      },
    );
  }
}

async function explain(
  context: CommandContext,
  args: readonly unknown[],
  options: ExplainOptions,
  rulesTable: (context: CommandContext) => Promise<ItemTable>,
): Promise<void> {
  const [ruleId] = args as [string | undefined];
  if ((ruleId === undefined) === (options.query === undefined)) {
    throw new UsageError("give a rule id or --query '…' (one of them)");
  }
  const given = givenArticle(options, (text) => context.output.warn(text));
  if (options.since !== undefined && options.article === undefined) {
    throw new UsageError('--since is where --article <key> is looked for: add --article, or leave --since out');
  }
  if (ruleId === undefined) {
    if (options.article !== undefined || options.audience !== undefined) {
      throw new UsageError('--article and --audience explain a stored rule: give its id instead of --query');
    }
    const query = options.query ?? '';
    const text = given === undefined ? undefined : { title: given.title ?? '', summary: given.summary ?? '' };
    printQueryExplanation(context, undefined, explainQuery(query, parseOrRefuse(context, query, '--query'), text));
    return;
  }
  const target = await context.target();
  const item = await getItem(target.clients.documents, await rulesTable(context), ruleId);
  if (item === undefined) {
    throw new NotFoundError(
      `rule ${ruleId} does not exist${hinted(await didYouMean(target, 'rule', [ruleId]), `${newsAlerts()} rules list`)}`,
    );
  }
  if (given === undefined && options.article === undefined) {
    if (item.query !== undefined && typeof item.query !== 'string') {
      // Saved by hand with another type: the rule is invalid, which "has no query" would hide.
      const parsed = parseRule(item);
      throw new UsageError(
        `rule ${ruleId} is invalid, so the run skips it: ${parsed.ok ? 'query must be a string' : parsed.rejected.reason}; fix it with '${newsAlerts()} rules update ${ruleId} --query …' (or --clear query)`,
      );
    }
    if (typeof item.query !== 'string') {
      throw new UsageError(
        `rule ${ruleId} has no query to explain on its own; give an article to judge every criterion on (--article <key>, found with '${newsAlerts()} articles search', or --title/--summary/--category/--media/--status); '${newsAlerts()} rules show ${ruleId}' shows its criteria`,
      );
    }
    printQueryExplanation(
      context,
      ruleId,
      explainQuery(item.query, parseOrRefuse(context, item.query, `rule ${ruleId}`)),
    );
    return;
  }
  // Judging a stored rule reads the provider, the ledger and the story index: loaded here, so
  // every other rules command starts without them (bench: CLI start-up, a local command).
  const [{ articleJson, findArticle, maxSearchDays }, { explainOnArticle, ruleOf }] = await Promise.all([
    import('./workbench/articles.ts'),
    import('./workbench/explain.ts'),
  ]);
  const rule = ruleOf(item, ruleId);
  // An audience asked for by name must exist; the rule's own may be missing (the rule is still judged).
  if (
    options.audience !== undefined &&
    (await getItem(target.clients.documents, audienceTableOf(target), options.audience)) === undefined
  ) {
    throw new NotFoundError(
      `--audience: audience ${options.audience} does not exist in ${target.label}${hinted(await didYouMean(target, 'audience', [options.audience]), `${newsAlerts()} audiences list`)}`,
    );
  }
  const now = Date.now();
  const log = stderrLog(context.output);
  let article: Article;
  if (options.article !== undefined) {
    const found = await findArticle(target, options.article, { since: options.since ?? '2d' }, now, log);
    if (found.article === undefined) {
      throw new NotFoundError(
        `no article ${options.article} among those the provider lists for ${formatInstant(found.window.since)} .. ${formatInstant(found.window.until)}; widen --since (at most ${maxSearchDays} days) or find it with '${newsAlerts()} articles search'`,
      );
    }
    article = found.article;
  } else {
    article = articleOf(given ?? {}, now);
  }
  const explained = await explainOnArticle(target, rule, article, now, log, options.audience);
  const query =
    typeof item.query === 'string'
      ? explainQuery(item.query, parseOrRefuse(context, item.query, `rule ${ruleId}`), article)
      : undefined;
  const document = {
    ruleId,
    ...(query ?? {}),
    article: { ...articleJson(article), ...(query?.article ?? {}) },
    matches: explained.rule.matches,
    summary: explained.rule.summary,
    criteria: explained.rule.criteria,
    delivery: explained.delivery ?? null,
    ...(explained.audienceProblem === undefined ? {} : { audienceProblem: explained.audienceProblem }),
  };
  context.output.result(document, () => {
    context.output.fields([
      ['rule', `${ruleId} (audience ${rule.audienceId})`],
      ['article', `${article.key}: ${article.title}`],
      ['verdict', explained.rule.summary],
    ]);
    context.output.table(
      ['CRITERION', 'VERDICT', 'WHY'],
      explained.rule.criteria.map((criterion) => [criterion.criterion, criterion.verdict, criterion.why]),
    );
    const { delivery } = explained;
    if (delivery === undefined) {
      context.output.line(`delivery: not judged (${explained.audienceProblem ?? 'no audience'})`);
      return;
    }
    context.output.line(
      `delivery to ${delivery.audienceId}${explained.rule.matches ? '' : ' (if it matched)'}: ${deliveryVerdictText(delivery)}`,
    );
    for (const step of delivery.steps) context.output.line(`  ${step.step}: ${step.why}`);
  });
}

/** `send now`, `hold (quiet-hours) until …`, `collapse into …`. */
export function deliveryVerdictText(delivery: DeliveryExplanation): string {
  switch (delivery.outcome) {
    case 'send':
      return 'sent at once';
    case 'hold':
      return `held (${delivery.reason}) until ${delivery.releaseAt === undefined ? '?' : formatInstant(delivery.releaseAt)}`;
    case 'collapse':
      return `collapsed into ${delivery.collapsedInto}`;
    case 'already':
      return 'already handled (in the ledger)';
    case 'unread':
      return 'not sent: no scheduled run reads it (a replay does)';
    default:
      return 'skipped (audience disabled)';
  }
}

function printQueryExplanation(
  context: CommandContext,
  ruleId: string | undefined,
  explanation: QueryExplanation,
): void {
  const result = ruleId === undefined ? explanation : { ruleId, ...explanation };
  context.output.result(result, () => {
    const { anchors, article } = explanation;
    context.output.fields([
      ...(ruleId === undefined ? [] : [['rule', ruleId] as const]),
      ['query', explanation.query],
      ['canonical', explanation.canonical],
      [
        'anchors',
        anchors === null
          ? 'none: nothing the query requires can be looked up (NOT-only, or OR with a NOT branch)'
          : `${anchors.join(', ')} (checked only on articles with ${anchors.length === 1 ? 'this term' : 'one of these'})`,
      ],
      [
        'matchAll',
        explanation.needsMatchAll
          ? 'needed: as its only criterion, a rule with this query must set matchAll (or add categories, keywords, media or statuses)'
          : 'not needed',
      ],
      ...(article === undefined
        ? []
        : [
            [
              'article',
              !article.matches
                ? `does not match: ${falseBecauseText(article.because)}`
                : article.terms.length > 0
                  ? `matches; true because of ${article.terms.join(', ')}`
                  : // A query of exclusions only (`NOT rumor`) is true for what is not there, as the stored-rule path says.
                    'matches; true (nothing it excludes is there)',
            ] as const,
          ]),
    ]);
    context.output.line('tree:');
    for (const line of explanation.tree) context.output.line(`  ${line}`);
  });
}

/** Registers `rules explain` under the `rules` command; `rulesTable` names the table a rule id is read from. */
export function registerExplain(rules: Command, rulesTable: (context: CommandContext) => Promise<ItemTable>): void {
  rules
    .command('explain')
    .description(
      'why a rule does or does not match an article (every criterion), and what delivery would do with it; or how a query is parsed',
    )
    .argument('[ruleId]', "the stored rule to explain (read from the table, like 'rules show')")
    .option('--query <query>', 'explain this query instead (no AWS needed)')
    .option('--title <text>', 'judge the rule (or --query) on an article with this title')
    .option('--summary <text>', 'judge the rule (or --query) on an article with this summary')
    .option(
      '--article-file <file>',
      'judge the article in this JSON file ("-": stdin; as articles show --json prints it)',
    )
    .option(
      '--article <key>',
      "judge this recent article (its key or provider id; see 'articles search')",
      nonEmptyOption,
    )
    .option('--category <code>', 'the described article carries this category (repeatable)', collectList)
    .option('--media <code>', 'the described article comes from this media code', nonEmptyOption)
    .option('--status <status>', 'the described article has this status', nonEmptyOption)
    .option('--audience <audienceId>', "judge the delivery for this audience (default: the rule's)", nonEmptyOption)
    .option('--since <when>', 'where --article is looked for: span back, provider date or date-time (default 2d)')
    .addHelpText(
      'after',
      `
Queries: terms, "exact phrases", AND, OR, NOT (or -term), parentheses, a NEAR/5 b (within 5 words;
within 5 characters for Chinese and Japanese), prefix* (Latin), title: and summary:. Adjacent terms
are ANDed. Case-insensitive; Latin terms match whole words, Korean, Japanese and Chinese substrings.
The syntax with tested examples: docs/queries.md.

Examples:
  news-alerts rules explain --query '(semiconductor OR chip*) AND export -rumor'
  news-alerts rules explain --query '(반도체 OR 메모리) AND 수출 NOT 삼성' --title '반도체 수출 역대 최대'
  news-alerts rules explain --query '"interest rate" NEAR/5 hike' --json
  news-alerts rules explain chips-exports --article-file article.json
  news-alerts rules explain world-elections --article id:a-1042          # every criterion, then the delivery
  news-alerts rules explain quakes --title 'M6.1 earthquake' --category 003002000 --json

With a stored rule and an article, every criterion (enabled, categories, excludeCategories,
keywords, excludeKeywords, media, statuses, query, matchAll) is judged: pass, fail or unset, and
why. Then the delivery the rule's audience (or --audience) would give it: already in the ledger,
story collapse, quiet hours, digest or daily budget, with the release time of a hold. --article
re-reads the provider for the --since window (at most 7 days).

예시 (한국어):
  news-alerts rules explain --query 'title:(금리 OR 기준금리) -"금리 동결"'
  news-alerts rules explain --query '환율 NEAR/3 급등' --summary '원달러 환율이 하루 만에 급등했다'`,
    )
    .action(action<ExplainOptions>((context, args, options) => explain(context, args, options, rulesTable)));
}
