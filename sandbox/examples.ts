/**
 * The example audiences and rules the local sandbox (`npm start`) creates: one audience per
 * channel kind (Slack in Korean and SMS in Japanese by their `locale`, the others in the stack's
 * default locale), rules that use every criterion, an overlap (two rules of one audience matching
 * one article → one alert naming both) and one rule saved wrongly on purpose, to show that a bad
 * item is skipped and reported while every other rule still runs.
 *
 * Stories: three audiences collapse syndicated copies of a story into one alert (`collapse:
 * story`, what the CLI writes for new audiences), the partner feed gets every copy (`collapse:
 * none`) to compare, and the markets desk is told once when a story it has comes back updated
 * (`updates: notify`). {@link exampleSimulator} makes the sandbox's news feed carry such copies and
 * updates, so `npm start` shows the difference.
 *
 * Items are written as an ops person would save them in the DynamoDB console (a string set here,
 * a typo there), with the bookkeeping the CLI keeps on every item it writes: `version` 1 and
 * `updatedBy` {@link exampleAuthor}, so `rules list` and `audiences list` show where they came
 * from rather than empty VERSION and UPDATED columns. The audience's `topicArn` is filled in by the
 * sandbox once the topic exists.
 */

/** Who wrote the example items, as their `updatedBy` says. */
export const exampleAuthor = 'news-alerts sandbox (example)';

/** The bookkeeping of an example item: its first version, written by the sandbox. */
const written = { version: 1, updatedBy: exampleAuthor } as const;

/** A subscriber of an example audience, as the sandbox wires it locally. */
export type SandboxSubscriber =
  /** SNS email subscription (moto stores the message; the sandbox shows the `email` body). */
  | { readonly protocol: 'email'; readonly endpoint: string }
  /** SNS SMS subscription (moto stores the message; the sandbox shows the `sms` body). */
  | { readonly protocol: 'sms'; readonly endpoint: string }
  /** SNS HTTPS subscription to a local HTTPS receiver. */
  | { readonly protocol: 'webhook' }
  /**
   * Slack through the relay. In AWS the relay is a Lambda subscription; locally an SQS queue
   * stands in for the Lambda trigger and the sandbox hands its messages to the relay code.
   */
  | { readonly protocol: 'slack' };

export interface SandboxAudience {
  /** The audience item without `topicArn`. */
  readonly item: Readonly<Record<string, unknown>> & { readonly audienceId: string };
  readonly subscribers: readonly SandboxSubscriber[];
  /**
   * SES email subscribers (records the project owns, sandbox/local-email.ts), added when the
   * sandbox runs with its email channel; confirmed unless they say `pending`.
   */
  readonly emailSubscribers?: readonly {
    readonly address: string;
    readonly locale?: string;
    readonly state?: 'confirmed' | 'pending';
  }[];
}

export const exampleAudiences: readonly SandboxAudience[] = [
  {
    item: {
      audienceId: 'markets-desk',
      ...written,
      name: 'Markets desk',
      timeZone: 'Europe/London',
      collapse: 'story',
      updates: 'notify',
      notes:
        'Email-style audience: economy news about rates and inflation; one alert per story, and one notice when it is updated.',
    },
    subscribers: [{ protocol: 'email', endpoint: 'markets-desk@example.com' }],
    emailSubscribers: [{ address: 'desk-lead@example.com' }, { address: 'new-analyst@example.com', state: 'pending' }],
  },
  {
    item: {
      audienceId: 'quake-oncall',
      ...written,
      name: 'Quake on-call',
      timeZone: 'Asia/Tokyo',
      locale: 'ja-JP',
      smsMaxSegments: 1,
      collapse: 'story',
      notes: 'SMS-style audience: urgent disaster alerts, in Japanese; one paid SMS per story.',
    },
    subscribers: [{ protocol: 'sms', endpoint: '+15555550100' }],
    emailSubscribers: [{ address: 'oncall-lead@example.jp' }],
  },
  {
    item: {
      audienceId: 'chips-team',
      ...written,
      name: 'Chips team',
      timeZone: 'Asia/Seoul',
      locale: 'ko-KR',
      collapse: 'story',
      notes: 'Slack-style audience: semiconductor industry news, in Korean; one post per story.',
    },
    subscribers: [{ protocol: 'slack' }],
    emailSubscribers: [{ address: 'chips-lead@example.kr' }],
  },
  {
    item: {
      audienceId: 'partner-feed',
      ...written,
      name: 'Partner feed',
      timeZone: 'UTC',
      collapse: 'none',
      notes:
        'Webhook audience: election coverage from two outlets, delivered as JSON; every copy, as the partner asked.',
    },
    subscribers: [{ protocol: 'webhook' }],
  },
];

/**
 * The simulator feed of `npm start`: two days of 240 articles a day, a fifth of the stories
 * republished by 2 to 8 other outlets within minutes, and one article in twenty revised later.
 * The end-to-end tests generate the same articles from it.
 */
export const exampleSimulator = {
  generate: { days: 2, perDay: 240 },
  syndicationRate: 0.2,
  updateRate: 0.05,
} as const;

export const exampleRules: readonly Readonly<Record<string, unknown>>[] = [
  {
    ruleId: 'markets-rates',
    audienceId: 'markets-desk',
    ...written,
    description: 'Economy stories about interest rates or inflation',
    categories: ['002*'],
    keywords: ['interest rate', 'inflation', '금리'],
  },
  {
    ruleId: 'markets-finance',
    audienceId: 'markets-desk',
    ...written,
    description: 'Everything in Economy > Finance except withdrawn stories',
    categories: ['002001000'],
    // A string set (SS), as the console offers it: accepted like a list.
    excludeKeywords: new Set(['rumor']),
    statuses: ['PUBLISHED', 'UPDATED', 'CORRECTED'],
  },
  {
    ruleId: 'markets-chip-exports',
    audienceId: 'markets-desk',
    ...written,
    description: 'Chip export figures (a boolean query, docs/queries.md)',
    query: 'export* AND (semiconductor OR "memory chips" OR 반도체) -rumor',
  },
  {
    ruleId: 'quakes',
    audienceId: 'quake-oncall',
    ...written,
    description: 'Earthquakes, in English, Japanese and Korean',
    keywords: ['earthquake', '地震', '지진'],
    urgent: true,
  },
  {
    ruleId: 'chips-category',
    audienceId: 'chips-team',
    ...written,
    description: 'IT & Science > Semiconductors',
    categories: ['008001000'],
  },
  {
    ruleId: 'chips-keywords',
    audienceId: 'chips-team',
    ...written,
    description: 'Semiconductor keywords anywhere but sports',
    keywords: ['semiconductor', '반도체', '半導体'],
    excludeCategories: ['007*'],
  },
  {
    ruleId: 'partner-elections',
    audienceId: 'partner-feed',
    ...written,
    description: 'Election coverage from Daily Example and the Seoul Example Herald',
    keywords: ['election'],
    media: ['M001', 'M003'],
  },
  {
    // Saved wrongly on purpose: `keyword` instead of `keywords`. The run skips it, logs its key
    // and the reason, counts it in the InvalidRules metric, and every other rule still runs.
    ruleId: 'typo-rule',
    audienceId: 'chips-team',
    ...written,
    keyword: ['wafer'],
  },
];
