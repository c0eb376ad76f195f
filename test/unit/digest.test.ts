/**
 * Digest rendering beyond the goldens: grouping and numbering, "why you got this" on every entry,
 * numbered parts when a release is over SNS's 256 KB (every entry in exactly one part, each part
 * within the limit), the SMS within the audience's segment budget in GSM-7 and UCS-2, the
 * structured body as a valid Amazon Q Developer custom notification, and the held form's bounds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildDigestView, orderForDigest, planDigest, renderDigestSms, toHeldNotification } from '#core/digest';
import { type Article, type Audience, AudienceSchema, type RuleMatch } from '#core/model';
import type { HeldNotification, HoldReason, OutboundMessage } from '#core/ports';
import { messageBytes, SNS_MAX_MESSAGE_BYTES, SUBJECT_MAX_LENGTH } from '#core/render';
import { describeSms, smsSegments } from '#core/sms';

const audienceFor = (overrides: Record<string, unknown> = {}): Audience =>
  AudienceSchema.parse({
    audienceId: 'desk',
    name: 'News desk',
    topicArn: 'arn:aws:sns:us-east-1:123456789012:desk',
    timeZone: 'Europe/London',
    quietHours: { start: '22:00', end: '07:00' },
    dailyBudget: 5,
    ...overrides,
  });

const releaseAt = Date.parse('2026-11-23T07:00:00Z');

const rule: RuleMatch = {
  ruleId: 'rates',
  description: 'Rates',
  urgent: false,
  reasons: [{ kind: 'keyword', term: 'rate' }],
};

let sequence = 0;
function held(
  overrides: Partial<Article> = {},
  options: { reason?: HoldReason; rules?: RuleMatch[]; audienceId?: string } = {},
): HeldNotification {
  sequence += 1;
  const article: Article = {
    key: `id:${sequence}`,
    id: String(sequence),
    title: `Headline number ${sequence}`,
    summary: '',
    url: `https://news.example.com/a/${sequence}`,
    publishedAt: releaseAt - sequence * 60_000,
    categories: ['002000000'],
    categoryNames: ['Economy'],
    media: 'M001',
    mediaName: 'Daily Example',
    ...overrides,
  };
  return toHeldNotification(
    { audienceId: options.audienceId ?? 'desk', article, rules: options.rules ?? [rule] },
    options.reason ?? 'quiet-hours',
    releaseAt - 3_600_000,
  );
}

const documentOf = (message: OutboundMessage) => JSON.parse(message.body) as Record<string, string>;
const structuredOf = (message: OutboundMessage) =>
  JSON.parse(documentOf(message).default ?? '') as {
    version: string;
    source: string;
    id: string;
    content: { textType: string; title: string; description: string; keywords: string[] };
    metadata: { eventType: string; summary: string; additionalContext: Record<string, unknown> };
    newsAlerts: {
      schemaVersion: number;
      kind: string;
      deliveryId: string;
      digest: {
        part: number;
        parts: number;
        total: number;
        count: number;
        groups: { label: string; count: number; entries: { deliveryId: string; article: { key: string } }[] }[];
      };
    };
  };

describe('the held form of a match', () => {
  it('bounds what it stores but keeps every rule id', () => {
    const rules: RuleMatch[] = Array.from({ length: 80 }, (_, index) => ({
      ruleId: `rule-${index}`,
      urgent: false,
      reasons: Array.from({ length: 30 }, (_, term) => ({ kind: 'keyword' as const, term: `term ${term}` })),
    }));
    const item = held({ summary: '요약 '.repeat(5000), title: 'T'.repeat(5000) }, { rules });
    expect(item.ruleIds).toHaveLength(80);
    expect(item.match.rules).toHaveLength(50);
    expect(item.match.rules[0]?.reasons).toHaveLength(20);
    expect(item.match.article.summary.length).toBeLessThanOrEqual(500);
    expect(item.match.article.title.length).toBeLessThanOrEqual(500);
    expect(Buffer.byteLength(JSON.stringify(item), 'utf8')).toBeLessThan(100_000);
  });
});

describe('digest layout', () => {
  it('groups by category code across languages, largest group first, newest first inside, numbered on', () => {
    const items = [
      held({ title: 'Old economy story', publishedAt: releaseAt - 9_000_000 }),
      held({ title: 'Quake', categories: ['003002000'], categoryNames: ['Disasters'], publishedAt: releaseAt - 1000 }),
      held({ title: '한국은행 기준금리 인상', categoryNames: ['경제'], publishedAt: releaseAt - 5_000 }),
      held({ title: 'No category at all', categories: [], categoryNames: [] }),
    ];
    const { messages } = planDigest(items, audienceFor(), releaseAt);
    const email = documentOf(messages[0] as OutboundMessage).email ?? '';
    const order = ['한국은행 기준금리 인상', 'Old economy story', 'Quake', 'No category at all'];
    const positions = order.map((title) => email.indexOf(title));
    expect(positions.every((position, index) => position > (positions[index - 1] ?? -1))).toBe(true);
    expect(email).toContain('경제 (002000000) · 2\n1. 한국은행 기준금리 인상');
    expect(email).toContain('2. Old economy story');
    expect(email).toContain('Other · 1\n4. No category at all');
  });

  it('names the rule(s) and the term(s) that matched on every entry, in every channel that lists entries', () => {
    const rules: RuleMatch[] = [rule, { ruleId: 'asia', urgent: false, reasons: [{ kind: 'category', term: '002*' }] }];
    const { messages } = planDigest([held({}, { rules }), held({}, { rules: [rule] })], audienceFor(), releaseAt);
    const message = messages[0] as OutboundMessage;
    const email = documentOf(message).email ?? '';
    expect(email).toContain('Why: rule rates: keyword "rate"; rule asia: category 002*\n');
    expect(email).toContain('Why: rule rates: keyword "rate"\n');
    const entries = structuredOf(message).newsAlerts.digest.groups.flatMap((group) => group.entries) as unknown as {
      matches: { ruleId: string; reasons: { kind: string; term: string }[] }[];
    }[];
    expect(entries.map((entry) => entry.matches.map((match) => match.ruleId))).toEqual([['rates', 'asia'], ['rates']]);
  });

  it('explains why the entries were held, from the audience settings', () => {
    const items = [held({}, { reason: 'quiet-hours' }), held({}, { reason: 'budget' }), held({}, { reason: 'digest' })];
    const email = documentOf(planDigest(items, audienceFor(), releaseAt).messages[0] as OutboundMessage).email ?? '';
    expect(email).toContain(
      [
        'Held for this digest:',
        '- 1 held during your quiet hours (22:00–07:00)',
        '- +1 more over the daily limit of 5 immediate alerts',
        '- 1 collected for your digest (08:00)',
      ].join('\n'),
    );
  });

  it('uses the digestSubject template and the footer template', () => {
    const audience = audienceFor({
      templates: {
        digestSubject: '{count} for {audience} on {date} at {time}: {top}',
        footer: 'Custom footer for {audienceId}.',
      },
    });
    const message = planDigest([held({ title: 'Top story' })], audience, releaseAt).messages[0] as OutboundMessage;
    expect(message.subject).toBe('1 for News desk on Mon, Nov 23, 2026 at 07:00: Top story');
    expect(
      documentOf(message).email?.endsWith(
        '--\nCustom footer for desk.\nDigest id: desk|digest:2026-11-23T07:00:00.000Z',
      ),
    ).toBe(true);
  });

  it('refuses entries of another audience', () => {
    const other = held({}, { audienceId: 'other' });
    expect(() =>
      buildDigestView([other], audienceFor(), {
        release: { audienceId: 'other', releaseAt },
        part: 1,
        parts: 1,
        total: 1,
        firstIndex: 1,
        groupTotals: new Map(),
      }),
    ).toThrow(/cannot be rendered for audience "desk"/);
  });
});

describe('numbered parts over SNS size limit', () => {
  it('splits a large release so that each part fits and every entry is in exactly one part', () => {
    const title = '반도체 수출 회복에도 물가 압력이 이어진다는 판단에 한국은행이 기준금리를 올렸다 '.repeat(3);
    const items = Array.from({ length: 700 }, (_, index) =>
      held({
        title: `${index} ${title}`,
        url: `https://news.example.kr/${'경제/'.repeat(10)}${index}`,
        categories: [`00${index % 7}000000`],
        categoryNames: [`분류 ${index % 7}`],
      }),
    );
    const plan = planDigest(items, audienceFor(), releaseAt);
    expect(plan.dropped).toEqual([]);
    expect(plan.messages.length).toBeGreaterThan(1);
    const seen: string[] = [];
    plan.messages.forEach((message, index) => {
      expect(messageBytes(message.body, message.subject)).toBeLessThanOrEqual(SNS_MAX_MESSAGE_BYTES);
      const document = structuredOf(message);
      expect(document.newsAlerts.digest).toMatchObject({ part: index + 1, parts: plan.messages.length, total: 700 });
      expect(document.newsAlerts.deliveryId).toBe(
        `desk|digest:2026-11-23T07:00:00.000Z#${index + 1}/${plan.messages.length}`,
      );
      expect(message.subject).toContain(`(part ${index + 1}/${plan.messages.length})`);
      for (const group of document.newsAlerts.digest.groups) {
        for (const entry of group.entries) seen.push(entry.article.key);
      }
    });
    expect(seen).toHaveLength(700);
    expect(new Set(seen).size).toBe(700);
    expect(plan.parts.flat().map((item) => item.key.articleKey)).toEqual(seen);
    const second = documentOf(plan.messages[1] as OutboundMessage).email ?? '';
    const firstCount = plan.parts[0]?.length ?? 0;
    expect(second).toContain(`Part 2 of ${plan.messages.length} · articles ${firstCount + 1}–`);
  });

  it('drops only an entry that cannot be shown even alone, and says so', () => {
    const items = [held(), held({ url: '   ' }), held({ url: `https://news.example.com/${'x'.repeat(300_000)}` })];
    const plan = planDigest(items, audienceFor(), releaseAt);
    expect(plan.dropped.map((item) => item.key.articleKey).sort()).toEqual(
      [items[1], items[2]].map((item) => item?.key.articleKey).sort(),
    );
    expect(plan.parts.flat()).toEqual([items[0]]);
  });

  it('holds for any mix of headlines: each message fits, one line subjects, every entry once', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 300 }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 3 }),
        (titles, smsMaxSegments) => {
          const items = titles.map((title) => held({ title }));
          const audience = audienceFor({ smsMaxSegments });
          const plan = planDigest(items, audience, releaseAt);
          const keys = plan.parts.flat().map((item) => item.key.articleKey);
          if (new Set(keys).size !== keys.length || keys.length + plan.dropped.length !== items.length) return false;
          return plan.messages.every((message) => {
            const sms = documentOf(message).sms ?? '';
            return (
              messageBytes(message.body, message.subject) <= SNS_MAX_MESSAGE_BYTES &&
              message.subject.length <= SUBJECT_MAX_LENGTH &&
              !/[\p{Cc}]/u.test(message.subject) &&
              smsSegments(sms).segments <= smsMaxSegments
            );
          });
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('digest SMS', () => {
  const viewOf = (items: HeldNotification[], audience: Audience) =>
    buildDigestView(orderForDigest(items, audience).ordered, audience, {
      release: { audienceId: audience.audienceId, releaseAt },
      part: 1,
      parts: 1,
      total: items.length,
      firstIndex: 1,
      groupTotals: new Map(),
    });

  it('GSM-7: count and whole headlines in one 160-septet segment, "+N more" for the rest', () => {
    const items = Array.from({ length: 12 }, (_, index) =>
      held({ title: `Markets update ${index}`, publishedAt: releaseAt - index * 1000 }),
    );
    const sms = renderDigestSms(viewOf(items, audienceFor()));
    expect(sms).toBe(
      'News desk: 12 news alerts. Markets update 0; Markets update 1; Markets update 2; Markets update 3; Markets update 4; Markets update 5; Markets update 6 +5 more',
    );
    expect(smsSegments(sms)).toMatchObject({ encoding: 'GSM-7', segments: 1 });
    expect(describeSms(sms)).toBe(`GSM-7, ${sms.length} of 160 units, 1 segment`);
  });

  it('UCS-2: Korean headlines in 70 units per segment, or 67 per part when two are allowed', () => {
    const items = Array.from({ length: 5 }, (_, index) =>
      held({ title: `한국은행 기준금리 ${index}차 인상 발표`, publishedAt: releaseAt - index * 1000 }),
    );
    const one = renderDigestSms(viewOf(items, audienceFor({ name: '경제팀' })));
    expect(smsSegments(one)).toMatchObject({ encoding: 'UCS-2', segments: 1 });
    expect(one.startsWith('경제팀: 5 news alerts. 한국은행 기준금리 0차 인상 발표')).toBe(true);
    expect(one).toMatch(/ \+[34] more$/);
    const two = renderDigestSms(viewOf(items, audienceFor({ name: '경제팀', smsMaxSegments: 2 })));
    expect(smsSegments(two)).toMatchObject({ encoding: 'UCS-2', segments: 2 });
    expect(smsSegments(two).units).toBeGreaterThan(70);
    expect(smsSegments(two).units).toBeLessThanOrEqual(134);
    // Every headline shown plus "+N more" accounts for all five.
    const shown = two.slice(two.indexOf('. ') + 2).split('; ').length;
    const more = Number(/\+(\d+) more$/.exec(two)?.[1] ?? 0);
    expect(shown + more).toBe(5);
  });

  it('urgent entries come first, and a single entry reads like an alert with its link', () => {
    const items = [
      held({ title: 'Routine story', publishedAt: releaseAt }),
      held({ title: 'Quake', publishedAt: releaseAt - 50_000 }, { rules: [{ ...rule, urgent: true }] }),
    ];
    expect(renderDigestSms(viewOf(items, audienceFor()))).toBe('News desk: 2 news alerts. Quake; Routine story');
    const single = renderDigestSms(viewOf([held({ title: 'Only story', url: 'https://x.example/1' })], audienceFor()));
    expect(single).toBe('Only story https://x.example/1');
  });
});

describe('structured body', () => {
  it('is an Amazon Q Developer custom notification with a versioned digest part', () => {
    const items = Array.from({ length: 120 }, (_, index) =>
      held({ title: `<!channel> story ${index} with a rather long headline to fill the chat description` }),
    );
    const message = planDigest(items, audienceFor(), releaseAt).messages[0] as OutboundMessage;
    const document = structuredOf(message);
    expect(Object.keys(documentOf(message)).sort()).toEqual(['default', 'email', 'sms']);
    expect(document.version).toBe('1.0');
    expect(document.source).toBe('custom');
    expect(document.id).toBe('desk|digest:2026-11-23T07:00:00.000Z');
    expect(document.content.textType).toBe('client-markdown');
    expect(document.content.title).toBe('📬 News desk: 120 articles');
    expect(document.content.description.length).toBeLessThanOrEqual(3000);
    expect(document.content.description).toMatch(/_\+\d+ more in this digest_$/);
    for (const text of [document.content.title, document.content.description, document.metadata.summary]) {
      expect(text).not.toMatch(/[<>]/);
    }
    expect(document.metadata.eventType).toBe('news-alerts.digest');
    for (const value of Object.values(document.metadata.additionalContext)) expect(typeof value).toBe('string');
    expect(document.newsAlerts).toMatchObject({ schemaVersion: 1, kind: 'digest', deliveryId: document.id });
    const entries = document.newsAlerts.digest.groups.flatMap((group) => group.entries);
    expect(entries).toHaveLength(120);
    expect(entries[0]?.deliveryId).toMatch(/^desk\|id:/);
  });
});

describe('digests in the audience’s language', () => {
  it('take the stack’s defaultLocale for an audience without locale: words, counts, Other group, locale field', () => {
    const items = [held({ categories: [], categoryNames: [] }), held({}, { reason: 'budget' }), held()];
    const [message] = planDigest(items, audienceFor({ timeZone: 'Asia/Seoul' }), releaseAt, {
      defaultLocale: 'ko-KR',
    }).messages;
    const document = documentOf(message as OutboundMessage);
    expect(document.email).toContain('News desk · 뉴스 요약 · 기사 3건');
    expect(document.email).toContain('\n기타 · 1건\n');
    expect(document.email).toContain('- 하루 한도(즉시 알림 5건)를 넘은 1건');
    expect(message?.subject.startsWith('[News desk] 기사 3건: ')).toBe(true);
    expect(structuredOf(message as OutboundMessage).newsAlerts).toMatchObject({ locale: 'ko-KR' });
    // The same items for an English audience: the groups keep their order, in English words.
    const [english] = planDigest(items, audienceFor({ timeZone: 'Asia/Seoul' }), releaseAt).messages;
    expect(documentOf(english as OutboundMessage).email).toContain('\nOther · 1\n');
  });

  it('use the digestSubject of the subscriber’s language, then the neutral one, then the catalog’s', () => {
    const subjectFor = (locale: string, templates: Record<string, unknown>) =>
      planDigest([held(), held()], audienceFor({ locale, templates }), releaseAt).messages[0]?.subject;
    const templates = { digestSubject: 'Digest {date}', locales: { ja: { digestSubject: '{articles}のまとめ' } } };
    expect(subjectFor('ja-JP', templates)).toBe('2件の記事のまとめ');
    expect(subjectFor('ko-KR', templates)).toBe('Digest 2026년 11월 23일 (월)');
    expect(subjectFor('ko-KR', { locales: { ja: { digestSubject: '{articles}のまとめ' } } })).toMatch(
      /^\[News desk\] 기사 2건: /,
    );
  });
});
