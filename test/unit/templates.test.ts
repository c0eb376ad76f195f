/**
 * Ops-adjustable wording: the `templates` and `locale` attributes of an audience are validated
 * like every other attribute (an unknown placeholder is refused with the ones allowed), and the
 * renderers use them with sane defaults.
 */
import { describe, expect, it } from 'vitest';
import { type AudienceMatch, AudienceSchema, describeIssues, parseAudience } from '#core/model';
import { DEFAULT_SUBJECT_TEMPLATE, fillTemplate, renderNotification } from '#core/render';

const item = (overrides: Record<string, unknown>) => ({
  audienceId: 'desk',
  name: 'Markets desk',
  topicArn: 'arn:aws:sns:us-east-1:123456789012:desk',
  ...overrides,
});

const problem = (overrides: Record<string, unknown>) => {
  const parsed = parseAudience(item(overrides));
  return parsed.ok ? undefined : parsed.rejected.reason;
};

const match: AudienceMatch = {
  audienceId: 'desk',
  article: {
    key: 'id:1',
    title: 'Fed raises rates by 25 basis points as inflation cools',
    summary: '',
    url: 'https://news.example.com/1',
    publishedAt: Date.parse('2026-03-14T13:30:00Z'),
    categories: ['002000000'],
    categoryNames: ['Economy'],
    mediaName: 'Reuters',
  },
  rules: [{ ruleId: 'rates', urgent: false, reasons: [{ kind: 'keyword', term: 'rates' }] }],
};

const documentOf = (body: string) => JSON.parse(body) as Record<string, string>;

describe('template validation', () => {
  it('accepts every placeholder of each template, and a multi-line footer', () => {
    expect(
      problem({
        templates: {
          subject: '{audience} | {category} | {media}: {headline}',
          digestSubject: '{audience}: {count} ({articles}) on {date} {time}: {top}',
          footer: 'Questions? Ask #ops.\nAudience {audience} ({audienceId}).',
        },
        locale: 'ko-KR',
      }),
    ).toBeUndefined();
  });

  it('refuses an unknown placeholder, naming the allowed ones', () => {
    expect(problem({ templates: { subject: '[{audiance}] {headline}' } })).toBe(
      'templates.subject: unknown placeholder {audiance}; allowed: {audience}, {headline}, {media}, {category}',
    );
    expect(problem({ templates: { footer: 'See {headline}' } })).toMatch(
      /^templates\.footer: unknown placeholder \{headline\}/,
    );
  });

  it('refuses stray braces, a multi-line subject, a subject without {headline} and unknown keys', () => {
    expect(problem({ templates: { subject: '{headline} }' } })).toMatch(/braces only enclose placeholders/);
    expect(problem({ templates: { digestSubject: 'Digest\n{count}' } })).toMatch(
      /templates\.digestSubject: must be one line/,
    );
    expect(problem({ templates: { subject: 'Alert from {audience}' } })).toBe(
      'templates.subject: must contain {headline}',
    );
    expect(problem({ templates: { subjectLine: '{headline}' } })).toMatch(/unknown attribute "subjectLine"/);
  });

  it('refuses a locale the runtime cannot format', () => {
    expect(problem({ locale: 'not a locale!' })).toMatch(/^locale: must be a BCP 47 locale/);
  });

  it('reports template problems in the one-line format ops see in the logs', () => {
    const parsed = AudienceSchema.safeParse(item({ templates: { subject: '' } }));
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(describeIssues(parsed.error)).toMatch(/^templates\.subject: must not be empty/);
  });
});

describe('templates in alerts', () => {
  it('default to the built-in subject', () => {
    const message = renderNotification(match, AudienceSchema.parse(item({})));
    expect(message.subject).toBe('[Markets desk] Fed raises rates by 25 basis points as inflation cools');
    expect(fillTemplate(DEFAULT_SUBJECT_TEMPLATE, { audience: 'A', headline: 'H' })).toBe('[A] H');
  });

  it('fill the subject placeholders, cut the headline at a word to stay under 100 characters', () => {
    const audience = AudienceSchema.parse(
      item({
        templates: { subject: 'News alert for the {audience} team, {category} section, via {media}: {headline}' },
      }),
    );
    const message = renderNotification(match, audience);
    expect(message.subject).toBe(
      'News alert for the Markets desk team, Economy (002000000) section, via Reuters: Fed raises rates…',
    );
    expect(message.subject.length).toBeLessThan(100);
  });

  it('collapse an empty placeholder and replace the footer, keeping the alert id', () => {
    const audience = AudienceSchema.parse(
      item({
        templates: {
          subject: '{headline} ({media})',
          footer: 'Questions? Ask #news-ops.\tThanks!\r\nAudience: {audienceId}',
        },
      }),
    );
    const message = renderNotification({ ...match, article: { ...match.article, mediaName: undefined } }, audience);
    expect(message.subject).toBe('Fed raises rates by 25 basis points as inflation cools ()');
    expect(
      documentOf(message.body).email?.endsWith(
        '--\nQuestions? Ask #news-ops. Thanks!\nAudience: desk\nAlert id: desk|id:1',
      ),
    ).toBe(true);
  });

  it('format dates in the audience locale', () => {
    const message = renderNotification(match, AudienceSchema.parse(item({ timeZone: 'Asia/Seoul', locale: 'ko-KR' })));
    expect(documentOf(message.body).email).toContain('발행:       2026년 3월 14일 (토) 22:30 (Asia/Seoul, UTC+09:00)');
  });
});
