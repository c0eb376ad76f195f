/**
 * The audiences and rules of the end-to-end benchmark runs (requests, throughput, memory): many
 * audiences whose rules use the news simulator's vocabulary (its categories, outlets, statuses and
 * the words of its article templates), so a seeded simulator day produces a realistic spread of
 * notifications: most audiences receive a few dozen alerts a day, a few broad ones receive more.
 *
 * Rules are drawn with a seeded generator, so a seed always gives the same rule set, and the
 * benchmark can work out independently what every audience should receive.
 */
import type { SandboxAudience } from '#sandbox/examples';
import { CATEGORIES, MEDIA, mulberry32 } from '#sandbox/news-simulator-data';

/** A rule item as an ops person saves it in the rules table. */
export type RuleItem = Readonly<Record<string, unknown>> & { readonly ruleId: string; readonly audienceId: string };

/** Topic words of the simulator's article templates, in three languages. */
const TOPIC_KEYWORDS = [
  'interest rate',
  'inflation',
  'household debt',
  'battery',
  'recalls',
  'shipbuilders',
  'apartment',
  'marathon',
  'semiconductor',
  'chipmakers',
  'AI',
  'exports',
  'election',
  'summit',
  'earthquake',
  'typhoon',
  'data breach',
  'film festival',
  'World Cup',
  'budget',
  'privacy',
  '반도체',
  '금리',
  '지진',
  '地震',
  '半導体',
] as const;

/** Names the templates fill in (companies, cities, countries, teams): what a desk follows. */
const NAMES = [
  'Hanbit Semiconductor',
  'Daeil Motors',
  'Seorin Electronics',
  'Nara Bank',
  'Mirae Shipbuilding',
  'Bluewave Telecom',
  'Ganada Bio',
  'Orion Battery',
  'Seoul',
  'Busan',
  'Incheon',
  'Daegu',
  'Gwangju',
  'Daejeon',
  'Ulsan',
  'Jeju',
  'Japan',
  'Vietnam',
  'Indonesia',
  'Germany',
  'Brazil',
  'Canada',
  'Turkey',
  'Chile',
  'Seoul Tigers',
  'Busan Gulls',
  'Pohang',
  'Gyeongju',
  '포항',
  '東京',
] as const;

const SECTION_PREFIXES = ['001*', '002*', '003*', '004*', '005*', '007*', '008*'] as const;
const MEDIA_CODES = MEDIA.map((media) => media.code);

/** The sandbox audience items of the benchmark: no subscribers besides the sandbox's audit queue. */
export function scenarioAudiences(count: number): SandboxAudience[] {
  return Array.from({ length: count }, (_, i) => ({
    item: {
      audienceId: `bench-${String(i).padStart(4, '0')}`,
      name: `Benchmark audience ${i}`,
      timeZone: i % 3 === 0 ? 'Asia/Seoul' : i % 3 === 1 ? 'Europe/London' : 'UTC',
    },
    subscribers: [],
  }));
}

/**
 * `rulesPerAudience` rules for each audience, drawn with `seed`. Every rule combines two or three
 * criteria (a name, an outlet and a status; a category and a name; a section, an outlet and a
 * status; ...), so one audience matches a fraction of a percent of a day's articles, as a desk
 * following a company, a city or a beat would; one audience in 50 also has a broad rule (a whole
 * section from one outlet), which makes a few topics much busier than the rest.
 */
export function scenarioRules(
  audiences: readonly SandboxAudience[],
  rulesPerAudience: number,
  seed: number,
): RuleItem[] {
  const random = mulberry32(seed);
  const pick = <T>(items: readonly T[]): T => {
    const item = items[Math.floor(random() * items.length)];
    if (item === undefined) throw new RangeError('pick from an empty list');
    return item;
  };
  const categoryCodes = CATEGORIES.filter((category) => !category.code.endsWith('000000')).map((c) => c.code);
  const rules: RuleItem[] = [];
  audiences.forEach(({ item: { audienceId } }, a) => {
    for (let r = 0; r < rulesPerAudience; r++) {
      const ruleId = `${audienceId}-r${r}`;
      const roll = random();
      let criteria: Record<string, unknown>;
      if (r === 0 && a % 50 === 0) {
        criteria = { categories: [pick(SECTION_PREFIXES)], media: [pick(MEDIA_CODES)] };
      } else if (roll < 0.4) {
        criteria = { keywords: [pick(NAMES)], media: [pick(MEDIA_CODES)], statuses: ['UPDATED', 'CORRECTED'] };
      } else if (roll < 0.6) {
        criteria = { categories: [pick(categoryCodes)], keywords: [pick(NAMES)] };
      } else if (roll < 0.75) {
        criteria = { categories: [pick(SECTION_PREFIXES)], media: [pick(MEDIA_CODES)], statuses: ['CORRECTED'] };
      } else if (roll < 0.9) {
        criteria = { keywords: [pick(TOPIC_KEYWORDS)], media: [pick(MEDIA_CODES)], statuses: ['UPDATED'] };
      } else {
        criteria = {
          keywords: [pick(NAMES), pick(NAMES)],
          media: [pick(MEDIA_CODES)],
          statuses: ['PUBLISHED'],
          excludeCategories: [pick(SECTION_PREFIXES)],
        };
      }
      rules.push({ ruleId, audienceId, description: `benchmark rule ${r} of ${audienceId}`, ...criteria });
    }
  });
  return rules;
}
