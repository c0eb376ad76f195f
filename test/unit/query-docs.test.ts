/**
 * docs/queries.md is tested, not trusted: every example table is read from the page and checked
 * with the real code. A `Query | Matches | Does not match` row must parse, and the reference
 * evaluator (evaluateQuery) and both matchers (compileRules, naiveMatch, with every example rule
 * compiled together) must say yes to each article under Matches and no to each under Does not
 * match. Every `Query | Error` row must be refused with exactly that message; every query the
 * migration tables propose must parse; the limits table states QUERY_LIMITS; the YAML rules are
 * valid rules; the `rules explain` and caret samples are what the code prints.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { compileRules, naiveMatch } from '#core/matcher';
import { type Article, parseRule, type Rule } from '#core/model';
import { evaluateQuery, falseBecauseText, parseQuery, QUERY_LIMITS, QuerySyntaxError, queryAnchors } from '#core/query';
import { normalizeText } from '#core/text';
import { explainQuery, querySyntaxProblem } from '../../cli/rules-explain.ts';

const page = readFileSync(new URL('../../docs/queries.md', import.meta.url), 'utf8');
const lines = page.split('\n');

interface Table {
  readonly line: number;
  readonly head: readonly string[];
  readonly rows: readonly { readonly line: number; readonly cells: readonly string[] }[];
}

const cellsOf = (line: string): string[] =>
  line
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((cell) => cell.trim());

/** Every markdown table of the page outside code blocks. */
function tables(): Table[] {
  const found: Table[] = [];
  let fenced = false;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? '';
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced || !line.startsWith('|') || !/^\|[\s|:-]+\|$/.test(lines[index + 1] ?? '')) continue;
    const rows: Table['rows'][number][] = [];
    let at = index + 2;
    while ((lines[at] ?? '').startsWith('|')) {
      rows.push({ line: at + 1, cells: cellsOf(lines[at] ?? '') });
      at++;
    }
    found.push({ line: index + 1, head: cellsOf(line), rows });
    index = at - 1;
  }
  return found;
}

const tablesWith = (...head: string[]): Table[] =>
  tables().filter((table) => JSON.stringify(table.head) === JSON.stringify(head));

/** The code spans of a cell, unwrapped. */
const codeSpans = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? '');

/** The one code span a query cell holds. */
function queryOf(cell: string, where: string): string {
  const spans = codeSpans(cell);
  expect(spans, `${where}: one query in backticks`).toHaveLength(1);
  return spans[0] ?? '';
}

/** The articles of a cell: `<br>` between articles, `‖` between title and summary. */
const articlesOf = (cell: string): { title: string; summary: string }[] =>
  cell
    .split('<br>')
    .map((text) => text.trim())
    .filter((text) => text !== '')
    .map((text) => {
      const [title = '', summary = ''] = text.split('‖').map((part) => part.trim());
      return { title, summary };
    });

interface Example {
  readonly where: string;
  readonly query: string;
  readonly matches: readonly { title: string; summary: string }[];
  readonly misses: readonly { title: string; summary: string }[];
}

const examples: Example[] = tablesWith('Query', 'Matches', 'Does not match').flatMap((table) =>
  table.rows.map((row) => {
    const where = `docs/queries.md:${row.line}`;
    return {
      where,
      query: queryOf(row.cells[0] ?? '', where),
      matches: articlesOf(row.cells[1] ?? ''),
      misses: articlesOf(row.cells[2] ?? ''),
    };
  }),
);

const hangul = /[\uac00-\ud7a3]/;

describe('docs/queries.md examples', () => {
  it('has examples in English and in Korean, each with articles that match and that do not', () => {
    expect(examples.filter((example) => hangul.test(example.query)).length).toBeGreaterThanOrEqual(10);
    expect(examples.filter((example) => /^[\x20-\x7e]+$/.test(example.query)).length).toBeGreaterThanOrEqual(20);
    for (const example of examples) {
      expect(example.matches.length, `${example.where}: an article that matches`).toBeGreaterThan(0);
      expect(example.misses.length, `${example.where}: an article that does not`).toBeGreaterThan(0);
    }
  });

  it.each(examples.map((example) => [example.where, example] as const))(
    '%s: the reference evaluator agrees with the page',
    (_, example) => {
      const tree = parseQuery(example.query);
      const verdict = (article: { title: string; summary: string }) =>
        evaluateQuery(tree, { title: normalizeText(article.title), summary: normalizeText(article.summary) }) !==
        undefined;
      for (const article of example.matches)
        expect(verdict(article), `${example.query} on ${article.title}`).toBe(true);
      for (const article of example.misses)
        expect(verdict(article), `${example.query} on ${article.title}`).toBe(false);
    },
  );

  it('the indexed and the naive matcher agree with the page, with every example rule compiled together', () => {
    const rules: Rule[] = examples.map((example, index) => {
      const parsed = parseRule({
        ruleId: `example-${index}`,
        audienceId: `audience-${index}`,
        query: example.query,
        // A query that only excludes needs matchAll, as the page says.
        ...(queryAnchors(parseQuery(example.query)) === undefined ? { matchAll: true } : {}),
      });
      if (!parsed.ok) throw new Error(`${example.where}: ${parsed.rejected.reason}`);
      return parsed.value;
    });
    const matcher = compileRules(rules);
    let key = 0;
    const articleOf = ({ title, summary }: { title: string; summary: string }): Article => ({
      key: `id:${key++}`,
      title,
      summary,
      url: 'https://news.example.com/a',
      publishedAt: 0,
      categories: [],
      categoryNames: [],
    });
    for (const [index, example] of examples.entries()) {
      for (const [expected, articles] of [
        [true, example.matches],
        [false, example.misses],
      ] as const) {
        for (const text of articles) {
          const article = articleOf(text);
          const indexed = matcher.match(article).some((match) => match.audienceId === `audience-${index}`);
          const naive = naiveMatch(rules, article).some((match) => match.audienceId === `audience-${index}`);
          expect(indexed, `${example.where}: ${example.query} on ${text.title} (indexed)`).toBe(expected);
          expect(naive, `${example.where}: ${example.query} on ${text.title} (naive)`).toBe(expected);
        }
      }
    }
  });

  it('every query the page shows as an error is refused with exactly that message', () => {
    const rows = tablesWith('Query', 'Error').flatMap((table) => table.rows);
    expect(rows.length).toBeGreaterThanOrEqual(8);
    for (const row of rows) {
      const query = queryOf(row.cells[0] ?? '', `line ${row.line}`);
      const [message] = codeSpans(row.cells[1] ?? '');
      let error: unknown;
      try {
        parseQuery(query);
      } catch (caught) {
        error = caught;
      }
      expect(error, `docs/queries.md:${row.line}: ${query} is refused`).toBeInstanceOf(QuerySyntaxError);
      expect((error as Error).message, `docs/queries.md:${row.line}`).toBe(message);
    }
  });

  it('every form in the syntax table parses', () => {
    const [glance] = tablesWith('Form', 'Meaning');
    const forms = (glance?.rows ?? []).flatMap((row) => codeSpans(row.cells[0] ?? ''));
    expect(forms.length).toBeGreaterThan(10);
    for (const form of forms) expect(() => parseQuery(form), form).not.toThrow();
  });

  it('the migration tables propose queries that parse, and "the same" is the same text', () => {
    const rows = tablesWith('Elsewhere', 'news-alerts', 'Notes').flatMap((table) => table.rows);
    expect(rows.filter((row) => hangul.test(row.cells[1] ?? '')).length).toBeGreaterThanOrEqual(3);
    for (const row of rows) {
      const ours = codeSpans(row.cells[1] ?? '');
      for (const query of ours) expect(() => parseQuery(query), `docs/queries.md:${row.line}`).not.toThrow();
      if (row.cells[2] === 'the same') expect(codeSpans(row.cells[0] ?? '')[0], `line ${row.line}`).toBe(ours[0]);
    }
  });

  it('the limits table states the parser’s limits', () => {
    const [limits] = tablesWith('Limit', 'Value');
    const value = (name: string) => limits?.rows.find((row) => row.cells[0] === name)?.cells[1];
    expect(value('Length')).toBe(`${QUERY_LIMITS.length.toLocaleString('en-US')} characters`);
    expect(value('Nesting of parentheses and `NOT`')).toBe(`${QUERY_LIMITS.depth} levels`);
    expect(value('Terms and phrases')).toBe(String(QUERY_LIMITS.terms));
    expect(value('`NEAR/n`')).toBe(`\`n\` from 1 to ${QUERY_LIMITS.nearDistance}`);
  });

  it('the YAML rules are valid rules', () => {
    const blocks = [...page.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) {
      for (const item of (parseYaml(block) as { rules: unknown[] }).rules) {
        const parsed = parseRule(item);
        expect(parsed.ok ? 'valid' : parsed.rejected.reason).toBe('valid');
      }
    }
  });

  it('the rules explain sample is what explain prints for that query and title', () => {
    const command = /news-alerts rules explain --query '([^']+)' --title '([^']+)'/.exec(page);
    const [, query = '', title = ''] = command ?? [];
    const explained = explainQuery(query, parseQuery(query), { title, summary: '' });
    const sample = /```text\n(query {6}[\s\S]*?)```/.exec(page)?.[1] ?? '';
    expect(sample).toContain(`query      ${query}\n`);
    expect(sample).toContain(`canonical  ${explained.canonical}\n`);
    expect(sample).toContain(`anchors    ${explained.anchors?.join(', ')} (`);
    expect(sample).toContain(`article    matches; true because of ${explained.article?.terms.join(', ')}\n`);
    expect(sample).toContain(`tree:\n${explained.tree.map((line) => `  ${line}`).join('\n')}\n`);

    // The samples of why it does not match, for the texts the page names before each.
    const samples = [...page.matchAll(/```text\n(article {4}does not match: [^\n]*)\n```/g)].map((m) => m[1]);
    const texts = [
      { title: '메모리 수출', summary: '삼성전자 실적' },
      { title: '생산', summary: '' },
    ];
    expect(page).toContain(`\`--title '${texts[0]?.title}' --summary '${texts[0]?.summary}'\``);
    expect(page).toContain(`\`--title '${texts[1]?.title}'\``);
    expect(samples).toEqual(
      texts.map((text) => {
        const article = explainQuery(query, parseQuery(query), text).article;
        return `article    does not match: ${falseBecauseText(article?.because ?? [])}`;
      }),
    );
  });

  it('the caret sample is what the CLI prints for that query', () => {
    const sample = /```text\n(news-alerts: rules\.yaml[\s\S]*?)```/.exec(page)?.[1] ?? '';
    const [, problem = '', queryLine = ''] = sample.split('\n');
    const query = queryLine.trim();
    let error: QuerySyntaxError | undefined;
    try {
      parseQuery(query);
    } catch (caught) {
      error = caught as QuerySyntaxError;
    }
    if (error === undefined) throw new Error(`${query} parses`);
    const problemShown = querySyntaxProblem('rules.yaml:4: rule "chips": ', query, error, true);
    const shown = [problemShown.message, ...(problemShown.detail ?? [])].join('\n');
    expect(`${problem.replace(/^news-alerts: {3}/, '')}\n${sample.split('\n').slice(2, 4).join('\n')}`).toBe(shown);
  });
});
