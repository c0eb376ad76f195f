/**
 * The email a subscriber receives, read back with a real MIME parser (mailparser) and an HTML
 * validator (html-validate): both parts and their charset, every header RFC 8058 requires, the
 * audience's language, and only the one recipient's address, for alerts, update notices and
 * digests in English, Korean and Japanese, and for hostile article text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  composeAlert,
  composeConfirmation,
  composeDailyDigest,
  composeDigest,
  type EmailDraft,
  personalize,
} from '#core/email/compose';
import { emailWordsFor } from '#core/email/messages/catalog';
import { buildMime, listIdOf, ONE_CLICK_BODY } from '#core/email/mime';
import { type AlertNotification, type DigestNotification, parseQueuedNotification } from '#core/email/notification';
import { InvalidAddressError, normalizeAddress } from '#core/email/subscriber';
import { messagesFor } from '#core/messages/catalog';
import { renderNotification, singleLine } from '#core/render';
import { spikeAlertMatch } from '#core/spikes/alert';
import { renderSpikeAlert } from '#core/spikes/render';
import {
  alertEnvelope,
  articlesByLanguage,
  audiencesByLanguage,
  digestEnvelope,
  matchOf,
  PUBLISHED,
  snsEnvelope,
  testArticle,
  testAudience,
  updateEnvelope,
} from '../support/email-fixtures.ts';
import { addressesIn, htmlProblems, listUnsubscribeTargets, parseEmail } from '../support/email-mime.ts';
import { ratesSpike } from '../support/spike-world.ts';

const links = {
  manage: 'https://prefs.example.com/p/v1.1.bWFuYWdl.sig',
  unsubscribe: 'https://prefs.example.com/u/v1.1.bWFuYWdl.sig',
};
const recipient = 'kim.subscriber@example.org';

async function send(draft: EmailDraft, to = recipient) {
  const rendered = personalize(draft, links);
  const raw = await buildMime({
    from: { name: 'News Alerts', address: 'alerts@alerts.example.com' },
    to,
    rendered,
    locale: draft.locale,
    list: { label: draft.audienceLabel, id: `${draft.audienceId}.alerts.example.com` },
    unsubscribe: { https: links.unsubscribe, mailto: 'mailto:unsubscribe@alerts.example.com?subject=unsubscribe%20x' },
    messageId: `abc.def@alerts.example.com`,
    date: new Date(Date.UTC(2026, 2, 14, 13, 30)),
  });
  return { raw, parsed: await parseEmail(raw) };
}

const alertDraft = (language: keyof typeof audiencesByLanguage) => {
  const audience = audiencesByLanguage[language];
  const notification = parseQueuedNotification(alertEnvelope(audience, articlesByLanguage[language]));
  return composeAlert(notification.document as AlertNotification, audience, notification.subject);
};

describe.each(['en', 'ko', 'ja'] as const)('an alert in %s', (language) => {
  it('has a UTF-8 text part and a UTF-8 HTML part, both in the audience language', async () => {
    const { parsed } = await send(alertDraft(language));
    const article = articlesByLanguage[language];
    const words = emailWordsFor(language);
    expect(parsed.charsets).toEqual({ text: 'utf-8', html: 'utf-8' });
    expect(parsed.text).toContain(singleLine(article.title));
    expect(parsed.text).toContain(words.mail.manage);
    expect(parsed.html).toContain(words.mail.readArticle);
    expect(parsed.html).toMatch(new RegExp(`<html lang="${audiencesByLanguage[language].locale ?? 'en-US'}">`));
    expect(parsed.header('Content-Language')).toBe(audiencesByLanguage[language].locale ?? 'en-US');
    expect(parsed.mail.subject).toContain(audiencesByLanguage[language].name);
  });

  it('carries every header RFC 8058 requires, pointing at the one-click URL', async () => {
    const { parsed } = await send(alertDraft(language));
    expect(parsed.header('List-Unsubscribe-Post')).toBe(ONE_CLICK_BODY);
    const targets = listUnsubscribeTargets(parsed.header('List-Unsubscribe'));
    expect(targets).toEqual([links.unsubscribe, 'mailto:unsubscribe@alerts.example.com?subject=unsubscribe%20x']);
    expect(targets[0]?.startsWith('https://')).toBe(true);
    expect(parsed.header('List-Id')).toContain(`${audiencesByLanguage[language].audienceId}.alerts.example.com`);
  });

  it('has HTML that passes the validator', async () => {
    const { parsed } = await send(alertDraft(language));
    expect(await htmlProblems(parsed.html)).toEqual([]);
  });

  it('names only its own recipient: no other address anywhere in it', async () => {
    const { raw, parsed } = await send(alertDraft(language));
    expect(parsed.to).toEqual([recipient]);
    expect([...addressesIn(parsed, raw)].sort()).toEqual(
      ['alerts@alerts.example.com', recipient, 'unsubscribe@alerts.example.com'].sort(),
    );
  });
});

describe('the footer', () => {
  it('asks ops only for what the email’s own links cannot do, in every language and kind', async () => {
    for (const language of ['en', 'ko', 'ja'] as const) {
      const audience = audiencesByLanguage[language];
      const alert = parseQueuedNotification(alertEnvelope(audience, articlesByLanguage[language]));
      const digest = parseQueuedNotification(digestEnvelope(audience, [articlesByLanguage[language]]));
      const drafts = [
        composeAlert(alert.document as AlertNotification, audience, alert.subject),
        composeDigest(digest.document as DigestNotification, audience, digest.subject),
      ];
      const words = emailWordsFor(language).mail;
      const expected = words.footer.replace('{audienceId}', audience.audienceId);
      // The built-in footer of SNS email and SMS, which asks ops to remove the address.
      const builtIn = messagesFor(language).templates.footer;
      for (const draft of drafts) {
        const { parsed } = await send(draft);
        expect(parsed.text).toContain(expected);
        expect(parsed.html).toContain(expected);
        expect(parsed.text).toContain(words.unsubscribe(draft.audienceLabel));
        for (const line of builtIn.split('\n')) {
          const filled = line
            .replaceAll('{audience}', draft.audienceLabel)
            .replaceAll('{audienceId}', audience.audienceId);
          expect(parsed.text).not.toContain(filled);
        }
      }
    }
  });

  it('keeps a footer template ops wrote for the audience', async () => {
    const audience = { ...audiencesByLanguage.en, templates: { footer: 'Questions? Write to the {audience} desk.' } };
    const alert = parseQueuedNotification(alertEnvelope(audience, articlesByLanguage.en));
    const { parsed } = await send(composeAlert(alert.document as AlertNotification, audience, alert.subject));
    expect(parsed.text).toContain(`Questions? Write to the ${audience.name} desk.`);
    expect(parsed.text).not.toContain(emailWordsFor('en').mail.footer.slice(0, 30));
  });
});

describe('digests and update notices', () => {
  it('renders a digest with every entry, grouped, in both parts', async () => {
    const audience = audiencesByLanguage.ja;
    const articles = [
      articlesByLanguage.ja,
      testArticle({ key: 'id:9', title: '地震速報　東北で震度4', categories: ['005'], categoryNames: ['社会'] }),
    ];
    const notification = parseQueuedNotification(digestEnvelope(audience, articles));
    const draft = composeDigest(notification.document as DigestNotification, audience, notification.subject);
    const { parsed } = await send(draft);
    for (const article of articles) {
      expect(parsed.text).toContain(singleLine(article.title));
      expect(parsed.html).toContain(singleLine(article.title));
    }
    expect(parsed.html).toContain('<html lang="ja-JP">');
    expect(parsed.header('List-Unsubscribe-Post')).toBe(ONE_CLICK_BODY);
    expect(await htmlProblems(parsed.html)).toEqual([]);
  });

  it.each([
    ['en', '1,500 articles'],
    ['ko', '기사 1,500건'],
    ['ja', '1,500件の記事'],
  ] as const)(
    'counts a subscriber’s own daily digest in the audience’s words and number format (%s)',
    (language, counted) => {
      // Before, the subject and heading alone said "기사 1500건" (the rest of the email: 1,500).
      const audience = audiencesByLanguage[language];
      const notification = parseQueuedNotification(digestEnvelope(audience, [articlesByLanguage[language]]));
      const [entry] = (notification.document as DigestNotification).digest.groups[0]?.entries ?? [];
      const entries = Array.from({ length: 1500 }, (_, index) => ({
        ...entry,
        deliveryId: `${audience.audienceId}|id:${index}`,
        article: { ...entry?.article, key: `id:${index}` },
      }));
      const draft = composeDailyDigest(
        {
          deliveryId: `${audience.audienceId}|daily`,
          entries: entries as never,
          locale: undefined,
          releaseAt: PUBLISHED,
        },
        audience,
      );
      expect(draft.subject).toContain(counted);
      expect(draft.text.split('\n')[0]).toContain(counted);
    },
  );

  it('marks an update notice as one, first line and subject', async () => {
    const audience = testAudience();
    const notification = parseQueuedNotification(updateEnvelope(audience));
    const draft = composeAlert(notification.document as AlertNotification, audience, notification.subject);
    expect(draft.kind).toBe('update');
    const { parsed } = await send(draft);
    expect(parsed.mail.subject?.startsWith('Updated')).toBe(true);
    expect(parsed.text.split('\n')[0]).toMatch(/status/i);
    expect(await htmlProblems(parsed.html)).toEqual([]);
  });

  it('sends the confirmation email in the audience language with one confirm link', async () => {
    const rendered = composeConfirmation({
      audienceLabel: '경제팀',
      language: 'ko',
      locale: 'ko-KR',
      confirmUrl: 'https://prefs.example.com/c/tok',
    });
    const raw = await buildMime({
      from: { name: 'News Alerts', address: 'alerts@alerts.example.com' },
      to: recipient,
      rendered,
      locale: 'ko-KR',
      messageId: 'c.1@alerts.example.com',
      date: new Date(0),
    });
    const parsed = await parseEmail(raw);
    expect(parsed.mail.subject).toContain('구독을 확인');
    expect(parsed.text).toContain('https://prefs.example.com/c/tok');
    expect(await htmlProblems(parsed.html)).toEqual([]);
  });
});

describe('hostile article text', () => {
  const hostile = testArticle({
    title: '<script>alert(1)</script> "><img src=x onerror=alert(2)> Fed',
    summary: 'line one\r\nBcc: victim@example.net\r\n\r\n<iframe src="https://evil.example">',
    mediaName: '</dd><script>x</script>',
  });

  it('is escaped in the HTML, never markup, and adds no header or recipient', async () => {
    const audience = testAudience();
    const notification = parseQueuedNotification(alertEnvelope(audience, hostile));
    const { parsed } = await send(
      composeAlert(notification.document as AlertNotification, audience, notification.subject),
    );
    expect(parsed.html).not.toMatch(/<script|<img|<iframe/i);
    expect(parsed.mail.headers.has('bcc')).toBe(false);
    expect(parsed.to).toEqual([recipient]);
    expect(await htmlProblems(parsed.html)).toEqual([]);
  });

  it('stays valid, escaped, single-recipient MIME for any headline, summary and media name', async () => {
    const audience = testAudience();
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 120 }),
        fc.string({ maxLength: 200 }),
        fc.string({ maxLength: 40 }),
        async (title, summary, mediaName) => {
          const article = testArticle({ title, summary, mediaName: mediaName === '' ? undefined : mediaName });
          const notification = parseQueuedNotification(alertEnvelope(audience, article));
          const { parsed } = await send(
            composeAlert(notification.document as AlertNotification, audience, notification.subject),
          );
          expect(parsed.to).toEqual([recipient]);
          expect(parsed.mail.headers.has('bcc')).toBe(false);
          expect(parsed.html).not.toMatch(/<(script|img|iframe)/i);
          expect(await htmlProblems(parsed.html)).toEqual([]);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('addresses', () => {
  it('accepts plain addresses and lower-cases the domain', () => {
    expect(normalizeAddress('  Kim.Lee+news@Example.ORG ')).toBe('Kim.Lee+news@example.org');
  });

  it('refuses anything that could carry a header, a second recipient or a display name', () => {
    for (const bad of [
      'a@b.com\r\nBcc: c@d.com',
      'a@b.com, c@d.com',
      'Kim <a@b.com>',
      '"a b"@c.com',
      'a@b',
      'a@-b.com',
      '',
      'a@b.123',
      'kim@例え.jp',
    ]) {
      expect(() => normalizeAddress(bad), bad).toThrow(InvalidAddressError);
    }
  });

  it('never lets a control character, comma, angle bracket, quote or space through', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.constantFrom('\r', '\n', ',', '<', '>', '"', ' ', '\u0000', ';', '\u2028'),
        fc.string(),
        (before, bad, after) => {
          const candidate = `${before}${bad}${after}@example.com`;
          let accepted: string | undefined;
          try {
            accepted = normalizeAddress(candidate);
          } catch (error) {
            expect(error).toBeInstanceOf(InvalidAddressError);
            // The message says what is wrong, never the value.
            if (candidate.trim() !== '') expect((error as Error).message).not.toContain(candidate.trim());
          }
          if (accepted !== undefined) {
            for (const forbidden of ['\r', '\n', ',', '<', '>', '"', ' ', '\u0000', ';', '\u2028']) {
              expect(accepted).not.toContain(forbidden);
            }
          }
        },
      ),
    );
  });
});

describe('a spike alert by SES email', () => {
  // The email queue gets the structured document; the SNS email subscribers get the spike's own
  // text. Both must read the same: observed against expected, the top stories, the preset.
  const { rule: spikeRule, episode } = ratesSpike('x', PUBLISHED);

  it.each(['en', 'ko', 'ja'] as const)(
    'in %s has the text SNS email subscribers get (but the footer), and the spike in its HTML',
    async (language) => {
      const audience = audiencesByLanguage[language];
      const key = 'spike:rates:e1';
      const message = renderSpikeAlert(spikeAlertMatch({ rule: spikeRule, audience, alert: episode, key }), audience);
      const snsEmail = (JSON.parse(message.body) as { email: string }).email;
      const notification = parseQueuedNotification(snsEnvelope(message));
      const draft = composeAlert(notification.document as AlertNotification, audience, notification.subject);
      // SES email has its own unsubscribe link, so its footer does not ask ops to remove the address.
      const body = (text: string) => text.slice(0, text.lastIndexOf('\n--\n'));
      expect(body(draft.text)).toBe(body(snsEmail));
      expect(draft.text).toContain(emailWordsFor(language).mail.footer.replace('{audienceId}', audience.audienceId));
      const { parsed } = await send(draft);
      expect(parsed.html).toContain('Central bank signals rate cut');
      expect(parsed.html).toContain('https://news.example.kr/b/2');
    },
  );
});

describe('an alert whose link is withheld, and one that has none', () => {
  const audience = testAudience();
  const draftOf = (url: string) => {
    const message = renderNotification(matchOf(audience, testArticle({ url })), audience, { linkPolicy: 'omit' });
    const notification = parseQueuedNotification(snsEnvelope(message));
    return composeAlert(notification.document as AlertNotification, audience, notification.subject);
  };
  const note = messagesFor('en').email.linkWithheld;

  it('names a withheld link in both parts of the email', async () => {
    const { parsed } = await send(draftOf('javascript:alert(1)'));
    expect(parsed.text).toContain(note);
    expect(parsed.html).toContain(note);
    expect(parsed.html).not.toContain('javascript:');
  });

  it('says nothing of a link a test notification never had', async () => {
    const { parsed } = await send(draftOf(''));
    expect(parsed.text).not.toContain(note);
    expect(parsed.html).not.toContain(note);
  });
});

describe('List-Id', () => {
  const audienceIds = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/);

  it('is one per audience: ids that differ in case, or in . _ : and -, never share a list', () => {
    // desk-1-9b3fa30c is an id of its own, the label desk_1 would get with a `-` before its hash.
    const ids = ['desk-1', 'desk_1', 'desk.1', 'desk:1', 'Desk-1', 'DESK_1', 'desk-1-9b3fa30c'];
    const listIds = ids.map((id) => listIdOf(id, 'alerts.example.com').toLowerCase());
    expect(new Set(listIds).size).toBe(ids.length);
    expect(listIdOf('markets-desk', 'alerts.example.com')).toBe('markets-desk.alerts.example.com');
    fc.assert(
      fc.property(audienceIds, audienceIds, (a, b) => {
        fc.pre(a !== b);
        expect(listIdOf(a, 'alerts.example.com').toLowerCase()).not.toBe(
          listIdOf(b, 'alerts.example.com').toLowerCase(),
        );
      }),
    );
  });

  it('is a dot-atom of one label before the domain, within the 255 octets RFC 2919 allows', () => {
    fc.assert(
      fc.property(audienceIds, (id) => {
        const listId = listIdOf(id, 'alerts.example.com');
        expect(listId).toMatch(/^[a-z0-9-]+(=[0-9a-f]{8})?\.alerts\.example\.com$/);
        expect(listId.length).toBeLessThanOrEqual(255);
      }),
    );
  });
});
