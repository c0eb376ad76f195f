/**
 * The rule and audience schemas ops items are validated with, the one-line issue format that ends
 * up in logs and the CLI, and how buildRuleSet keeps good items running when others are bad.
 */
import { describe, expect, it } from 'vitest';
import {
  AudienceSchema,
  audienceAttributes,
  buildRuleSet,
  describeIssues,
  parseAudience,
  parseRule,
  type RejectedItem,
  RULE_LIMITS,
  RuleSchema,
  ruleAttributes,
} from '#core/model';

const topicArn = 'arn:aws:sns:eu-central-1:123456789012:news-desk';

/** The one-line reason a schema gives for `item`, or undefined when the item is valid. */
function ruleProblem(item: Record<string, unknown>): string | undefined {
  const result = RuleSchema.safeParse({ ruleId: 'r1', audienceId: 'desk', ...item });
  return result.success ? undefined : describeIssues(result.error, ruleAttributes);
}

function audienceProblem(item: Record<string, unknown>): string | undefined {
  const result = AudienceSchema.safeParse({ audienceId: 'desk', topicArn, ...item });
  return result.success ? undefined : describeIssues(result.error, audienceAttributes, AudienceSchema);
}

describe('RuleSchema', () => {
  // A reviewer's hand-written values all got the same message, which never said what it found.
  it.each([
    ['Balanced', '"Balanced"'],
    [' balanced ', '" balanced "'],
    ['', '""'],
    [true, 'the boolean true'],
    [1, 'the number 1'],
    [['fewer'], 'a list'],
    [{ preset: 'fewer' }, 'a map'],
    ['x'.repeat(100), `"${'x'.repeat(40)}"…`],
  ])('names the spikes value it refuses (%j)', (spikes, shown) => {
    expect(ruleProblem({ keywords: ['rates'], spikes })).toContain(
      `spikes must be "off", "fewer", "balanced" or "more" (see docs/spikes.md); got ${shown}`,
    );
  });

  it('applies the defaults: enabled, not urgent, no matchAll', () => {
    expect(RuleSchema.parse({ ruleId: 'r1', audienceId: 'desk', keywords: ['rates'] })).toEqual({
      ruleId: 'r1',
      audienceId: 'desk',
      keywords: ['rates'],
      enabled: true,
      urgent: false,
      matchAll: false,
    });
  });

  it('accepts every documented attribute', () => {
    const rule = {
      ruleId: 'economy.rates_v2:main',
      audienceId: 'desk-1',
      enabled: false,
      description: 'Rates',
      categories: ['002*', 'Economy'],
      excludeCategories: ['002003000'],
      keywords: ['interest rate'],
      excludeKeywords: ['sponsored'],
      media: ['01100101'],
      statuses: ['published'],
      urgent: true,
      matchAll: false,
      updatedAt: '2025-03-01T09:00:00Z',
      updatedBy: 'alice',
      version: 4,
      notes: 'asked for by the markets desk',
    };
    expect(RuleSchema.parse(rule)).toEqual(rule);
  });

  it('takes list attributes as a DynamoDB list (array) or string set (Set), trimming each term', () => {
    const fromSet = RuleSchema.parse({ ruleId: 'r1', audienceId: 'desk', keywords: new Set(['rates', ' inflation ']) });
    expect(fromSet.keywords).toEqual(['rates', 'inflation']);
    const fromList = RuleSchema.parse({
      ruleId: 'r1',
      audienceId: 'desk',
      categories: ['002*'],
      media: new Set(['x']),
    });
    expect(fromList.categories).toEqual(['002*']);
    expect(fromList.media).toEqual(['x']);
  });

  it('rejects a list attribute that is not a list or string set of strings', () => {
    expect(ruleProblem({ keywords: 'rates' })).toBe('keywords must be a list (L) or string set (SS) of strings');
    expect(ruleProblem({ keywords: new Set([1, 2]) })).toMatch(/^keywords\[0\]: must be text, not a number/);
    expect(ruleProblem({ categories: ['002*', 7] })).toMatch(/^categories\[1\]: must be text, not a number/);
  });

  it('rejects empty, whitespace-only and over-long terms, and over-long lists', () => {
    expect(ruleProblem({ keywords: ['rates', '   '] })).toBe('keywords[1]: must not be empty');
    expect(ruleProblem({ keywords: ['x'.repeat(201)] })).toBe(
      'keywords[0]: must be at most 200 characters; shorten it',
    );
    expect(ruleProblem({ keywords: ['x'.repeat(200)] })).toBeUndefined();
    expect(ruleProblem({ keywords: Array.from({ length: 501 }, (_, i) => `k${i}`) })).toMatch(/^keywords\b/);
    expect(ruleProblem({ keywords: Array.from({ length: 500 }, (_, i) => `k${i}`) })).toBeUndefined();
  });

  // Issue 10, item 11: 10,000 keywords were reported as "must be a list (L) or string set (SS)".
  it('names the 500-entry limit (not the type) for a list that is too long, in one line', () => {
    const keywords = Array.from({ length: 10_000 }, (_, i) => `k${i}`);
    expect(ruleProblem({ keywords })).toBe(
      'keywords: has 10000 entries; at most 500 are allowed: split them over several rules',
    );
    expect(ruleProblem({ excludeCategories: new Set(keywords) })).toMatch(/^excludeCategories: has 10000 entries/);
    expect(ruleProblem({ keywords: 'rates' })).toBe('keywords must be a list (L) or string set (SS) of strings');
  });

  // Issue 10, item 12: a keyword of zero-width spaces was accepted and matched.
  it('refuses terms with no visible character (zero-width, format, filler characters) and bidi overrides', () => {
    const invisible = [
      '\u200B',
      '\u200B\u200B\u200B',
      '\u200C\u200D',
      '\u2060',
      '\u00AD',
      '\u3164',
      '\u2800',
      '\u0301',
    ];
    for (const value of invisible) {
      for (const field of ['keywords', 'excludeKeywords', 'categories', 'excludeCategories', 'media', 'statuses']) {
        expect(
          ruleProblem({ keywords: ['rates'], [field]: ['ok', value] }),
          `${field} ${JSON.stringify(value)}`,
        ).toMatch(new RegExp(`^${field}\\[1\\]: has no visible character \\(only U\\+`));
      }
    }
    expect(ruleProblem({ keywords: ['\u200B\u200B'] })).toBe(
      'keywords[0]: has no visible character (only U+200B), so it would match text no reader can see; remove it or type the word',
    );
    // The BOM counts as white space for trim(): refused as empty.
    expect(ruleProblem({ keywords: ['\uFEFF'] })).toBe('keywords[0]: must not be empty');
    expect(ruleProblem({ keywords: ['\u202Eetar'] })).toMatch(
      /^keywords\[0\]: contains a bidirectional control character \(U\+202E\)/,
    );
    expect(ruleProblem({ keywords: ['\uD800'] })).toMatch(/^keywords\[0\]: is not valid Unicode text/);
    expect(ruleProblem({ categories: ['\u200B*'] })).toMatch(
      /^categories\[0\]: the prefix before '\*' has no visible character/,
    );
    // Visible text with joiners (Persian ZWNJ, emoji ZWJ sequences), a lone '*' and CJK stay valid.
    for (const value of ['می\u200Cخواهم', '👩\u200D💻', '반도체', 'é', 'ＡＩ']) {
      expect(ruleProblem({ keywords: [value] }), value).toBeUndefined();
    }
    expect(ruleProblem({ categories: ['*'] })).toBeUndefined();
  });

  it('checks ruleId and audienceId: a string of 1-128 letters, digits, . _ : - starting with a letter or digit', () => {
    const idProblem = (item: Record<string, unknown>) => ruleProblem({ keywords: ['rates'], ...item });
    expect(idProblem({ ruleId: 'a'.repeat(128) })).toBeUndefined();
    expect(idProblem({ ruleId: 'a'.repeat(129) })).toMatch(/^ruleId must be 1-128 characters/);
    expect(idProblem({ ruleId: 'has space' })).toMatch(/^ruleId must be 1-128 characters/);
    expect(idProblem({ ruleId: '-leading-dash' })).toMatch(/^ruleId\b/);
    expect(idProblem({ ruleId: '' })).toMatch(/^ruleId\b/);
    expect(idProblem({ ruleId: 42 })).toMatch(/^ruleId must be a string/);
    expect(idProblem({ audienceId: 'a|b' })).toMatch(/^audienceId must be 1-128 characters/);
    expect(idProblem({ audienceId: undefined })).toMatch(/^audienceId is required/);
  });

  it('rejects an unknown attribute and names it', () => {
    expect(ruleProblem({ keywords: ['rates'], keyword: ['typo'] })).toBe(
      'unknown attribute "keyword" (did you mean "keywords"?)',
    );
    expect(ruleProblem({ keywords: ['rates'], excludeKeyword: ['x'] })).toBe(
      'unknown attribute "excludeKeyword" (did you mean "excludeKeywords"?)',
    );
    expect(ruleProblem({ keywords: ['rates'], colour: 'red' })).toMatch(
      /^unknown attribute "colour"; allowed: ruleId, audienceId, enabled, /,
    );
    expect(ruleProblem({ keywords: ['rates'], Enabled: true })).toContain('"Enabled"');
  });

  it('names the expected type when a boolean is saved as something else', () => {
    expect(ruleProblem({ keywords: ['rates'], enabled: 'yes' })).toBe('enabled must be a boolean (BOOL)');
    expect(ruleProblem({ keywords: ['rates'], urgent: 1 })).toBe('urgent must be a boolean (BOOL)');
    expect(ruleProblem({ matchAll: 'true' })).toMatch(/^matchAll must be a boolean \(BOOL\)/);
  });

  it('requires a positive criterion or matchAll, so an empty rule never floods anyone', () => {
    const reason = /^categories: the rule has no categories, keywords, media or statuses.*set matchAll to true$/;
    expect(ruleProblem({})).toMatch(reason);
    expect(ruleProblem({ categories: [], keywords: new Set() })).toMatch(reason);
    expect(ruleProblem({ excludeCategories: ['sports'], excludeKeywords: ['x'] })).toMatch(reason);
    expect(ruleProblem({ matchAll: true })).toBeUndefined();
    for (const criterion of ['categories', 'keywords', 'media', 'statuses']) {
      expect(ruleProblem({ [criterion]: ['x'] })).toBeUndefined();
    }
    expect(ruleProblem({ query: 'x' })).toBeUndefined();
  });

  it('takes a query: valid ones pass as written, a bad one is refused with its column and what was expected', () => {
    expect(
      RuleSchema.parse({ ruleId: 'r1', audienceId: 'desk', query: ' (반도체 OR 메모리) AND 수출 -삼성' }).query,
    ).toBe(' (반도체 OR 메모리) AND 수출 -삼성');
    expect(ruleProblem({ query: '(반도체 OR 메모리 AND 수출' })).toBe(
      "query: expected ')' at column 19 to close the '(' at column 1",
    );
    expect(ruleProblem({ keywords: ['x'], query: 'OR rates' })).toBe(
      "query: unexpected 'OR' at column 1: a query cannot start with an operator",
    );
    expect(ruleProblem({ keywords: ['x'], query: 'body:rates' })).toMatch(
      /^query: unknown field 'body:' at column 1 \(did you mean title: or summary:\?\)/,
    );
    expect(ruleProblem({ keywords: ['x'], query: 'x\u202Ey' })).toMatch(
      /^query: a bidirectional control character \(U\+202E\) at column 2/,
    );
    expect(ruleProblem({ keywords: ['x'], query: 'a\uD800' })).toMatch(/^query: not valid Unicode text at column 2/);
    expect(ruleProblem({ keywords: ['x'], query: 7 })).toBe('query must be a string');
    expect(ruleAttributes).toContain('query');
  });

  it('states the query limits in RULE_LIMITS and enforces them', () => {
    expect(RULE_LIMITS).toMatchObject({ queryLength: 1000, queryDepth: 8, queryTerms: 50 });
    const terms = (count: number) => Array.from({ length: count }, (_, i) => `t${i}`).join(' ');
    expect(ruleProblem({ query: terms(RULE_LIMITS.queryTerms) })).toBeUndefined();
    expect(ruleProblem({ query: terms(RULE_LIMITS.queryTerms + 1) })).toMatch(
      /^query: the query has more than 50 terms/,
    );
    expect(ruleProblem({ query: `${'('.repeat(8)}a${')'.repeat(8)}` })).toBeUndefined();
    expect(ruleProblem({ query: `${'('.repeat(9)}a${')'.repeat(9)}` })).toMatch(/^query: the query nests more than 8/);
    // Code points, not UTF-16 units: 1000 emoji are 2000 units and still within the limit.
    expect(ruleProblem({ query: '😀'.repeat(RULE_LIMITS.queryLength) })).toBeUndefined();
    expect(ruleProblem({ query: 'a'.repeat(RULE_LIMITS.queryLength + 1) })).toMatch(
      /^query: the query is 1001 characters long; at most 1000/,
    );
  });

  it('counts a query with a required term as a positive criterion; one that only excludes needs matchAll', () => {
    expect(ruleProblem({ query: 'samsung semicond*' })).toBeUndefined();
    expect(ruleProblem({ query: '"interest rate" OR 금리' })).toBeUndefined();
    const onlyExcludes = /^query: the query has no term every match must contain .*set matchAll to true$/;
    for (const query of ['NOT sports', '-sports', 'a OR NOT b', '-(a b)']) {
      expect(ruleProblem({ query }), query).toMatch(onlyExcludes);
      expect(ruleProblem({ query, matchAll: true }), query).toBeUndefined();
      expect(ruleProblem({ query, categories: ['002*'] }), query).toBeUndefined();
    }
    // A query that does not parse gets its syntax error, not also the criterion message.
    expect(ruleProblem({ query: '(a' })).toBe("query: expected ')' at column 3 to close the '(' at column 1");
  });

  it("allows '*' only at the end of a category", () => {
    expect(ruleProblem({ categories: ['002*', '002003000', 'Econ*'] })).toBeUndefined();
    expect(ruleProblem({ categories: ['002*', '00*2'] })).toBe(
      `categories[1]: "00*2": '*' is only allowed at the end (prefix form, e.g. "002*")`,
    );
    expect(ruleProblem({ categories: ['**'] })).toMatch(/^categories\[0\]: "\*\*"/);
  });

  it('bounds the free-text and audit fields', () => {
    expect(ruleProblem({ keywords: ['x'], description: 'd'.repeat(501) })).toMatch(/^description\b/);
    expect(ruleProblem({ keywords: ['x'], notes: 'n'.repeat(2001) })).toMatch(/^notes\b/);
    expect(ruleProblem({ keywords: ['x'], version: -1 })).toMatch(/^version\b/);
    expect(ruleProblem({ keywords: ['x'], version: 1.5 })).toMatch(/^version\b/);
    expect(ruleProblem({ keywords: ['x'], updatedAt: 20250301 })).toMatch(/^updatedAt\b/);
  });
});

describe('AudienceSchema', () => {
  it('applies the defaults: enabled, UTC, immediate delivery, an 08:00 digest, one SMS segment, every copy, no update notices', () => {
    expect(AudienceSchema.parse({ audienceId: 'desk', topicArn })).toEqual({
      audienceId: 'desk',
      topicArn,
      enabled: true,
      timeZone: 'UTC',
      deliveryMode: 'immediate',
      digestTimes: ['08:00'],
      smsMaxSegments: 1,
      // An item written before stories existed keeps getting every copy.
      collapse: 'none',
      updates: 'ignore',
    });
  });

  it('refuses a collapse or updates setting it does not know, naming the choices', () => {
    expect(audienceProblem({ collapse: 'stories' })).toBe('collapse must be "story" or "none"');
    expect(audienceProblem({ updates: true })).toBe('updates must be "ignore" or "notify"');
  });

  it('accepts a fully specified audience', () => {
    const audience = {
      audienceId: 'desk',
      name: 'News desk',
      topicArn,
      enabled: true,
      timeZone: 'Asia/Seoul',
      deliveryMode: 'digest',
      digestTimes: ['07:30', '18:00'],
      quietHours: { start: '22:00', end: '06:30' },
      urgentCategories: ['001*'],
      dailyBudget: 100_000,
      smsMaxSegments: 10,
      collapse: 'story',
      updates: 'notify',
    };
    expect(AudienceSchema.parse(audience)).toEqual(audience);
    expect(AudienceSchema.parse({ ...audience, urgentCategories: new Set(['001*']) }).urgentCategories).toEqual([
      '001*',
    ]);
  });

  it('checks the topic ARN', () => {
    expect(audienceProblem({ topicArn: 'arn:aws-cn:sns:cn-north-1:123456789012:desk_alerts-1' })).toBeUndefined();
    expect(audienceProblem({ topicArn: 'arn:aws-us-gov:sns:us-gov-west-1:123456789012:desk' })).toBeUndefined();
    const wrong = 'topicArn must be an SNS topic ARN';
    expect(audienceProblem({ topicArn: 'arn:aws:sqs:eu-central-1:123456789012:desk' })).toBe(wrong);
    expect(audienceProblem({ topicArn: 'arn:aws:sns:eu-central-1:12345:desk' })).toBe(wrong);
    expect(audienceProblem({ topicArn: 'arn:aws:sns:eu-central-1:123456789012:' })).toBe(wrong);
    expect(audienceProblem({ topicArn: 'news-desk' })).toBe(wrong);
    expect(audienceProblem({ topicArn: undefined })).toBe('topicArn must be a string');
  });

  it('accepts only IANA time zones', () => {
    expect(audienceProblem({ timeZone: 'Europe/Berlin' })).toBeUndefined();
    expect(audienceProblem({ timeZone: 'Mars/Olympus_Mons' })).toBe(
      'timeZone: must be an IANA time zone such as "Europe/Berlin" or "Asia/Seoul"',
    );
    expect(audienceProblem({ timeZone: 'GMT+25' })).toMatch(/^timeZone\b/);
  });

  it('takes 24-hour clock times for digests and quiet hours', () => {
    expect(audienceProblem({ digestTimes: ['00:00', '23:59'] })).toBeUndefined();
    expect(audienceProblem({ digestTimes: ['7:30'] })).toBe('digestTimes[0]: must be a 24-hour time such as "07:30"');
    expect(audienceProblem({ digestTimes: ['24:00'] })).toMatch(/^digestTimes\[0\]: /);
    expect(audienceProblem({ digestTimes: [] })).toMatch(/^digestTimes\b/);
    expect(audienceProblem({ digestTimes: Array.from({ length: 25 }, () => '08:00') })).toMatch(/^digestTimes\b/);
    expect(audienceProblem({ quietHours: { start: '22:00', end: '7am' } })).toBe(
      'quietHours.end: must be a 24-hour time such as "07:30"',
    );
    expect(audienceProblem({ quietHours: { start: '22:00' } })).toMatch(/^quietHours\.end: /);
    expect(audienceProblem({ quietHours: { start: '22:00', end: '06:00', days: 'weekdays' } })).toMatch(/"days"/);
  });

  it('bounds the delivery settings', () => {
    expect(audienceProblem({ deliveryMode: 'weekly' })).toMatch(/^deliveryMode\b/);
    expect(audienceProblem({ dailyBudget: 0 })).toMatch(/^dailyBudget\b/);
    expect(audienceProblem({ dailyBudget: 2.5 })).toMatch(/^dailyBudget\b/);
    expect(audienceProblem({ dailyBudget: 100_001 })).toMatch(/^dailyBudget\b/);
    expect(audienceProblem({ smsMaxSegments: 0 })).toMatch(/^smsMaxSegments\b/);
    expect(audienceProblem({ smsMaxSegments: 11 })).toMatch(/^smsMaxSegments\b/);
    expect(audienceProblem({ name: '' })).toMatch(/^name\b/);
    expect(audienceProblem({ enabled: 'false' })).toBe('enabled must be a boolean (BOOL)');
  });

  it('rejects an unknown attribute and names it', () => {
    expect(audienceProblem({ topicARN: topicArn })).toBe('unknown attribute "topicARN" (did you mean "topicArn"?)');
  });

  it('names the attributes allowed where an unknown one is, inside an attribute too, and what is missing', () => {
    // Before: the item's own attributes were offered (`did you mean "timeZone"?` for `timeZone`).
    expect(audienceProblem({ quietHours: { start: '22:00', end: '07:00', timeZone: 'Asia/Seoul' } })).toBe(
      'quietHours: unknown attribute "timeZone"; allowed: start, end',
    );
    expect(audienceProblem({ quietHours: { from: '22:00', to: '07:00' } })).toBe(
      'quietHours.start: is missing; quietHours.end: is missing; quietHours: unknown attribute "from"; allowed: start, end; quietHours: unknown attribute "to"; allowed: start, end',
    );
    expect(audienceProblem({ quietHours: { Start: '22:00', end: '07:00' } })).toMatch(
      /unknown attribute "Start" \(did you mean "start"\?\)/,
    );
    expect(audienceProblem({ templates: { subjectx: '{headline}' } })).toBe(
      'templates: unknown attribute "subjectx" (did you mean "subject"?)',
    );
  });

  it('says how to clear an attribute set to NULL, for an item only', () => {
    expect(audienceProblem({ quietHours: null })).toMatch(
      /^quietHours: must be a map, not NULL; to clear it, remove the attribute instead of setting it to NULL$/,
    );
    // The Slack relay and the email function read messages, not items someone edits.
    const result = AudienceSchema.safeParse({ audienceId: 'desk', topicArn, quietHours: null });
    expect(result.success ? '' : describeIssues(result.error)).not.toContain('remove the attribute');
  });

  it('reads digest times saved as a string set, in time order', () => {
    const parsed = parseAudience({ audienceId: 'desk', topicArn, digestTimes: new Set(['18:00', '07:30']) });
    expect(parsed.ok && parsed.value.digestTimes).toEqual(['07:30', '18:00']);
  });
});

describe('describeIssues', () => {
  it('writes one "path: message" per problem, with [n] for list positions and dots for nesting', () => {
    const result = AudienceSchema.safeParse({
      audienceId: 'desk',
      topicArn,
      digestTimes: ['08:00', '8pm'],
      quietHours: { start: 'late', end: '06:00' },
    });
    expect(result.success).toBe(false);
    expect(describeIssues(result.error!)).toBe(
      'digestTimes[1]: must be a 24-hour time such as "07:30"; quietHours.start: must be a 24-hour time such as "07:30"',
    );
  });

  it('writes the message alone when a problem concerns the whole item', () => {
    const result = RuleSchema.safeParse('not an item');
    expect(result.success).toBe(false);
    expect(describeIssues(result.error!)).toBe('must be a map, not text');
  });

  it("words zod's own messages as a person editing the item reads them", () => {
    const problems = (item: Record<string, unknown>) => {
      const parsed = parseAudience({ audienceId: 'desk', topicArn: 'arn:aws:sns:us-east-1:123456789012:t', ...item });
      return parsed.ok ? [] : parsed.reasons;
    };
    expect(problems({ deliveryMode: 'weekly' })).toEqual(['deliveryMode: must be "immediate" or "digest"']);
    expect(problems({ name: 7, version: 'three', quietHours: [] })).toEqual([
      'name: must be text, not a number',
      'quietHours: must be a map, not a list',
      'version: must be a number, not text',
    ]);
    expect(problems({ digestTimes: [8] })).toEqual(['digestTimes[0]: must be text, not a number']);
    expect(problems({ version: 1.5 })).toEqual(['version: must be a whole number']);
    expect(problems({ digestTimes: new Set([8]) })).toEqual(['digestTimes[0]: must be text, not a number']);
    expect(problems({ name: new Uint8Array([1]) })).toEqual(['name: must be text, not binary data']);
  });
});

describe('parseRule and parseAudience', () => {
  it('return the parsed value, or the rejection with table, key and reason', () => {
    expect(parseRule({ ruleId: 'r1', audienceId: 'desk', keywords: ['x'] })).toMatchObject({
      ok: true,
      value: { ruleId: 'r1' },
    });
    expect(parseRule({ ruleId: 'r1', audienceId: 'desk' })).toEqual({
      ok: false,
      rejected: { table: 'rules', key: 'r1', reason: expect.stringMatching(/^categories: the rule has no/) },
      reasons: [expect.stringMatching(/^categories: the rule has no/)],
    });
    expect(parseAudience({ audienceId: 'desk', topicArn: 'nope' })).toEqual({
      ok: false,
      rejected: { table: 'audiences', key: 'desk', reason: 'topicArn must be an SNS topic ARN' },
      reasons: ['topicArn must be an SNS topic ARN'],
    });
  });

  it('list each problem whole with its advice, which the joined reason cannot be split back into', () => {
    const parsed = parseRule({
      ruleId: 'r1',
      audienceId: 'desk',
      description: 'd'.repeat(600),
      keywords: ['wafer', 'k'.repeat(300)],
      bogus: 1,
      urgent: null,
    });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.reasons).toEqual([
      'description: must be at most 500 characters; shorten it',
      'keywords[1]: must be at most 200 characters; shorten it',
      'urgent must be a boolean (BOOL)',
      expect.stringMatching(/^unknown attribute "bogus"; allowed: ruleId, /),
    ]);
    expect(parsed.rejected.reason).toBe(parsed.reasons.join('; '));
  });

  it('report <missing key> when the key attribute is absent, empty or not a string', () => {
    for (const item of [{ audienceId: 'desk' }, { ruleId: '', audienceId: 'desk' }, { ruleId: 7 }, null, 'text']) {
      const parsed = parseRule(item);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.rejected.key).toBe('<missing key>');
    }
  });
});

describe('buildRuleSet', () => {
  const audience = (audienceId: string, extra: Record<string, unknown> = {}) => ({ audienceId, topicArn, ...extra });
  const rule = (ruleId: string, audienceId: string, extra: Record<string, unknown> = {}) => ({
    ruleId,
    audienceId,
    keywords: ['rates'],
    ...extra,
  });
  const rejectedKeys = (rejected: readonly RejectedItem[]) => rejected.map((item) => `${item.table}:${item.key}`);

  // Issue 10, item 12: the run skips (and counts) a rule whose keyword is only invisible characters.
  it('skips a rule with an invisible keyword at run time while its neighbours run', () => {
    const ruleSet = buildRuleSet(
      [
        { ruleId: 'ghost', audienceId: 'desk', keywords: ['\u200B\u200B'] },
        { ruleId: 'ghost-exclusion', audienceId: 'desk', keywords: ['rates'], excludeKeywords: ['\u2060'] },
        { ruleId: 'fine', audienceId: 'desk', keywords: ['rates'] },
      ],
      [{ audienceId: 'desk', topicArn }],
    );
    expect(ruleSet.rules.map((rule) => rule.ruleId)).toEqual(['fine']);
    expect(ruleSet.rejected.map((rejected) => [rejected.key, rejected.reason.split(':')[0]])).toEqual([
      ['ghost', 'keywords[0]'],
      ['ghost-exclusion', 'excludeKeywords[0]'],
    ]);
  });

  it('skips a rule whose query does not parse, with the column, while its neighbours run', () => {
    const ruleSet = buildRuleSet(
      [
        { ruleId: 'broken-query', audienceId: 'desk', query: 'samsung AND (semicond* OR memory' },
        { ruleId: 'fine-query', audienceId: 'desk', query: 'samsung AND (semicond* OR memory)' },
      ],
      [{ audienceId: 'desk', topicArn }],
    );
    expect(ruleSet.rules.map((rule) => rule.ruleId)).toEqual(['fine-query']);
    expect(ruleSet.rejected).toEqual([
      {
        table: 'rules',
        key: 'broken-query',
        reason: "query: expected ')' at column 33 to close the '(' at column 13",
      },
    ]);
  });

  it('keeps every good item and skips each bad one with its key and reason', () => {
    const ruleSet = buildRuleSet(
      [
        rule('r1', 'desk'),
        rule('r2', 'desk', { urgent: 'very' }),
        { audienceId: 'desk', keywords: ['x'] },
        rule('r3', 'desk'),
      ],
      [audience('desk'), audience('bad', { timeZone: 'Nowhere/Town' })],
    );
    expect(ruleSet.rules.map((item) => item.ruleId)).toEqual(['r1', 'r3']);
    expect(ruleSet.audiences.map((item) => item.audienceId)).toEqual(['desk']);
    expect(ruleSet.rejected).toEqual([
      { table: 'audiences', key: 'bad', reason: expect.stringMatching(/^timeZone: must be an IANA time zone/) },
      { table: 'rules', key: 'r2', reason: 'urgent must be a boolean (BOOL)' },
      { table: 'rules', key: '<missing key>', reason: expect.stringMatching(/^ruleId\b/) },
    ]);
  });

  it('keeps the first of two audiences with the same id and rejects the second', () => {
    const ruleSet = buildRuleSet([], [audience('desk', { name: 'First' }), audience('desk', { name: 'Second' })]);
    expect(ruleSet.audiences).toHaveLength(1);
    expect(ruleSet.audiences[0]?.name).toBe('First');
    expect(ruleSet.rejected).toEqual([{ table: 'audiences', key: 'desk', reason: 'duplicate audienceId' }]);
  });

  it('rejects rules whose audience does not exist or is invalid, naming the audience', () => {
    const ruleSet = buildRuleSet(
      [rule('r1', 'ghost'), rule('r2', 'bad'), rule('r3', 'desk')],
      [audience('desk'), audience('bad', { topicArn: 'nope' })],
    );
    expect(ruleSet.rules.map((item) => item.ruleId)).toEqual(['r3']);
    expect(rejectedKeys(ruleSet.rejected)).toEqual(['audiences:bad', 'rules:r1', 'rules:r2']);
    expect(ruleSet.rejected[1]?.reason).toBe(
      `audienceId: no valid audience "ghost" exists; create it or fix the rule's audienceId`,
    );
    // An audience that exists but is invalid is named as invalid, with why: "create it" would fail.
    expect(ruleSet.rejected[2]?.reason).toMatch(
      /^audienceId: audience "bad" is invalid \(topicArn must be .*\), so the run skips its rules; fix the audience$/,
    );
  });

  it('drops, without rejecting, disabled rules and the rules of disabled audiences', () => {
    const ruleSet = buildRuleSet(
      [rule('r1', 'desk', { enabled: false }), rule('r2', 'paused'), rule('r3', 'desk')],
      [audience('desk'), audience('paused', { enabled: false })],
    );
    expect(ruleSet.rules.map((item) => item.ruleId)).toEqual(['r3']);
    expect(ruleSet.audiences.map((item) => item.audienceId)).toEqual(['desk', 'paused']);
    expect(ruleSet.rejected).toEqual([]);
  });

  it('returns an empty set for empty tables', () => {
    expect(buildRuleSet([], [])).toEqual({ rules: [], audiences: [], rejected: [] });
  });
});
