/**
 * Properties of the query language on generated input: the canonical text parses back to the same
 * tree; no input makes the parser throw anything but QuerySyntaxError; the anchors are sound (an
 * article the query matches contains one of them) in Latin, Korean and Japanese text; and the
 * reference semantics agree with small independent oracles (boolean formulas of containsTerm, and
 * NEAR over space-separated words counted by index).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { naiveMatch } from '#core/matcher';
import { buildRuleSet } from '#core/model';
import {
  evaluateQuery,
  formatQuery,
  leafOccurrences,
  newTypedDashProblems,
  parseQuery,
  QUERY_LIMITS,
  type QueryField,
  type QueryLeaf,
  type QueryNode,
  QuerySyntaxError,
  queryAnchors,
  queryFalseBecause,
  queryLeaves,
  queryTermLabel,
  typedDashProblems,
  wordsBetween,
} from '#core/query';
import { containsTerm, normalizeText } from '#core/text';
import { article as articleOf } from '#test/fake-ports';

/** Terms in the three scripts, chosen to overlap and nest (`rate`/`rates`/`corporate`, `반도체`/`도체`). */
const TERMS = [
  'rate',
  'rates',
  'corporate',
  'interest',
  'ai',
  'AI',
  'ＡＩ',
  'said',
  'x-ray',
  '5g',
  'and',
  'or',
  '반도체',
  '도체',
  '수출',
  '금리',
  '삼성',
  '半導体',
  '導体',
  '輸出',
  'トヨタ',
  'ﾄﾖﾀ',
];
const PREFIXES = ['rat*', 'interes*', 'a*', '5*', 'semicond*', 'x*'];
const PHRASES = ['interest rate', 'rate hike', '반도체 수출', '半導体 輸出', 'ai 반도체', 'said ai'];
const FIELDS: readonly QueryField[] = ['any', 'any', 'title', 'summary'];

const term = (text: string, field: QueryField): QueryLeaf => {
  const prefix = text.endsWith('*');
  return { type: 'term', text, norm: normalizeText(prefix ? text.slice(0, -1) : text), prefix, field, column: 0 };
};
const phrase = (text: string, field: QueryField): QueryLeaf => ({
  type: 'phrase',
  text,
  norm: normalizeText(text),
  field,
  column: 0,
});

const leaf = (field: fc.Arbitrary<QueryField>): fc.Arbitrary<QueryLeaf> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.tuple(fc.constantFrom(...TERMS), field).map(([text, f]) => term(text, f)) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...PREFIXES), field).map(([text, f]) => term(text, f)) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...PHRASES), field).map(([text, f]) => phrase(text, f)) },
  );

/** Valid query trees: NEAR between leaves of compatible fields, within the depth and term limits. */
const queryTree: fc.Arbitrary<QueryNode> = fc
  .letrec<{ node: QueryNode }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      { weight: 3, arbitrary: leaf(fc.constantFrom(...FIELDS)) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(fc.constantFrom(...FIELDS), fc.integer({ min: 1, max: 6 }), fc.boolean(), fc.boolean())
          .chain(([field, distance, leftAny, rightAny]) =>
            fc
              .tuple(leaf(fc.constant(leftAny ? 'any' : field)), leaf(fc.constant(rightAny ? 'any' : field)))
              .map(([left, right]): QueryNode => ({ type: 'near', distance, left, right })),
          ),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.constantFrom('and' as const, 'or' as const), fc.array(tie('node'), { minLength: 2, maxLength: 3 }))
          .map(([type, children]): QueryNode => ({ type, children })),
      },
      // Canonical trees: the parser reads `NOT NOT x` as `x`, so no tree negates a negation.
      {
        weight: 1,
        arbitrary: tie('node').map((child): QueryNode => (child.type === 'not' ? child.child : { type: 'not', child })),
      },
    ),
  }))
  .node.filter((node) => depthOf(node) <= QUERY_LIMITS.depth && leafCount(node) <= QUERY_LIMITS.terms);

/** Nesting the canonical text needs: parentheses (where precedence requires them) and NOTs. */
function depthOf(node: QueryNode): number {
  const needsParens = (child: QueryNode): boolean =>
    (node.type === 'and' && (child.type === 'and' || child.type === 'or')) ||
    (node.type === 'or' && child.type === 'or') ||
    (node.type === 'not' && (child.type === 'and' || child.type === 'or' || child.type === 'near'));
  switch (node.type) {
    case 'term':
    case 'phrase':
    case 'near':
      return 0;
    case 'and':
    case 'or':
      return Math.max(...node.children.map((child) => depthOf(child) + (needsParens(child) ? 1 : 0)));
    case 'not':
      return 1 + depthOf(node.child) + (needsParens(node.child) ? 1 : 0);
  }
}

const leafCount = (node: QueryNode): number =>
  node.type === 'term' || node.type === 'phrase'
    ? 1
    : node.type === 'not'
      ? leafCount(node.child)
      : node.type === 'near'
        ? 2
        : node.children.reduce((sum, child) => sum + leafCount(child), 0);

/** A tree without columns, to compare trees parsed from different texts. */
function withoutColumns(node: QueryNode): unknown {
  switch (node.type) {
    case 'term':
    case 'phrase': {
      const { column: _column, ...rest } = node;
      return rest;
    }
    case 'and':
    case 'or':
      return { type: node.type, children: node.children.map(withoutColumns) };
    case 'not':
      return { type: 'not', child: withoutColumns(node.child) };
    case 'near':
      return { ...node, left: withoutColumns(node.left), right: withoutColumns(node.right) };
  }
}

/** Query text from pieces of the syntax, valid or not: what a person might type, and worse. */
const SYNTAX = [
  ...TERMS,
  ...PREFIXES,
  ...PHRASES.map((text) => `"${text}"`),
  'AND',
  'OR',
  'NOT',
  'NEAR/3',
  'NEAR/0',
  'NEAR',
  '(',
  ')',
  '-',
  '"',
  '*',
  'title:',
  'summary:',
  'body:',
  ':',
  '\u200B',
  '\u202E',
  '\uD800',
  '😀',
  // What Japanese, Chinese and Korean keyboards type, typographic quotes and control characters.
  '（',
  '）',
  '＂',
  'ＡＮＤ',
  'ＯＲ',
  'ＮＯＴ',
  'ＮＥＡＲ／３',
  'ｔｉｔｌｅ：',
  '：',
  '－',
  '＊',
  '“',
  '”',
  '\u0000',
  '\u001B',
];
const soup = fc
  .array(fc.tuple(fc.constantFrom(...SYNTAX), fc.constantFrom('', ' ', ' ', '  ', '\n')), { maxLength: 14 })
  .map((parts) => parts.map(([part, space]) => part + space).join(''));

/** Article text in the three scripts, from the same words the queries use plus filler. */
const WORDS = [
  ...TERMS,
  'semiconductor',
  'semicond',
  'interest rate',
  'rate hike',
  'hike',
  '반도체가',
  '수출을',
  '半導体の',
  'トヨタの',
  'the',
  'a',
  'x',
  ',',
  '—',
  '😀',
];
const SEPARATORS = [' ', ' ', ' ', '', '\n', '-', '.', '\u3000', '가', 'の'];
const fieldText = fc
  .array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...SEPARATORS)), { maxLength: 10 })
  .map((parts) => normalizeText(parts.map(([word, separator]) => word + separator).join('')));
const articleText = fc.record({ title: fieldText, summary: fieldText });

describe('query properties', () => {
  it('the canonical text of a tree parses back to the same tree, and prints the same again', () => {
    fc.assert(
      fc.property(queryTree, (tree) => {
        const text = formatQuery(tree);
        const reparsed = parseQuery(text);
        expect(withoutColumns(reparsed)).toEqual(withoutColumns(tree));
        expect(formatQuery(reparsed)).toBe(text);
      }),
      { numRuns: 400 },
    );
  });

  it('whatever parses, its canonical text parses back to the same tree', () => {
    fc.assert(
      fc.property(soup, (text) => {
        let tree: QueryNode;
        try {
          tree = parseQuery(text);
        } catch (error) {
          expect(error).toBeInstanceOf(QuerySyntaxError);
          return;
        }
        expect(withoutColumns(parseQuery(formatQuery(tree)))).toEqual(withoutColumns(tree));
      }),
      { numRuns: 1000 },
    );
  });

  it('throws nothing but QuerySyntaxError on any string, with a column inside the query or just past it', () => {
    const anyText = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({
        unit: fc.constantFrom('(', ')', '"', '-', '*', ':', ' ', 'a', 'N', 'O', 'T', '/', '5'),
        maxLength: 60,
      }),
      soup,
      // Long inputs: the work is linear in the length and recursion stops at the depth limit.
      fc
        .tuple(fc.constantFrom('(', 'NOT ', '-', 'a ', '"', 'a OR ', 'title:('), fc.integer({ min: 1, max: 1200 }))
        .map(([unit, count]) => unit.repeat(count)),
    );
    fc.assert(
      fc.property(anyText, (text) => {
        try {
          parseQuery(text);
        } catch (error) {
          expect(error).toBeInstanceOf(QuerySyntaxError);
          const { column } = error as QuerySyntaxError;
          expect(column).toBeGreaterThanOrEqual(1);
          expect(column).toBeLessThanOrEqual(Math.min(Array.from(text).length, QUERY_LIMITS.length) + 1);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('anchors are sound: an article the query matches contains at least one anchor, for any frequency', () => {
    const frequency = fc.func(fc.double({ min: 0, max: 10, noNaN: true }));
    fc.assert(
      fc.property(queryTree, articleText, frequency, (tree, text, rarity) => {
        const matched = evaluateQuery(tree, text);
        for (const anchors of [queryAnchors(tree), queryAnchors(tree, (node) => rarity(node.norm))]) {
          if (anchors === undefined || matched === undefined) continue;
          expect(anchors.some((anchor) => evaluateQuery(anchor, text) !== undefined)).toBe(true);
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('why a query is false: reasons exactly when it is false, each one line naming a term of the query, and true of the text', () => {
    const quoted = (label: string) => (label.includes('"') ? label : `"${label}"`);
    fc.assert(
      fc.property(queryTree, articleText, (tree, text) => {
        const because = queryFalseBecause(tree, text);
        expect(because.length > 0).toBe(evaluateQuery(tree, text) === undefined);
        const labels = queryLeaves(tree).map((leaf) => queryTermLabel(leaf));
        // What a reason says is absent is absent, and what it says is there is there.
        const occurs = new Map(
          queryLeaves(tree).map((leaf) => [quoted(queryTermLabel(leaf)), evaluateQuery(leaf, text) !== undefined]),
        );
        const listed = (list: string) => list.split(', ');
        for (const reason of because) {
          const absent = /^(.+) is not in the (title or summary|title|summary)$/.exec(reason)?.[1];
          const noneOf = /^none of (.+) is in the (title or summary|title|summary)$/.exec(reason)?.[1];
          const there = /excludes it: ([^()]+) (is|are) there$/.exec(reason)?.[1];
          for (const label of [...(absent ? [absent] : []), ...(noneOf ? listed(noneOf) : [])]) {
            expect(occurs.get(label), `${reason}: ${label}`).toBe(false);
          }
          for (const label of there ? listed(there) : []) expect(occurs.get(label), `${reason}: ${label}`).toBe(true);
          expect(reason).not.toContain('\n');
          // No empty list: `excludes it:  are there`.
          expect(reason).not.toMatch(/\s{2}|: (is|are) there/);
          expect(labels.some((label) => reason.includes(label))).toBe(true);
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('a query without NOT always has anchors, and one with anchors never matches an empty article', () => {
    const hasNot = (node: QueryNode): boolean =>
      node.type === 'not' || ((node.type === 'and' || node.type === 'or') && node.children.some(hasNot));
    fc.assert(
      fc.property(queryTree, (tree) => {
        const anchors = queryAnchors(tree);
        if (!hasNot(tree)) expect(anchors).toBeDefined();
        if (anchors !== undefined) expect(evaluateQuery(tree, { title: '', summary: '' })).toBeUndefined();
      }),
      { numRuns: 400 },
    );
  });

  it('AND/OR/NOT of terms is the boolean formula of containsTerm on title or summary (reasons: the true terms)', () => {
    const simpleTerm = fc.constantFrom(...TERMS).map((text) => term(text, 'any'));
    const simple: fc.Arbitrary<QueryNode> = fc.letrec<{ node: QueryNode }>((tie) => ({
      node: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        { weight: 3, arbitrary: simpleTerm },
        {
          weight: 2,
          arbitrary: fc
            .tuple(
              fc.constantFrom('and' as const, 'or' as const),
              fc.array(tie('node'), { minLength: 2, maxLength: 3 }),
            )
            .map(([type, children]): QueryNode => ({ type, children })),
        },
        { weight: 1, arbitrary: tie('node').map((child): QueryNode => ({ type: 'not', child })) },
      ),
    })).node;
    const oracle = (node: QueryNode, text: { title: string; summary: string }): boolean => {
      switch (node.type) {
        case 'term':
          return containsTerm(text.title, node.norm) || containsTerm(text.summary, node.norm);
        case 'and':
          return node.children.every((child) => oracle(child, text));
        case 'or':
          return node.children.some((child) => oracle(child, text));
        case 'not':
          return !oracle(node.child, text);
        default:
          throw new Error('not a simple shape');
      }
    };
    fc.assert(
      fc.property(simple, articleText, (tree, text) => {
        const result = evaluateQuery(tree, text);
        expect(result !== undefined).toBe(oracle(tree, text));
        for (const reason of result ?? []) {
          expect(reason.kind).toBe('keyword');
          const norm = normalizeText(reason.term);
          expect(containsTerm(text.title, norm) || containsTerm(text.summary, norm)).toBe(true);
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('NEAR/n over space-separated whole words is |i - j| - 1 <= n for two different positions', () => {
    const VOCABULARY = ['rate', 'hike', 'fed', 'bank', 'x'];
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...VOCABULARY), { maxLength: 12 }),
        fc.constantFrom(...VOCABULARY),
        fc.constantFrom(...VOCABULARY),
        fc.integer({ min: 1, max: 5 }),
        (words, left, right, distance) => {
          const positions = (word: string) => words.flatMap((w, index) => (w === word ? [index] : []));
          const expected = positions(left).some((i) =>
            positions(right).some((j) => i !== j && Math.abs(i - j) - 1 <= distance),
          );
          const query: QueryNode = { type: 'near', distance, left: term(left, 'any'), right: term(right, 'any') };
          expect(evaluateQuery(query, { title: words.join(' '), summary: '' }) !== undefined).toBe(expected);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('an exact term or phrase occurs exactly when containsTerm says so (the keyword rules)', () => {
    fc.assert(
      fc.property(leaf(fc.constant<QueryField>('any')), fieldText, (node, text) => {
        const occurs = leafOccurrences(text, node).length > 0;
        if (node.type === 'phrase' || !node.prefix) expect(occurs).toBe(containsTerm(text, node.norm));
        for (const [start, end] of leafOccurrences(text, node)) expect(text.slice(start, end)).toBe(node.norm);
      }),
      { numRuns: 1000 },
    );
  });

  it('wordsBetween counts the maximal letter/digit runs of the whole text that lie inside the gap', () => {
    const gap = fieldText.chain((text) => {
      const boundaries = [0];
      for (const char of text) boundaries.push((boundaries.at(-1) ?? 0) + char.length);
      return fc
        .tuple(fc.constantFrom(...boundaries), fc.constantFrom(...boundaries))
        .map(([a, b]) => [text, Math.min(a, b), Math.max(a, b)] as const);
    });
    fc.assert(
      fc.property(gap, ([text, start, end]) => {
        const runs = [...text.matchAll(/[\p{L}\p{M}\p{N}]+/gu)].map((match) => [
          match.index,
          match.index + match[0].length,
        ]);
        const inside = runs.filter(([runStart = 0, runEnd = 0]) => runStart >= start && runEnd <= end).length;
        expect(wordsBetween(text, start, end)).toBe(inside);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('typed dashes meant as NOT', () => {
  // What autocorrect, phone keyboards and copied documents put where `-` was typed.
  const dash = fc.constantFrom('\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212', '\uFE58');
  const word = fc.stringMatching(/^[a-z][a-z0-9]{0,7}$/).filter((text) => !['and', 'or', 'not'].includes(text));
  const operand = fc.oneof(
    word,
    word.map((text) => `"${text} rate"`),
    fc.tuple(word, word).map(([a, b]) => `(${a} OR ${b})`),
  );
  // Everything that starts a token: the start, a space, an opening parenthesis, a field scope.
  const before = fc.oneof(
    fc.constant(''),
    word.map((text) => `${text} `),
    word.map((text) => `${text} (`),
    word.map((text) => `${text} title:`),
  );
  const closing = (text: string) => (text.endsWith('(') ? ')' : '');

  /** The parsed query, leaving out each term's normalized form (NFKC folds some dashes). */
  const shape = (query: string) =>
    JSON.stringify(parseQuery(query), (key, value: unknown) => (key === 'norm' ? undefined : value));
  /** The query with each typed dash read as the letter ж would be: text, as before efe6409 (7f11c77). */
  const asLetter = (query: string, typed: string) => shape(query.replaceAll(typed, 'ж')).replaceAll('ж', typed);

  it('before a term, phrase or group, the run reads any of them as text, as stored rules had it', () => {
    fc.assert(
      fc.property(before, dash, operand, (head, typed, negated) => {
        const query = `${head}${typed}${negated}${closing(head)}`;
        expect(shape(query), query).toBe(asLetter(query, typed));
        const ruleSet = buildRuleSet(
          [{ ruleId: 'stored', audienceId: 'desk', query }],
          [{ audienceId: 'desk', topicArn: 'arn:aws:sns:us-east-1:123456789012:desk' }],
        );
        expect(ruleSet.rejected, query).toEqual([]);
        expect(ruleSet.rules.map((rule) => rule.ruleId)).toEqual(['stored']);
      }),
    );
  });

  it('a stored query with one keeps matching: the run neither skips the rule nor reads a NOT', () => {
    for (const typed of ['\u2013', '\u2014', '\u2212', '\u2010']) {
      const ruleSet = buildRuleSet(
        [
          { ruleId: 'ko', audienceId: 'desk', query: `반도체 ${typed}삼성` },
          { ruleId: 'en', audienceId: 'desk', query: `Seoul ${typed}Yonhap` },
          { ruleId: 'price', audienceId: 'desk', query: `x ${typed}$10` },
        ],
        [{ audienceId: 'desk', topicArn: 'arn:aws:sns:us-east-1:123456789012:desk' }],
      );
      expect(ruleSet.rejected).toEqual([]);
      const matched = (title: string) =>
        naiveMatch(ruleSet.rules, articleOf('1', { title, summary: '' })).flatMap((match) =>
          match.rules.map((rule) => rule.ruleId),
        );
      expect(matched(`반도체 ${typed}삼성 발표`)).toEqual(['ko']);
      expect(matched(`Seoul ${typed}Yonhap`)).toEqual(['en']);
      expect(matched(`x ${typed}$10`)).toEqual(['price']);
    }
  });

  it('before a term, phrase or group, typedDashProblems names any of them at its column with the ASCII form to write', () => {
    fc.assert(
      fc.property(before, dash, operand, (head, typed, negated) => {
        const query = `${head}${typed}${negated}${closing(head)}`;
        const found = typedDashProblems(query);
        expect(found, query).toHaveLength(1);
        const { column, message, text } = found[0] ?? { column: 0, message: '', text: '' };
        expect(column).toBe([...head].length + 1);
        expect(text).toBe(`${typed}${negated}`);
        expect(message).toContain(`(${typed}, U+`);
        expect(message).toContain(`is not NOT; write -`);
        expect(message).toContain('with an ASCII hyphen-minus for NOT');
        // The fix it names parses, as a NOT (before the field scope: `-title:a`).
        const scoped = head.endsWith('title:');
        const written = `-${scoped ? 'title:' : ''}${negated}`;
        expect(message).toContain(`write ${written} with`);
        const fixed = `${scoped ? head.slice(0, -'title:'.length) : head}${written}${closing(head)}`;
        expect(formatQuery(parseQuery(fixed))).toContain('NOT');
        // Refused only where the write adds it: the stored query's own is kept.
        expect(newTypedDashProblems(query, query)).toEqual([]);
        expect(newTypedDashProblems(`${query} chips`, query)).toEqual([]);
        expect(newTypedDashProblems(query, 'chips')).toHaveLength(1);
      }),
    );
  });

  it('before a figure (a number of any kind, a currency sign, or a point and a digit) none is named', () => {
    const figure = fc.constantFrom('10', '١٠', '½', '$10', '€5', '₩1000', '.5%');
    fc.assert(
      fc.property(dash, figure, fc.boolean(), (typed, tail, first) => {
        const query = first ? `${typed}${tail} x` : `x ${typed}${tail}`;
        expect(typedDashProblems(query), query).toEqual([]);
        expect(shape(query), query).toBe(asLetter(query, typed));
      }),
    );
  });

  it('inside a word, alone or at the end, a dash stays part of a term, as "-" does', () => {
    fc.assert(
      fc.property(word, dash, word, (a, typed, b) => {
        for (const query of [`${a}${typed}${b}`, `${a} ${typed} ${b}`, `${a} ${typed}`, `"${typed}${b}"`]) {
          expect(() => parseQuery(query), query).not.toThrow();
        }
      }),
    );
  });

  it('before a digit, any of them is a minus sign: the figure stays one term, as stored rules had it', () => {
    // `기온 −10도`, `日経平均 −1000円`, `temperature −30°C`: U+2212 is the usual minus in such figures.
    const unit = fc.constantFrom('', '도', '円', '°C', '%', 'bp');
    const digits = fc.oneof(fc.stringMatching(/^[0-9]{1,5}$/), fc.constantFrom('１０', '٣'));
    const context = fc.constantFrom('기온', '日経平均', 'temperature', 'chips');
    fc.assert(
      fc.property(context, dash, digits, unit, fc.boolean(), (head, typed, figure, suffix, first) => {
        const negative = `${typed}${figure}${suffix}`;
        const query = first ? `${negative} ${head}` : `${head} ${negative}`;
        const parsed = parseQuery(query);
        expect(formatQuery(parsed), query).not.toContain('NOT');
        expect(formatQuery(parsed), query).toContain(negative);
      }),
    );
  });
});

describe('the length limit', () => {
  it('counts characters (code points), as its documentation and the columns do, at any length', () => {
    // Latin, Hangul, an emoji and a mathematical letter: one and two UTF-16 units each.
    const character = fc.constantFrom('a', '반', '😀', '𝒜');
    const lengths = fc.oneof(
      fc.integer({ min: 1, max: QUERY_LIMITS.length + 5 }),
      fc.integer({ min: QUERY_LIMITS.length - 5, max: 4 * QUERY_LIMITS.length }),
    );
    fc.assert(
      fc.property(lengths, character, character, (length, first, rest) => {
        const query = first + rest.repeat(length - 1);
        if (length <= QUERY_LIMITS.length) {
          expect(() => parseQuery(query)).not.toThrow();
        } else {
          expect(() => parseQuery(query)).toThrow(
            `the query is ${length} characters long; at most ${QUERY_LIMITS.length} are allowed (column ${QUERY_LIMITS.length + 1} is over)`,
          );
        }
      }),
    );
  });
});

describe('prefix terms', () => {
  // What shows nothing yet passes for part of a word: variation selectors, combining marks, the
  // combining grapheme joiner, Mongolian free variation selectors.
  const invisible = fc.oneof(
    fc.integer({ min: 0xfe00, max: 0xfe0f }),
    fc.integer({ min: 0xe0100, max: 0xe01ef }),
    fc.integer({ min: 0x0300, max: 0x036f }),
    fc.constantFrom(0x034f, 0x180b, 0x180c, 0x180d),
  );
  const stem = fc.array(invisible, { minLength: 1, maxLength: 3 }).map((points) => String.fromCodePoint(...points));

  it('a prefix of no letter or digit is refused at its column; after a letter the same characters are no empty prefix', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('', 'chips ', '(chips OR '),
        stem,
        fc.constantFrom('*', '＊'),
        (head, marks, star) => {
          const close = head.startsWith('(') ? ')' : '';
          let error: unknown;
          try {
            parseQuery(`${head}${marks}${star}${close}`);
          } catch (caught) {
            error = caught;
          }
          expect(error).toBeInstanceOf(QuerySyntaxError);
          // At the term, or at its star when what precedes it is no part of a word at all.
          const { column, message } = error as QuerySyntaxError;
          expect([[...head].length + 1, [...head].length + [...marks].length + 1]).toContain(column);
          expect(message).toMatch(/has no letter or digit \(only U\+|is only allowed at the end of a word/);
          // With a letter first, the prefix is never refused as empty (a mark that is no part of a
          // word still puts the star after no word, as before).
          try {
            parseQuery(`${head}e${marks}${star}${close}`);
          } catch (caught) {
            expect((caught as Error).message).not.toContain('has no letter or digit');
          }
        },
      ),
    );
  });
});
