/**
 * Spoofing through provider text and links (issue 10, item 12): bidi controls, zero-width and
 * other invisible characters and control characters never reach what subscribers see (email
 * subject and body, SMS, the chat fields and the structured body, digests, Slack blocks and
 * fallback text), while Korean, Japanese and emoji (ZWJ sequences, flags, skin tones) stay intact;
 * and article links that are not public web addresses are never published as links.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planDigest, toHeldNotification } from '#core/digest';
import { type Article, type Audience, type AudienceMatch, AudienceSchema } from '#core/model';
import {
  LINK_WITHHELD_NOTE,
  renderNotification,
  renderParkedNotification,
  singleLine,
  UnpublishableLinkError,
} from '#core/render';
import { smsSegments } from '#core/sms';
import { displayText, MAX_LINK_LENGTH, publishableLink } from '#core/text';
import { renderSlackMessage } from '../../functions/slack-relay/blocks.ts';
import { parseAlertMessage } from '../../functions/slack-relay/message.ts';

/** Every character the sanitizer must remove (or, for controls, turn into a space). */
/** What SNS hands a Lambda subscriber of this message: its own key, else `default`. */
function lambdaBody(body: string): string {
  const document = JSON.parse(body) as Record<string, string | undefined>;
  return document.lambda ?? document.default ?? '';
}

const HIDDEN_CHARACTERS = [
  '\u202E', // RIGHT-TO-LEFT OVERRIDE
  '\u202D', // LEFT-TO-RIGHT OVERRIDE
  '\u202A',
  '\u202B',
  '\u202C',
  '\u2066', // LEFT-TO-RIGHT ISOLATE
  '\u2067',
  '\u2068',
  '\u2069',
  '\u200E', // LEFT-TO-RIGHT MARK
  '\u200F',
  '\u061C', // ARABIC LETTER MARK
  '\u200B', // ZERO WIDTH SPACE
  '\u200C', // ZERO WIDTH NON-JOINER (outside a joining script)
  '\u200D', // ZERO WIDTH JOINER (outside an emoji sequence)
  '\u2060', // WORD JOINER
  '\uFEFF', // BOM
  '\u00AD', // SOFT HYPHEN
  '\u2062', // INVISIBLE TIMES
  '\uFFF9', // INTERLINEAR ANNOTATION ANCHOR
  '\u{E0041}', // TAG LATIN CAPITAL LETTER A (outside a flag)
  '\u3164', // HANGUL FILLER
  '\u0007', // BEL
  '\u001B', // ESC
  '\u0085', // NEXT LINE (C1)
];

/** Invisible or reordering characters that may not survive, and controls other than a line break. */
const FORBIDDEN =
  /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C\u200B\u2060\uFEFF\u00AD\u2062\uFFF9\u3164\u{E0041}]|[^\P{Cc}\n]/u;
/** The joiners are allowed only inside emoji sequences; these headlines have none. */
const JOINERS = /[\u200C\u200D]/u;

const audienceFor = (overrides: Record<string, unknown> = {}): Audience =>
  AudienceSchema.parse({
    audienceId: 'desk',
    name: 'Markets\u202E desk',
    topicArn: 'arn:aws:sns:us-east-1:123456789012:desk',
    smsMaxSegments: 3,
    templates: { footer: 'Questions?\u200B Ask \u202Eops\u202C.\nThanks' },
    ...overrides,
  });

const spoofed: Article = {
  key: 'id:7\u202E',
  id: '7\u202E',
  title: 'Invoice\u202Egnp.exe \u200Bpay\u200Dpal\u2066 wins\u0007 award\u001B[2J',
  summary: 'Read\u200B the \u2067full\u2069 story\uFEFF\u00AD now.',
  url: 'https://news.example.com/markets/7',
  publishedAt: Date.UTC(2026, 10, 22, 0, 0),
  categories: ['002000000\u200B'],
  categoryNames: ['Econ\u202Eomy'],
  media: 'M001\u2060',
  mediaName: 'Example\u3164 Daily',
  status: 'PUBLISHED\u200E',
};

const matchOf = (item: Article): AudienceMatch => ({
  audienceId: 'desk',
  article: item,
  rules: [
    {
      ruleId: 'rates',
      description: 'Rates\u202E watch',
      urgent: false,
      reasons: [{ kind: 'keyword', term: 'pay\u200Bpal' }],
    },
  ],
});

/** Every string a subscriber can see in one SNS message, JSON documents unpacked. */
function visibleStrings(subject: string, body: string): string[] {
  const strings: string[] = [subject];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      if (value.startsWith('{')) {
        try {
          walk(JSON.parse(value));
          return;
        } catch {
          // plain text that starts with a brace
        }
      }
      strings.push(value);
    } else if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(JSON.parse(body));
  return strings;
}

/** The ids are machine keys (ledger, de-duplication): the structured body keeps them exact. */
const isKey = (text: string) => text.includes('7\u202E') && !text.includes(' ');

describe('displayText, the one sanitizer of what people see', () => {
  it.each(HIDDEN_CHARACTERS.map((character) => [character.codePointAt(0)?.toString(16), character]))(
    'removes U+%s',
    (_code, character) => {
      const cleaned = displayText(`ab${character}cd`);
      expect(cleaned).not.toContain(character);
      expect(cleaned.replace(' ', '')).toBe('abcd');
    },
  );

  it('keeps Korean, Japanese, emoji ZWJ sequences, skin tones, flags and keycaps intact', () => {
    const legitimate = [
      '한국은행, 기준금리 동결',
      '日銀が金融政策決定会合で利上げ',
      '👨\u200D👩\u200D👧 families',
      '👩🏽\u200D💻 engineers',
      '❤️\u200D🔥 and 🏳️\u200D🌈',
      '🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F} Scotland',
      '1️⃣ first',
      'می\u200Cخواهم', // Persian spells with ZWNJ
      'क्\u200Dष', // Devanagari half form
      'line one\nline two',
      '葛\u{E0100}城', // an ideographic variation sequence
    ];
    for (const text of legitimate) expect(displayText(text)).toBe(text);
  });

  it('replaces lone surrogates, so SNS gets valid UTF-8', () => {
    expect(displayText('a\uD800b')).toBe('a\uFFFDb');
  });

  it('leaves nothing hidden in any text, and changing nothing the second time', () => {
    const hidden = fc.constantFrom(...HIDDEN_CHARACTERS);
    const visible = fc.string({ unit: 'grapheme', maxLength: 6 });
    fc.assert(
      fc.property(fc.array(fc.oneof(hidden, visible), { maxLength: 30 }), (parts) => {
        const cleaned = displayText(parts.join(''));
        return !FORBIDDEN.test(cleaned) && displayText(cleaned) === cleaned;
      }),
      { numRuns: 300 },
    );
  });
});

describe('every channel of an alert', () => {
  it('carries no bidi control, invisible or control character from the provider, the rules or the audience', () => {
    const message = renderNotification(matchOf(spoofed), audienceFor());
    const strings = visibleStrings(message.subject, message.body).filter((text) => !isKey(text));
    for (const text of strings) {
      expect(text, JSON.stringify(text)).not.toMatch(FORBIDDEN);
      expect(text, JSON.stringify(text)).not.toMatch(JOINERS);
    }
    expect(message.subject).toBe('[Markets desk] Invoicegnp.exe paypal wins award [2J');
    const email = JSON.parse(message.body).email as string;
    expect(email).toMatch(/Alert id: desk\|id:7$/);
    expect(email).toContain('Questions? Ask ops.\nThanks');
  });

  it('keeps an SMS with a hidden character in a Latin headline in GSM-7 (one character must not halve its room)', () => {
    const title = 'Fed\u200B raises\u202E rates by 25 basis points as inflation cools across the region';
    const message = renderNotification(matchOf({ ...spoofed, title }), audienceFor({ smsMaxSegments: 1 }));
    const sms = JSON.parse(message.body).sms as string;
    expect(smsSegments(sms)).toMatchObject({ encoding: 'GSM-7', segments: 1 });
    expect(sms).toBe(
      'Fed raises rates by 25 basis points as inflation cools across the region https://news.example.com/markets/7',
    );
  });

  it('keeps a Korean, Japanese or emoji headline whole in the subject, SMS and chat title', () => {
    for (const title of ['한국은행 기준금리 동결 👨\u200D👩\u200D👧', '日銀が利上げ 🏳️\u200D🌈']) {
      const message = renderNotification(matchOf({ ...spoofed, title }), audienceFor());
      const document = JSON.parse(message.body) as Record<string, string>;
      expect(message.subject).toContain(title);
      expect(document.sms).toContain(title);
      expect(JSON.parse(document.lambda ?? document.default ?? '{}').content.title).toContain(title);
    }
  });
});

describe('digests', () => {
  it('show held entries sanitized in the subject, email, SMS and structured body', () => {
    const audience = audienceFor({ deliveryMode: 'digest' });
    const items = [
      toHeldNotification(matchOf(spoofed), 'digest', Date.UTC(2026, 10, 22, 1)),
      toHeldNotification(matchOf({ ...spoofed, key: 'id:8', id: '8' }), 'digest', Date.UTC(2026, 10, 22, 2)),
    ];
    const plan = planDigest(items, audience, Date.UTC(2026, 10, 22, 8));
    expect(plan.messages).toHaveLength(1);
    for (const message of plan.messages) {
      for (const text of visibleStrings(message.subject, message.body).filter((value) => !isKey(value))) {
        expect(text, JSON.stringify(text)).not.toMatch(FORBIDDEN);
      }
    }
  });
});

describe('Slack', () => {
  const slackStrings = (slack: ReturnType<typeof renderSlackMessage>): string[] => [
    slack.text,
    ...slack.blocks.flatMap((block) =>
      'text' in block ? [block.text.text] : 'elements' in block ? block.elements.map((element) => element.text) : [],
    ),
  ];

  it('sanitizes blocks and fallback text, also of a message an older publisher did not sanitize', () => {
    const message = renderNotification(matchOf(spoofed), audienceFor());
    const document = JSON.parse(lambdaBody(message.body));
    // What an unsanitizing publisher would have sent: the raw provider text.
    document.newsAlerts.article.title = spoofed.title;
    document.newsAlerts.article.summary = spoofed.summary;
    document.newsAlerts.audienceName = 'Markets\u202E desk';
    const slack = renderSlackMessage(parseAlertMessage(JSON.stringify(document)));
    for (const text of slackStrings(slack)) {
      expect(text, JSON.stringify(text)).not.toMatch(FORBIDDEN);
      expect(text, JSON.stringify(text)).not.toMatch(JOINERS);
    }
    expect(slack.text).toContain('Invoicegnp.exe paypal wins award');
  });

  it('keeps emoji sequences in the header', () => {
    const message = renderNotification(matchOf({ ...spoofed, title: '👩🏽\u200D💻 코딩 대회' }), audienceFor());
    const slack = renderSlackMessage(parseAlertMessage(lambdaBody(message.body)));
    expect(slack.blocks[0]).toMatchObject({ type: 'header', text: { text: '\u{1F4F0} 👩🏽\u200D💻 코딩 대회' } });
  });
});

describe('article links', () => {
  const refused = [
    ['the metadata service', 'http://169.254.169.254/latest/meta-data/'],
    ['the metadata service in decimal', 'http://2852039166/latest/'],
    ['loopback', 'https://127.0.0.1/admin'],
    ['IPv6 loopback', 'https://[::1]/'],
    ['a private address', 'http://10.0.0.5/wiki'],
    ['an internal name', 'https://intranet.corp.internal/'],
    ['localhost', 'http://localhost:8080/'],
    ['a single-label name', 'http://wiki/page'],
    ['credentials', 'https://user:pass@news.example.com/a'],
    ['a look-alike user part', 'https://news.example.com@evil.example/a'],
    ['javascript', 'javascript:alert(1)'],
    ['a data URL', 'data:text/html,<script>alert(1)</script>'],
    ['no link', '   '],
    ['an over-long link', `https://news.example.com/${'a'.repeat(MAX_LINK_LENGTH)}`],
  ] as const;

  it.each(refused)('are not published when they point at %s', (_what, url) => {
    expect(publishableLink(url).ok).toBe(false);
    expect(() => renderNotification(matchOf({ ...spoofed, url }), audienceFor())).toThrow(UnpublishableLinkError);
  });

  it.each(refused)('leave the parked alert (%s) without the link on every channel', (_what, url) => {
    const message = renderParkedNotification(matchOf({ ...spoofed, url }), audienceFor());
    const strings = visibleStrings(message.subject, message.body);
    const bare = url.trim();
    for (const text of strings) if (bare !== '') expect(text).not.toContain(bare);
    const document = JSON.parse(message.body) as Record<string, string>;
    expect(document.email).toContain(`Link:       ${LINK_WITHHELD_NOTE}`);
    expect(document.sms).toBe(singleLine(spoofed.title));
    const slack = renderSlackMessage(parseAlertMessage(document.lambda ?? document.default ?? ''));
    for (const text of [slack.text, JSON.stringify(slack.blocks)]) {
      if (bare !== '') expect(text).not.toContain(bare);
      expect(text).not.toMatch(/<https?:/);
    }
  });

  it('say nothing of a link when none was given (a test notification), on any channel', () => {
    const message = renderNotification(matchOf({ ...spoofed, url: '' }), audienceFor(), { linkPolicy: 'omit' });
    const document = JSON.parse(message.body) as Record<string, string>;
    expect(document.email).not.toContain('Link:');
    expect(document.email).not.toContain(LINK_WITHHELD_NOTE);
    const slack = renderSlackMessage(parseAlertMessage(document.lambda ?? document.default ?? ''));
    expect(JSON.stringify(slack.blocks)).not.toContain('Read the article');
  });

  it('does not publish a refused link in Slack, even when a message carries one', () => {
    const message = renderNotification(matchOf(spoofed), audienceFor());
    const document = JSON.parse(lambdaBody(message.body));
    document.newsAlerts.article.url = 'http://169.254.169.254/latest/';
    const slack = renderSlackMessage(parseAlertMessage(JSON.stringify(document)));
    expect(JSON.stringify(slack)).not.toContain('169.254.169.254');
  });

  it('are published for public https and http addresses, in their ASCII form', () => {
    for (const [url, shown] of [
      ['https://news.example.com/markets/7?ref=a', 'https://news.example.com/markets/7?ref=a'],
      ['http://news.example.com/a', 'http://news.example.com/a'],
      ['https://뉴스.example/기사', 'https://xn--vg1b002a.example/%EA%B8%B0%EC%82%AC'],
      ['https://news.example.com/a\u202Eb', 'https://news.example.com/a%E2%80%AEb'],
    ] as const) {
      expect(publishableLink(url)).toEqual({ ok: true, url: shown });
      const message = renderNotification(matchOf({ ...spoofed, url }), audienceFor());
      expect(JSON.parse(message.body).sms).toContain(shown);
    }
  });
});
