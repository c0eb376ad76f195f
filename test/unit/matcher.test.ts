/**
 * The matching semantics, one example at a time: normalization, word edges in English, Korean and
 * Japanese, categories by code, name and prefix, media and statuses, exclusions, matchAll, and the
 * shape of the result (one notification per audience naming every rule, with reasons). Every
 * example runs through both the indexed matcher and the naive reference, which must agree.
 */
import { describe, expect, it } from 'vitest';
import { compileRules, naiveMatch } from '#core/matcher';
import type { Article, AudienceMatch, MatchReason, Rule } from '#core/model';

function rule(fields: Partial<Rule> & Pick<Rule, 'ruleId'>): Rule {
  return { audienceId: 'desk', enabled: true, urgent: false, matchAll: false, ...fields };
}

function article(fields: Partial<Article> = {}): Article {
  return {
    key: 'id:1',
    id: '1',
    title: '',
    summary: '',
    url: 'https://news.example.com/1',
    publishedAt: Date.UTC(2025, 0, 1),
    categories: [],
    categoryNames: [],
    ...fields,
  };
}

/** Matches with both implementations, checks they agree, and returns the result. */
function matchBoth(rules: readonly Rule[], subject: Article): AudienceMatch[] {
  const indexed = compileRules(rules).match(subject);
  expect(indexed).toEqual(naiveMatch(rules, subject));
  return indexed;
}

/** The ids of the rules that match `subject`, in output order. */
const matchingRuleIds = (rules: readonly Rule[], subject: Article) =>
  matchBoth(rules, subject).flatMap((audience) => audience.rules.map((match) => match.ruleId));

/** Whether a single keyword rule matches an article with this title. */
const keywordHitsTitle = (keyword: string, title: string) =>
  matchingRuleIds([rule({ ruleId: 'k', keywords: [keyword] })], article({ title })).length === 1;

describe('normalization', () => {
  it('compares after NFKC and full case folding, so full-width and compatibility forms match', () => {
    expect(keywordHitsTitle('ai', 'ＡＩ chips sell out')).toBe(true);
    expect(keywordHitsTitle('ＡＩ', 'ai chips sell out')).toBe(true);
    expect(keywordHitsTitle('ﬁnance', 'Finance ministers meet')).toBe(true);
    expect(keywordHitsTitle('Straße', 'STRASSE closed')).toBe(true);
    expect(keywordHitsTitle('istanbul', 'İstanbul airport reopens')).toBe(true);
  });

  it('collapses any run of whitespace, in terms and in text', () => {
    expect(keywordHitsTitle('interest  rate', 'The interest\n\t rate rose')).toBe(true);
    expect(keywordHitsTitle(' interest rate ', 'interest\u3000rate')).toBe(true);
  });

  it('never hits with a term that normalizes to nothing', () => {
    expect(keywordHitsTitle('\u3000', 'any title at all')).toBe(false);
  });
});

describe('keywords: Latin-script and digit edges are word boundaries', () => {
  it('does not find a word inside a longer word', () => {
    expect(keywordHitsTitle('rate', 'corporate bonds')).toBe(false);
    expect(keywordHitsTitle('rate', 'rates rise')).toBe(false);
    expect(keywordHitsTitle('rate', 'the rate, again')).toBe(true);
    expect(keywordHitsTitle('rate', 'Corporate rate cut')).toBe(true);
  });

  it('treats hyphens, punctuation and non-Latin scripts as edges', () => {
    expect(keywordHitsTitle('AI', 'AI-driven trading')).toBe(true);
    expect(keywordHitsTitle('AI', 'AI반도체 수출')).toBe(true);
    expect(keywordHitsTitle('AI', '생성AI의 시대')).toBe(true);
    expect(keywordHitsTitle('AI', '(AI)')).toBe(true);
    expect(keywordHitsTitle('AI', 'he said so')).toBe(false);
    expect(keywordHitsTitle('AI', 'Dubai airport')).toBe(false);
  });

  it('treats digits as word characters', () => {
    expect(keywordHitsTitle('5G', '5G-Advanced rollout')).toBe(true);
    expect(keywordHitsTitle('5G', '25G optics')).toBe(false);
    expect(keywordHitsTitle('5G', '5GHz band')).toBe(false);
  });

  it('matches multi-word terms as a whole, with edges at both ends', () => {
    expect(keywordHitsTitle('interest rate', 'Interest rate decision today')).toBe(true);
    expect(keywordHitsTitle('interest rate', 'interest rates climb')).toBe(false);
    expect(keywordHitsTitle('interest rate', 'interest in rate')).toBe(false);
  });

  it('checks only the edges that are Latin or digits', () => {
    // "c++" ends in '+', so "c++11" still contains it; its start is a Latin edge.
    expect(keywordHitsTitle('c++', 'c++11 released')).toBe(true);
    expect(keywordHitsTitle('c++', 'abc++ parser')).toBe(false);
    expect(keywordHitsTitle('-driven', 'AI-driven growth')).toBe(true);
  });

  it('counts any occurrence with valid edges, not just the first', () => {
    expect(keywordHitsTitle('rate', 'corporate karate and a rate')).toBe(true);
  });
});

describe('keywords: Korean and Japanese have no edge check', () => {
  it('finds Korean words with particles attached', () => {
    expect(keywordHitsTitle('반도체', '반도체가 살아난다')).toBe(true);
    expect(keywordHitsTitle('반도체', 'AI반도체 수출')).toBe(true);
    expect(keywordHitsTitle('금리', '기준금리를 동결했다')).toBe(true);
    expect(keywordHitsTitle('반도체', '반 도체')).toBe(false);
  });

  it('finds Japanese words in text without spaces', () => {
    expect(keywordHitsTitle('半導体', '次世代半導体の開発を発表した')).toBe(true);
    expect(keywordHitsTitle('トヨタ', 'トヨタ自動車が増益')).toBe(true);
    expect(keywordHitsTitle('AI', '生成AIを活用')).toBe(true);
  });

  it('still checks the Latin end of a mixed term', () => {
    expect(keywordHitsTitle('반도체ai', '반도체ai칩')).toBe(true);
    expect(keywordHitsTitle('반도체ai', '반도체aim')).toBe(false);
  });
});

describe('keywords: title and summary', () => {
  it('searches both', () => {
    const rules = [rule({ ruleId: 'k', keywords: ['tariff'] })];
    expect(matchingRuleIds(rules, article({ title: 'Trade talks', summary: 'A new tariff looms' }))).toEqual(['k']);
  });

  it('never matches a term across the end of the title and the start of the summary', () => {
    const rules = [rule({ ruleId: 'k', keywords: ['interest rate'] })];
    expect(matchingRuleIds(rules, article({ title: 'Rising interest', summary: 'rate hikes ahead' }))).toEqual([]);
  });
});

describe('categories', () => {
  const economy = article({ categories: ['002001000'], categoryNames: ['Economy > Finance'] });

  it('matches codes and names exactly, case-insensitively', () => {
    expect(matchingRuleIds([rule({ ruleId: 'code', categories: ['002001000'] })], economy)).toEqual(['code']);
    expect(matchingRuleIds([rule({ ruleId: 'name', categories: ['economy > finance'] })], economy)).toEqual(['name']);
    expect(matchingRuleIds([rule({ ruleId: 'short', categories: ['002001'] })], economy)).toEqual([]);
  });

  it('matches by prefix with a trailing *', () => {
    const rules = [
      rule({ ruleId: 'section', categories: ['002*'] }),
      rule({ ruleId: 'topic', categories: ['002001*'] }),
      rule({ ruleId: 'other', categories: ['003*'] }),
      rule({ ruleId: 'inner', categories: ['001*'] }),
      rule({ ruleId: 'by-name', categories: ['ECONOMY >*'] }),
    ];
    expect(matchingRuleIds(rules, economy)).toEqual(['by-name', 'section', 'topic']);
    expect(matchingRuleIds(rules, article({ categories: ['012002000'] }))).toEqual([]);
  });

  it('matches any categorized article with a lone *', () => {
    const rules = [rule({ ruleId: 'any', categories: ['*'] })];
    expect(matchingRuleIds(rules, economy)).toEqual(['any']);
    expect(matchingRuleIds(rules, article())).toEqual([]);
  });

  it('matches any of a rule’s categories', () => {
    const rules = [rule({ ruleId: 'r', categories: ['001000000', '002001000'] })];
    expect(matchingRuleIds(rules, economy)).toEqual(['r']);
  });
});

describe('media and statuses', () => {
  const piece = article({ media: '01100101', mediaName: 'Seoul Economic Daily', status: 'CORRECTED' });

  it('matches the media code or the media name', () => {
    expect(matchingRuleIds([rule({ ruleId: 'code', media: ['01100101'] })], piece)).toEqual(['code']);
    expect(matchingRuleIds([rule({ ruleId: 'name', media: ['seoul economic daily'] })], piece)).toEqual(['name']);
    expect(matchingRuleIds([rule({ ruleId: 'other', media: ['01100102'] })], piece)).toEqual([]);
  });

  it('matches the status case-insensitively', () => {
    expect(matchingRuleIds([rule({ ruleId: 's', statuses: ['corrected', 'withdrawn'] })], piece)).toEqual(['s']);
    expect(matchingRuleIds([rule({ ruleId: 's', statuses: ['published'] })], piece)).toEqual([]);
    expect(matchingRuleIds([rule({ ruleId: 's', statuses: ['published'] })], article())).toEqual([]);
  });
});

describe('combining criteria', () => {
  const chipsInEconomy = article({
    title: 'Chip exports jump',
    categories: ['002001000'],
    media: '01100101',
    status: 'published',
  });

  it('needs every criterion a rule has (AND across kinds, OR within one)', () => {
    const rules = [
      rule({ ruleId: 'both', categories: ['002*'], keywords: ['chip', 'wafer'] }),
      rule({ ruleId: 'wrong-category', categories: ['007*'], keywords: ['chip'] }),
      rule({ ruleId: 'wrong-keyword', categories: ['002*'], keywords: ['wafer'] }),
      rule({
        ruleId: 'all-four',
        categories: ['002*'],
        keywords: ['chip'],
        media: ['01100101'],
        statuses: ['published'],
      }),
      rule({ ruleId: 'wrong-status', categories: ['002*'], keywords: ['chip'], statuses: ['withdrawn'] }),
    ];
    expect(matchingRuleIds(rules, chipsInEconomy)).toEqual(['all-four', 'both']);
  });

  it('lets any exclusion win over every positive hit', () => {
    const rules = [
      rule({ ruleId: 'excluded-category', keywords: ['chip'], excludeCategories: ['002*'] }),
      rule({ ruleId: 'excluded-keyword', categories: ['002*'], excludeKeywords: ['exports'] }),
      rule({ ruleId: 'kept', keywords: ['chip'], excludeCategories: ['007*'], excludeKeywords: ['sports'] }),
      rule({ ruleId: 'excluded-name', keywords: ['chip'], excludeCategories: ['economy >*'] }),
    ];
    expect(matchingRuleIds(rules, chipsInEconomy)).toEqual(['excluded-name', 'kept']);
    const withName = article({ ...chipsInEconomy, categoryNames: ['Economy > Finance'] });
    expect(matchingRuleIds(rules, withName)).toEqual(['kept']);
  });

  it('applies word edges to excluded keywords too', () => {
    const rules = [rule({ ruleId: 'r', keywords: ['chip'], excludeKeywords: ['port'] })];
    expect(matchingRuleIds(rules, chipsInEconomy)).toEqual(['r']);
  });
});

describe('matchAll', () => {
  it('matches every article no exclusion hits, with the reason "all"', () => {
    const rules = [rule({ ruleId: 'firehose', matchAll: true, excludeCategories: ['007*'] })];
    const [audience] = matchBoth(rules, article({ title: 'Anything' }));
    expect(audience?.rules).toEqual([{ ruleId: 'firehose', urgent: false, reasons: [{ kind: 'all', term: '*' }] }]);
    expect(matchingRuleIds(rules, article({ categories: ['007001000'] }))).toEqual([]);
  });

  it('does nothing for a rule that has criteria, and a rule without criteria needs it', () => {
    const rules = [
      rule({ ruleId: 'limited', matchAll: true, keywords: ['chip'] }),
      rule({ ruleId: 'empty' }),
      rule({ ruleId: 'empty-lists', categories: [], keywords: [] }),
    ];
    expect(matchingRuleIds(rules, article({ title: 'Bananas' }))).toEqual([]);
    expect(matchBoth(rules, article({ title: 'chip' }))[0]?.rules[0]?.reasons).toEqual([
      { kind: 'keyword', term: 'chip' },
    ]);
  });
});

describe('the result', () => {
  const piece = article({
    title: 'AI chip maker beats earnings',
    summary: '반도체 수출이 늘었다',
    categories: ['008003000'],
    categoryNames: ['IT Science > Semiconductors'],
    media: '01100101',
    status: 'published',
  });

  it('gives one AudienceMatch per audience naming every matching rule, in ruleId order', () => {
    const rules = [
      rule({ ruleId: 'r-3', keywords: ['earnings'], description: 'Earnings desk' }),
      rule({ ruleId: 'r-1', categories: ['008*'], urgent: true }),
      rule({ ruleId: 'r-2', keywords: ['bananas'] }),
      rule({ ruleId: 'r-0', audienceId: 'asia', keywords: ['반도체'] }),
    ];
    expect(matchBoth(rules, piece)).toEqual([
      {
        audienceId: 'asia',
        article: piece,
        rules: [{ ruleId: 'r-0', urgent: false, reasons: [{ kind: 'keyword', term: '반도체' }] }],
      },
      {
        audienceId: 'desk',
        article: piece,
        rules: [
          { ruleId: 'r-1', urgent: true, reasons: [{ kind: 'category', term: '008*' }] },
          {
            ruleId: 'r-3',
            description: 'Earnings desk',
            urgent: false,
            reasons: [{ kind: 'keyword', term: 'earnings' }],
          },
        ],
      },
    ]);
  });

  it('lists every term that hit, as the rule spells it, category then keyword then media then status', () => {
    const rules = [
      rule({
        ruleId: 'r',
        statuses: ['Published'],
        media: ['Nope', '01100101'],
        keywords: ['Earnings', 'bananas', 'AI', 'chip maker'],
        categories: ['IT science >*', '008003000', '008*'],
      }),
    ];
    const expected: MatchReason[] = [
      { kind: 'category', term: 'IT science >*' },
      { kind: 'category', term: '008003000' },
      { kind: 'category', term: '008*' },
      { kind: 'keyword', term: 'Earnings' },
      { kind: 'keyword', term: 'AI' },
      { kind: 'keyword', term: 'chip maker' },
      { kind: 'media', term: '01100101' },
      { kind: 'status', term: 'Published' },
    ];
    expect(matchBoth(rules, piece)[0]?.rules[0]?.reasons).toEqual(expected);
  });

  it('reports duplicate terms separately', () => {
    const rules = [rule({ ruleId: 'r', keywords: ['AI', 'ai'] })];
    expect(matchBoth(rules, piece)[0]?.rules[0]?.reasons).toEqual([
      { kind: 'keyword', term: 'AI' },
      { kind: 'keyword', term: 'ai' },
    ]);
  });

  it('orders audiences by audienceId and ties of ruleId by input order', () => {
    const rules = [
      rule({ ruleId: 'same', audienceId: 'b', keywords: ['chip'], description: 'first' }),
      rule({ ruleId: 'same', audienceId: 'b', keywords: ['earnings'], description: 'second' }),
      rule({ ruleId: 'z', audienceId: 'a', keywords: ['chip'] }),
    ];
    const result = matchBoth(rules, piece);
    expect(result.map((audience) => audience.audienceId)).toEqual(['a', 'b']);
    expect(result[1]?.rules.map((match) => match.description)).toEqual(['first', 'second']);
  });

  it('returns nothing when no rule matches', () => {
    expect(matchBoth([rule({ ruleId: 'r', keywords: ['bananas'] })], piece)).toEqual([]);
    expect(matchBoth([], piece)).toEqual([]);
  });

  it('ignores disabled rules and counts the enabled ones', () => {
    const rules = [
      rule({ ruleId: 'off', enabled: false, keywords: ['chip'] }),
      rule({ ruleId: 'on', keywords: ['chip'] }),
    ];
    expect(compileRules(rules).ruleCount).toBe(1);
    expect(matchingRuleIds(rules, piece)).toEqual(['on']);
  });

  it('gives each article its own reasons when one matcher serves many articles', () => {
    const rules = [rule({ ruleId: 'r', keywords: ['chip', 'wafer'] }), rule({ ruleId: 's', keywords: ['wafer'] })];
    const matcher = compileRules(rules);
    const chip = article({ key: 'id:chip', title: 'chip news' });
    const wafer = article({ key: 'id:wafer', title: 'wafer news' });
    const both = article({ key: 'id:both', title: 'chip and wafer news' });
    for (const subject of [chip, wafer, both, chip, both, wafer, chip]) {
      expect(matcher.match(subject)).toEqual(naiveMatch(rules, subject));
    }
    expect(matcher.match(both)[0]?.rules.map((match) => match.reasons.length)).toEqual([2, 1]);
  });

  it('hands out frozen rule matches, so sharing them between articles is safe', () => {
    const matcher = compileRules([rule({ ruleId: 'r', keywords: ['chip'] })]);
    const [first] = matcher.match(piece);
    expect(Object.isFrozen(first?.rules)).toBe(true);
    expect(Object.isFrozen(first?.rules[0])).toBe(true);
    expect(Object.isFrozen(first?.rules[0]?.reasons)).toBe(true);
  });
});
