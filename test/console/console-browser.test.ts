/**
 * A day of ops work in the console, in a real browser (Debian's Chromium through playwright-core)
 * against a test sandbox, with the console started as ops start it (`news-alerts console`):
 * create a rule, see it fail to match an article and why, fix it, see it match, restore the
 * previous version, list holds, test-send, replay (dry run, then for real), search articles and
 * see why each audience did or did not get one, read deliveries. axe-core checks every page
 * visited (no serious or critical violation), and the main pages are photographed (into
 * docs/console/ with UPDATE_SCREENSHOTS=1, else into a scratch folder).
 *
 * Each of the six questions has its page here: explain (1), holds (2), deliveries (3),
 * test send and repair (4), history and restore (5), and the console itself (6).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSandbox, projectRoot, startCliSandbox } from '../cli/support.ts';
import { type ConsoleProcess, launchChromium, startConsoleProcess } from './support.ts';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** Runs axe-core in the page (evaluated through the debugger, so the page's CSP does not apply to it). */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const result = (await page.evaluate(() =>
    (globalThis as unknown as { axe: { run: (options: unknown) => Promise<unknown> } }).axe.run({
      resultTypes: ['violations'],
    }),
  )) as { violations: AxeViolation[] };
  return result.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
    );
}

/** Waits until one element of `locator` shows `text` (playwright-core has no assertions of its own). */
async function shows(locator: Locator, text: string | RegExp): Promise<void> {
  await locator.filter({ hasText: text }).first().waitFor();
}

/** The whole text, not a part of it. */
const exactly = (text: string): RegExp => new RegExp(`^\\s*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);

/** HH:MM in a time zone. */
function clockIn(at: number, timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone }).format(
    at,
  );
}

describe('the ops console in a browser', () => {
  let sandbox: CliSandbox;
  let consoleProcess: ConsoleProcess;
  let browser: BrowserContext;
  let page: Page;
  const screenshots = process.env.UPDATE_SCREENSHOTS === '1' ? join(projectRoot, 'docs', 'console') : undefined;
  const visited: Record<string, string[]> = {};

  /** Opens a console path, checks it with axe, and keeps its violations for the end. */
  async function open(path: string): Promise<void> {
    const response = await page.goto(`${consoleProcess.origin}${path}`);
    expect(response?.status(), `${path}: ${await page.content()}`).toBeLessThan(400);
    await check(path);
  }

  async function check(label: string): Promise<void> {
    visited[label] = await seriousViolations(page);
  }

  async function shoot(name: string): Promise<void> {
    const dir = screenshots ?? join(sandbox.dir, 'screenshots');
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: join(dir, `${name}.png`), fullPage: false });
  }

  beforeAll(async () => {
    sandbox = await startCliSandbox();
    // Quiet hours around now for markets-desk, so its matches are held and the holds page has rows.
    const now = Date.now();
    const start = clockIn(now - 2 * 3_600_000, 'Europe/London');
    const end = clockIn(now + 2 * 3_600_000, 'Europe/London');
    const quiet = await sandbox.cli(['audiences', 'update', 'markets-desk', '--quiet-hours', `${start}-${end}`]);
    expect(quiet.code, quiet.stderr).toBe(0);
    const run = await sandbox.cli(['run']);
    expect(run.code, run.stderr).toBe(0);
    consoleProcess = await startConsoleProcess(sandbox.descriptorPath);
    browser = await launchChromium();
    page = await browser.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await consoleProcess?.stop();
    await sandbox?.stop();
  });

  it('opens with the token, then every page by its address alone', async () => {
    await page.goto(consoleProcess.url);
    // The token became a cookie and left the address bar.
    expect(page.url()).toBe(`${consoleProcess.origin}/rules`);
    await shows(page.locator('h1'), exactly('Rules'));
    await check('/rules');
    await shoot('rules');
  });

  it('a day of ops work: create a rule, see why it does not match, fix it, see it match, restore', async () => {
    // An earthquake article of the sandbox's day.
    await open('/articles?text=earthquake&since=2d');
    await shoot('articles');
    const firstKey = (await page.locator('table tbody tr').first().locator('td').nth(4).textContent())?.trim() ?? '';
    expect(firstKey).toMatch(/^id:/);

    // Create a rule that looks for the wrong word, validated as it is typed.
    await open('/new-rule');
    await page.getByLabel('Rule id').fill('ops-day');
    await page.getByLabel('Audience').selectOption('quake-oncall');
    await page.locator('textarea[name=keywords]').fill('volcano');
    await shows(page.locator('#validation'), exactly('Valid: the run would accept this rule.'));
    await page.locator('textarea[name=keywords]').fill('');
    await shows(page.locator('#validation'), 'would match every article');
    // Two terms typed on one line are one term with a comma: valid, and said so.
    await page.locator('textarea[name=keywords]').fill('volcano, ash');
    await shows(page.locator('#validation'), 'Note: Keywords: "volcano, ash" is one term');
    await page.locator('textarea[name=keywords]').fill('volcano');
    await shows(page.locator('#validation'), exactly('Valid: the run would accept this rule.'));
    await shoot('rule-edit');
    await page.getByRole('button', { name: 'Review changes' }).click();
    await check('rule review (new)');
    await shows(page.locator('main'), 'Create rule ops-day');
    await shows(page.locator('table'), 'volcano');
    await page.getByRole('button', { name: 'Confirm and save' }).click();
    await shows(page.locator('.flash'), exactly('Saved: now version 1.'));
    await check('/rules/ops-day');

    // Why it does not match the earthquake article.
    await open(`/rules/ops-day/explain?article=${encodeURIComponent(firstKey)}&since=2d`);
    await shows(page.locator('#verdict'), 'does not match');
    const keywords = page.locator('tr', { has: page.locator('td', { hasText: /^keywords$/ }) });
    await shows(keywords, 'fail');
    await shows(keywords, 'none of "volcano" is in the title or summary');
    await shoot('explain-no-match');

    // Fix it, and it matches; the delivery says what quake-oncall would do with it.
    await open('/rules/ops-day');
    await page.locator('textarea[name=keywords]').fill('earthquake');
    await page.getByRole('button', { name: 'Review changes' }).click();
    await shows(page.locator('.diff'), 'volcano');
    await shows(page.locator('.diff'), 'earthquake');
    await page.getByRole('button', { name: 'Confirm and save' }).click();
    await shows(page.locator('.flash'), exactly('Saved: now version 2.'));
    await open(`/rules/ops-day/explain?article=${encodeURIComponent(firstKey)}&since=2d`);
    await shows(page.locator('#verdict'), 'matches');
    await shows(page.locator('main'), 'Delivery to quake-oncall');
    await shoot('explain-match');

    // History with actor and diff; restore version 1 after a confirmation.
    await open('/rules/ops-day/history');
    expect(await page.locator('tbody tr').count()).toBe(2);
    await shows(page.locator('tbody tr').first(), 'ops-tester');
    await page.getByRole('link', { name: 'Restore 1' }).click();
    await check('restore review');
    await shows(page.locator('.diff'), 'earthquake');
    await page.getByRole('button', { name: 'Confirm and save' }).click();
    await shows(page.locator('.flash'), exactly('Restored version 1.'));
    await shows(page.locator('tbody tr').first(), 'restored 1');
    await check('history after restore');
    await shoot('rule-history');
    const explained = await sandbox.cli(['--json', 'rules', 'explain', 'ops-day', '--article', firstKey]);
    expect(explained.json<{ matches: boolean }>().matches).toBe(false);
  });

  it('lists holds with their release time, sends a test, shows deliveries and a repair plan', async () => {
    await open('/holds');
    await shows(page.locator('tbody tr').first(), 'quiet-hours');
    await shows(page.locator('tbody'), 'markets-desk');
    await shoot('holds');

    await open('/audiences/chips-team');
    await shoot('audience');
    await page.getByRole('button', { name: 'Send a test notification' }).click();
    await check('test send');
    await shows(page.locator('main'), '[TEST]');
    await shows(page.locator('tbody'), 'received');

    await open('/audiences/chips-team/repair');
    await shows(page.locator('main'), 'exists');

    await open('/deliveries?audience=chips-team&since=2d');
    await shows(page.locator('main'), 'Subscribers');
    await shoot('deliveries');
  });

  it('replays with a dry run first, and explains an article per audience', async () => {
    await open('/runs');
    await shoot('runs');
    await page.getByRole('button', { name: 'Dry run', exact: true }).click();
    await check('replay dry run');
    await shows(page.locator('main'), 'Dry run: what a replay would do');
    await page.getByRole('button', { name: /Confirm: replay/ }).click();
    await check('replay');
    await shows(page.locator('main h2').first(), exactly('Replay done'));

    await open('/articles?text=earthquake&since=2d');
    await page.locator('table tbody tr').first().locator('a').click();
    await check('article');
    await shows(page.locator('main'), "Why did or didn't it match, per audience");
    await shows(page.locator('#a-quake-oncall'), 'matches');
    await shoot('article');
  });

  it('wraps a long unbroken word instead of widening the page past the window', async () => {
    const long = 'x'.repeat(200);
    const created = await sandbox.cli(['rules', 'create', 'long-word', '--audience', 'chips-team', '--keywords', long]);
    expect(created.code, created.stderr).toBe(0);
    await open('/rules');
    const width = (await page.evaluate(
      '({ page: document.documentElement.scrollWidth, window: document.documentElement.clientWidth })',
    )) as { page: number; window: number };
    expect(width.page).toBeLessThanOrEqual(width.window);
    // ...and a column header's words stay whole: each header is one line ("Ena|ble|d" was three).
    const split = (await page.evaluate(`[...document.querySelectorAll('th')].filter((th) => {
      const range = document.createRange();
      range.selectNodeContents(th);
      return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size > 1;
    }).map((th) => th.textContent)`)) as string[];
    expect(split).toEqual([]);
    const deleted = await sandbox.cli(['rules', 'delete', 'long-word', '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
  });

  it('has no serious accessibility violation on any page visited', () => {
    expect(Object.keys(visited).length).toBeGreaterThan(15);
    const found = Object.entries(visited).flatMap(([path, violations]) => violations.map((line) => `${path}: ${line}`));
    expect(found).toEqual([]);
  });
});
