/**
 * The preference page in a real browser (Debian's Chromium through playwright-core), as a
 * subscriber uses it: a link from a message the sandbox sent opens the page; the subscriber
 * pauses, switches to the daily digest and unsubscribes through the page's forms; the next run
 * sends nothing to that address. Before any of it, a GET of every link in the message (by HTTP and
 * by the browser) changes nothing. axe-core finds no serious accessibility problem on any page,
 * in English, Korean or Japanese, and the screenshots in docs/images/ are made here.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { emailWordsFor } from '#core/email/messages/catalog';
import type { Audience } from '#core/model';
import { launchChromium, seriousAccessibilityProblems, verifiedServerKey } from '../support/browser.ts';
import { listUnsubscribeTargets, parseEmail } from '../support/email-mime.ts';
import { type EmailTestStack, startEmailTestStack } from '../support/email-stack.ts';

const screenshot = (name: string) => fileURLToPath(new URL(`../../docs/images/${name}.png`, import.meta.url));
const en = emailWordsFor('en').page;

let stack: EmailTestStack;
let browser: Browser;
let context: BrowserContext;
let desk: Audience;
let ids: { kim: string; lee: string };
let links: { manage: string; oneClick: string; all: string[] };
let emailHtml: string;

beforeAll(async () => {
  stack = await startEmailTestStack();
  desk = await stack.addAudience({
    audienceId: 'markets-desk',
    name: 'Markets desk',
    timeZone: 'Europe/London',
    digestTimes: ['08:00'],
  });
  await stack.addAudience({ audienceId: 'chips-team', name: '반도체팀', timeZone: 'Asia/Seoul', locale: 'ko-KR' });
  const kim = await stack.email.addSubscriber(
    'markets-desk',
    { address: 'kim.lee@example.com' },
    { name: 'Markets desk' },
  );
  await stack.email.addSubscriber('chips-team', { address: 'kim.lee@example.com' }, { name: '반도체팀' });
  const lee = await stack.email.addSubscriber(
    'markets-desk',
    { address: 'lee.park@example.com' },
    { name: 'Markets desk' },
  );
  ids = { kim: kim.subscriberId, lee: lee.subscriberId };
  // Fixed article keys: the screenshot of the email shows its alert id.
  await stack.publishAlert(desk, 'id:1001');
  await stack.email.deliver();
  const toKim = stack.email.sent.find((sent) => sent.subscriberId === ids.kim && sent.audienceId === 'markets-desk');
  if (toKim === undefined) throw new Error('no email to kim');
  const parsed = await parseEmail(toKim.raw);
  emailHtml = parsed.html;
  const [oneClick] = listUnsubscribeTargets(parsed.header('List-Unsubscribe'));
  const manage = /https:\/\/127\.0\.0\.1:\d+\/p\/\S+/.exec(parsed.text)?.[0];
  if (oneClick === undefined || manage === undefined) throw new Error('the email has no links');
  // Every link of the message that leads to the endpoint, from both parts.
  const all = new Set([oneClick, manage]);
  for (const match of parsed.html.matchAll(/href="(https:\/\/127\.0\.0\.1:[^"]+)"/g))
    all.add((match[1] ?? '').replace(/&amp;/g, '&'));
  for (const match of parsed.text.matchAll(/https:\/\/127\.0\.0\.1:\d+\/\S+/g)) all.add(match[0]);
  links = { manage, oneClick, all: [...all] };
  // The sandbox CA signed the endpoint's certificate: Chromium trusts that certificate's key, which
  // Node verified against the CA first. The page's CSP forbids scripts, so axe-core is injected with
  // CSP bypassed (the page itself never runs one).
  browser = await launchChromium({ trustedKeys: [await verifiedServerKey(manage, inject('sandboxCa').cert)] });
  context = await browser.newContext({
    bypassCSP: true,
    viewport: { width: 820, height: 700 },
  });
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await stack?.stop();
});

const membership = async (audienceId = 'markets-desk') =>
  await stack.email.delivery.store.membership(ids.kim, audienceId);

async function open(url: string): Promise<Page> {
  const page = await context.newPage();
  const response = await page.goto(url);
  expect(response?.status()).toBe(200);
  return page;
}

describe('links in a message', () => {
  it('change nothing when fetched with GET, by a scanner or a browser', async () => {
    expect(links.all.length).toBeGreaterThanOrEqual(2);
    const before = await stack.tableSnapshot();
    for (const url of links.all) {
      const response = await stack.request(url);
      expect(response.status, url).toBe(200);
      const page = await context.newPage();
      await page.goto(url);
      await page.close();
    }
    for (const lang of ['ko', 'ja']) await stack.request(`${links.manage}?lang=${lang}`);
    expect(await stack.tableSnapshot()).toBe(before);
  });
});

describe('the preference page', () => {
  it('lists the audiences of the address and passes axe-core without serious problems, in every language', async () => {
    const page = await open(links.manage);
    expect(await page.locator('h1').textContent()).toBe(en.title);
    const list = await page.locator('main ul').first().textContent();
    expect(list).toContain('Markets desk');
    expect(list).toContain('반도체팀');
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    expect(await seriousAccessibilityProblems(page)).toEqual([]);
    await page.screenshot({ path: screenshot('email-preferences'), fullPage: true });
    for (const lang of ['ko', 'ja'] as const) {
      const localized = await open(`${links.manage}?lang=${lang}`);
      expect(await localized.locator('html').getAttribute('lang')).toBe(lang);
      expect(await localized.locator('h1').textContent()).toBe(emailWordsFor(lang).page.title);
      expect(await seriousAccessibilityProblems(localized)).toEqual([]);
      if (lang === 'ko') await localized.screenshot({ path: screenshot('email-preferences-ko'), fullPage: true });
      await localized.close();
    }
    await page.close();
  });

  it('pauses alerts for the days chosen', async () => {
    const page = await open(links.manage);
    await page.getByLabel(en.pauseDays).fill('14');
    await page.getByRole('button', { name: en.pauseButton }).click();
    await expect
      .poll(async () => (await page.getByRole('status').textContent()) ?? '', { timeout: 180_000 })
      .toContain('Alerts are paused until');
    expect((await membership())?.pausedUntil).toBe(stack.clock.now + 14 * 86_400_000);
    expect(await seriousAccessibilityProblems(page)).toEqual([]);
    await page.screenshot({ path: screenshot('email-preferences-paused'), fullPage: true });
    await page.getByRole('button', { name: en.resumeButton }).click();
    await expect
      .poll(async () => (await page.getByRole('status').textContent()) ?? '', { timeout: 180_000 })
      .toContain(en.notices.resumed);
    expect((await membership())?.pausedUntil).toBeUndefined();
    await page.close();
  });

  it('fits a phone screen, however long the address', async () => {
    const long = `${'x'.repeat(64)}@${'y'.repeat(60)}.${'z'.repeat(60)}.example.com`;
    // On the other audience: the tests below count who gets the desk's alerts.
    const { subscriberId } = await stack.email.addSubscriber('chips-team', { address: long }, { name: '반도체팀' });
    const url = await stack.email.subscribe.links.manage(subscriberId, 'chips-team');
    const page = await context.newPage();
    await page.setViewportSize({ width: 360, height: 740 });
    expect((await page.goto(url))?.status()).toBe(200);
    // A string, not a function: this file is compiled without the DOM's types.
    const width = await page.evaluate<number>('document.documentElement.scrollWidth');
    expect(width).toBeLessThanOrEqual(360);
    // The page is Korean (the audience's language): it breaks between words, not inside them.
    expect(await page.evaluate<string>("getComputedStyle(document.querySelector('main')).wordBreak")).toBe('keep-all');
    await page.screenshot({ path: join(tmpdir(), 'news-alerts-email-preferences-phone.png'), fullPage: true });
    await page.close();
  });

  it('switches to the daily digest', async () => {
    const page = await open(links.manage);
    await page.getByLabel(en.digest('08:00', 'Europe/London')).check();
    await page.getByRole('button', { name: en.save }).click();
    await expect
      .poll(async () => (await page.getByRole('status').textContent()) ?? '', { timeout: 180_000 })
      .toContain(en.notices.digest);
    expect((await membership())?.preference).toBe('digest');
    await page.close();
  });

  it('unsubscribes from the audience through the page, and the next run sends nothing to that address', async () => {
    const page = await open(links.manage);
    await page.getByRole('button', { name: en.unsubscribeThis('Markets desk') }).click();
    await expect
      .poll(async () => (await page.getByRole('status').textContent()) ?? '', { timeout: 180_000 })
      .toContain(en.notices.unsubscribed('Markets desk'));
    expect((await membership())?.state).toBe('unsubscribed');
    // Only this audience: the address stays on the other one.
    expect((await membership('chips-team'))?.state).toBe('confirmed');
    expect(await seriousAccessibilityProblems(page)).toEqual([]);
    await page.screenshot({ path: screenshot('email-preferences-unsubscribed'), fullPage: true });
    await page.close();

    const before = stack.email.sent.length;
    await stack.publishAlert(desk, 'id:1002');
    await stack.email.deliver();
    const next = stack.email.sent.slice(before);
    expect(next.map((sent) => sent.subscriberId)).toEqual([ids.lee]);
    expect(await stack.email.delivery.store.heldEntries(ids.kim, 'markets-desk')).toEqual([]);
  });

  it('shows the one-click link as a question with one button, and a broken link as a plain error page', async () => {
    const page = await open(links.oneClick);
    expect(await page.getByRole('button').count()).toBe(1);
    expect(await seriousAccessibilityProblems(page)).toEqual([]);
    await page.screenshot({ path: screenshot('email-one-click') });
    const broken = await context.newPage();
    const response = await broken.goto(`${links.manage.slice(0, -4)}AAAA`);
    expect(response?.status()).toBe(404);
    expect(await broken.locator('h1').textContent()).toBe(en.invalidTitle);
    expect(await seriousAccessibilityProblems(broken)).toEqual([]);
    await broken.screenshot({ path: screenshot('email-invalid-link') });
    await broken.close();
    await page.close();
  });

  it('renders the email itself readably (HTML part)', async () => {
    const page = await context.newPage();
    await page.setContent(emailHtml);
    expect(await seriousAccessibilityProblems(page)).toEqual([]);
    await page.screenshot({ path: screenshot('email-alert'), fullPage: true });
    await page.close();
  });
});
