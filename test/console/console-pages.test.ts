/**
 * The console's rule and audience pages against the real `news-alerts console` process on a test
 * sandbox: an edit changes only what the form changed (what the form does not show, such as spike
 * alerts, is kept, and checkboxes left at their defaults add nothing); a rule whose audience no
 * longer exists is shown as the run judges it (INVALID), with its audience kept in the form instead
 * of the first one listed, so a save cannot move it to another team; an audience whose topic was
 * deleted is not "ok", and a test send that fails links to the repair check.
 */
import { DeleteTopicCommand } from '@aws-sdk/client-sns';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { motoState } from '#sandbox/moto';
import { auditAttributes } from '../../cli/items.ts';
import { type CliSandbox, setByHand as setItemByHand, startCliSandbox } from '../cli/support.ts';
import { type ConsoleProcess, raw, startConsoleProcess } from './support.ts';

function get(port: number, path: string, cookie: string): Promise<{ status: number; body: string }> {
  return send(port, 'GET', path, cookie);
}

/** A same-origin request with the session cookie (a form posted when `form` is given). */
async function send(
  port: number,
  method: string,
  path: string,
  cookie: string,
  form?: Record<string, string>,
): Promise<{ status: number; body: string; cookie?: string; location?: string }> {
  const response = await raw(port, {
    method,
    path,
    headers: {
      origin: `http://127.0.0.1:${port}`,
      cookie,
      ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
    },
    ...(form === undefined ? {} : { body: new URLSearchParams(form).toString() }),
  });
  const setCookie = response.headers['set-cookie'];
  const location = response.headers.location;
  return {
    status: response.status,
    body: response.body,
    ...(setCookie === undefined ? {} : { cookie: String(setCookie).split(';')[0] ?? '' }),
    ...(location === undefined ? {} : { location: String(location) }),
  };
}

/** The fields of the first form on a page posting to `action` (with `method`, when given): what it would send. */
function formFields(page: string, action: string, method = ''): Record<string, string> {
  const start = page.indexOf(`${method === '' ? '' : `method="${method}" `}action="${action}"`);
  expect(start, `a form posting to ${action}`).toBeGreaterThan(-1);
  const form = page.slice(start, page.indexOf('</form>', start));
  const fields: Record<string, string> = {};
  for (const match of form.matchAll(/<input\b([^>]*)>/g)) {
    const attributes = match[1] ?? '';
    const name = /name="([^"]*)"/.exec(attributes)?.[1];
    if (name === undefined) continue;
    const type = /type="([^"]*)"/.exec(attributes)?.[1];
    if (type === 'checkbox' && !/\bchecked\b/.test(attributes)) continue;
    fields[name] = htmlText(/value="([^"]*)"/.exec(attributes)?.[1] ?? '');
  }
  // As a browser sends a textarea: without the one line break after the tag, line breaks as CRLF.
  for (const match of form.matchAll(/<textarea name="([^"]*)"[^>]*>([^<]*)<\/textarea>/g)) {
    fields[match[1] ?? ''] = htmlText((match[2] ?? '').replace(/^\r?\n/, '')).replace(/\r?\n/g, '\r\n');
  }
  for (const match of form.matchAll(/<select name="([^"]*)">([\s\S]*?)<\/select>/g)) {
    const selected = /<option value="([^"]*)" selected>/.exec(match[2] ?? '')?.[1];
    if (selected !== undefined) fields[match[1] ?? ''] = htmlText(selected);
  }
  return fields;
}

const htmlText = (text: string) =>
  text
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');

describe('the console rule and audience pages', () => {
  let sandbox: CliSandbox;
  let consoleProcess: ConsoleProcess;
  let cookie: string;
  let csrf: string;

  beforeAll(async () => {
    sandbox = await startCliSandbox();
    consoleProcess = await startConsoleProcess(sandbox.descriptorPath);
    const opened = await send(consoleProcess.port, 'GET', `/rules?token=${consoleProcess.token}`, '');
    expect(opened.status).toBe(303);
    cookie = opened.cookie ?? '';
    const rules = await get(consoleProcess.port, '/rules', cookie);
    csrf = /name="csrf-token" content="([^"]+)"/.exec(rules.body)?.[1] ?? '';
    expect(csrf).not.toBe('');
  });

  /** `rules create <ruleId> --audience <audienceId> --keywords <keyword>`, which must succeed. */
  async function createRule(ruleId: string, keyword: string, audienceId = 'chips-team'): Promise<void> {
    const created = await sandbox.cli(['rules', 'create', ruleId, '--audience', audienceId, '--keywords', keyword]);
    expect(created.code, created.stderr).toBe(0);
  }

  /**
   * Changes a rule's keywords as the DynamoDB console would: another attribute changed, its
   * `version` left as it was.
   */
  async function editOutsideConsole(ruleId: string, keywords: string[]): Promise<void> {
    await setByHand('rules', ruleId, 'keywords', keywords);
  }

  /** Sets one attribute of a stored rule or audience as the DynamoDB console would (no version change). */
  const setByHand = (table: 'rules' | 'audiences', id: string, name: string, value: unknown) =>
    setItemByHand(sandbox, table, id, name, value);

  /** Posts `fields` to the live check of the form page `pageBody`, as the page's script does. */
  function liveCheck(pageBody: string, fields: Record<string, string>) {
    const validate = /data-validate="([^"]+)"/.exec(pageBody)?.[1] ?? '';
    return raw(consoleProcess.port, {
      method: 'POST',
      path: validate.replaceAll('&amp;', '&'),
      headers: {
        origin: `http://127.0.0.1:${consoleProcess.port}`,
        cookie,
        'x-csrf-token': csrf,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** Posts the rule form's `fields` to review, then confirms the reviewed save; both must pass. */
  async function reviewAndSave(ruleId: string, fields: Record<string, string>): Promise<void> {
    const path = `/rules/${ruleId}`;
    const review = await send(consoleProcess.port, 'POST', `${path}/preview`, cookie, fields);
    expect(review.status, review.body.slice(0, 2000)).toBe(200);
    const saved = await send(
      consoleProcess.port,
      'POST',
      `${path}/save`,
      cookie,
      formFields(review.body, `${path}/save`),
    );
    expect(saved.status, saved.body.slice(0, 2000)).toBe(303);
  }

  afterAll(async () => {
    await consoleProcess?.stop();
    await sandbox?.stop();
  });

  it('changes only what the form changed: spike alerts and unset checkboxes stay as they were', async () => {
    const created = await sandbox.cli([
      'rules',
      'create',
      'form-keeps',
      '--audience',
      'chips-team',
      '--keywords',
      'wafer',
      '--spikes',
      'balanced',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const before = (await sandbox.cli(['--json', 'rules', 'show', 'form-keeps'])).json<Record<string, unknown>>();
    const page = await get(consoleProcess.port, '/rules/form-keeps', cookie);
    expect(page.status).toBe(200);
    const fields = formFields(page.body, '/rules/form-keeps/preview');
    expect(fields).toMatchObject({ ruleId: 'form-keeps', audienceId: 'chips-team', keywords: 'wafer' });

    const review = await send(consoleProcess.port, 'POST', '/rules/form-keeps/preview', cookie, {
      ...fields,
      description: 'Wafer news',
    });
    expect(review.status, review.body.slice(0, 2000)).toBe(200);
    // The review lists the one change made, nothing else.
    const diff = review.body.slice(
      review.body.indexOf('<div class="diff">'),
      review.body.indexOf('</div>', review.body.indexOf('<div class="diff">')),
    );
    expect(diff).toContain('1 change(s)');
    expect(diff).toContain('description');
    for (const untouched of ['spikes', 'enabled', 'urgent', 'matchAll']) expect(diff).not.toContain(untouched);
    const confirm = formFields(review.body, '/rules/form-keeps/save');
    const saved = await send(consoleProcess.port, 'POST', '/rules/form-keeps/save', cookie, confirm);
    expect(saved.status, saved.body.slice(0, 2000)).toBe(303);

    const after = (await sandbox.cli(['--json', 'rules', 'show', 'form-keeps'])).json<Record<string, unknown>>();
    expect(after).toMatchObject({ description: 'Wafer news', keywords: ['wafer'], spikes: 'balanced' });
    const own = (item: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(item).filter(
          // The fingerprint `rules show` gives is of the whole stored rule: it follows the description.
          ([name]) =>
            !(auditAttributes as readonly string[]).includes(name) && name !== 'description' && name !== 'fingerprint',
        ),
      );
    expect(own(after)).toEqual(own(before));
  });

  it('keeps a field the user did not touch exactly as stored: a query with a line break, keywords with commas', async () => {
    const ruleFile = sandbox.file(
      'round-trip.json',
      JSON.stringify({
        ruleId: 'round-trip',
        audienceId: 'chips-team',
        keywords: ['1,000 jobs', 'layoffs'],
        query: '(semiconductor\nOR chip)',
      }),
    );
    const created = await sandbox.cli(['rules', 'create', '--file', ruleFile]);
    expect(created.code, created.stderr).toBe(0);
    const before = (await sandbox.cli(['--json', 'rules', 'show', 'round-trip'])).json<Record<string, unknown>>();
    expect(before).toMatchObject({ keywords: ['1,000 jobs', 'layoffs'], query: '(semiconductor\nOR chip)' });
    const page = await get(consoleProcess.port, '/rules/round-trip', cookie);
    const review = await send(consoleProcess.port, 'POST', '/rules/round-trip/preview', cookie, {
      ...formFields(page.body, '/rules/round-trip/preview'),
      description: 'Chip jobs',
    });
    expect(review.status, review.body.slice(0, 2000)).toBe(200);
    const diff = review.body.slice(review.body.indexOf('<div class="diff">'), review.body.indexOf('</form>'));
    expect(diff).toContain('1 change(s)');
    const saved = await send(
      consoleProcess.port,
      'POST',
      '/rules/round-trip/save',
      cookie,
      formFields(review.body, '/rules/round-trip/save'),
    );
    expect(saved.status, saved.body.slice(0, 2000)).toBe(303);
    const after = (await sandbox.cli(['--json', 'rules', 'show', 'round-trip'])).json<Record<string, unknown>>();
    expect(after).toMatchObject({
      description: 'Chip jobs',
      keywords: ['1,000 jobs', 'layoffs'],
      query: '(semiconductor\nOR chip)',
    });

    // A list edited in the form is one term per line, so a comma stays inside its term.
    const edited = await get(consoleProcess.port, '/rules/round-trip', cookie);
    const fields = formFields(edited.body, '/rules/round-trip/preview');
    const again = await send(consoleProcess.port, 'POST', '/rules/round-trip/preview', cookie, {
      ...fields,
      keywords: `${fields.keywords}\r\n2,500 layoffs`,
    });
    expect(again.status, again.body.slice(0, 2000)).toBe(200);
    const item = JSON.parse(formFields(again.body, '/rules/round-trip/save').item ?? '{}') as Record<string, unknown>;
    expect(item.keywords).toEqual(['1,000 jobs', 'layoffs', '2,500 layoffs']);
    expect(item.query).toBe('(semiconductor\nOR chip)');
  });

  it('repairs a rule with an attribute no rule has: the form offers to remove it', async () => {
    // Written by hand, as in the DynamoDB console: `keyword` where `keywords` was meant.
    await sandbox.stack.clients.documents.send(
      new PutCommand({
        TableName: sandbox.stack.config.tables.rules,
        Item: { ruleId: 'stray', audienceId: 'chips-team', keywords: ['wafer'], keyword: 'foundry' },
      }),
    );
    const page = await get(consoleProcess.port, '/rules/stray', cookie);
    expect(page.body).toContain('The run skips this rule');
    expect(page.body).toContain('<input type="checkbox" name="remove" value="keyword">');
    const fields = formFields(page.body, '/rules/stray/preview');
    // Left as it is, the review refuses it and says how to repair it.
    const refused = await send(consoleProcess.port, 'POST', '/rules/stray/preview', cookie, fields);
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('Remove keyword');

    await reviewAndSave('stray', {
      ...fields,
      remove: 'keyword',
    });
    const stored = await sandbox.stack.clients.documents.send(
      new GetCommand({ TableName: sandbox.stack.config.tables.rules, Key: { ruleId: 'stray' } }),
    );
    expect(stored.Item).toMatchObject({ ruleId: 'stray', keywords: ['wafer'] });
    expect(stored.Item).not.toHaveProperty('keyword');
  });

  it('repairs a value saved by hand with the wrong type: the form shows it, and saving it as text or emptying it fixes the rule', async () => {
    // Found by review: a query stored as a number showed as an empty box, the empty box counted as
    // "untouched", and every save kept the number: only the CLI could repair the rule.
    await sandbox.stack.clients.documents.send(
      new PutCommand({
        TableName: sandbox.stack.config.tables.rules,
        Item: { ruleId: 'wrong-types', audienceId: 'chips-team', keywords: 'wafer', query: 42 },
      }),
    );
    const page = await get(consoleProcess.port, '/rules/wrong-types', cookie);
    expect(page.body).toContain('The run skips this rule');
    const fields = formFields(page.body, '/rules/wrong-types/preview');
    expect(fields.query).toBe('42');
    expect(fields.keywords).toBe('wafer');
    await reviewAndSave('wrong-types', { ...fields, query: '' });
    const stored = await sandbox.stack.clients.documents.send(
      new GetCommand({ TableName: sandbox.stack.config.tables.rules, Key: { ruleId: 'wrong-types' } }),
    );
    // The emptied query is gone; the keyword, saved as it was shown, is now a list.
    expect(stored.Item).toMatchObject({ ruleId: 'wrong-types', keywords: ['wafer'] });
    expect(stored.Item).not.toHaveProperty('query');

    // A null shows as nothing (not the text "null", which a save made a query), and a list whose
    // terms are not text is written back as text, both on a save that changed nothing.
    await sandbox.stack.clients.documents.send(
      new PutCommand({
        TableName: sandbox.stack.config.tables.rules,
        Item: {
          ruleId: 'wrong-types-2',
          audienceId: 'chips-team',
          keywords: [42, 'wafer'],
          query: null,
          description: null,
        },
      }),
    );
    const second = await get(consoleProcess.port, '/rules/wrong-types-2', cookie);
    const shown = formFields(second.body, '/rules/wrong-types-2/preview');
    expect(shown.query).toBe('');
    expect(shown.description).toBe('');
    expect(shown.keywords?.split(/\r?\n/)).toEqual(['42', 'wafer']);
    await reviewAndSave('wrong-types-2', shown);
    const repaired = await sandbox.stack.clients.documents.send(
      new GetCommand({ TableName: sandbox.stack.config.tables.rules, Key: { ruleId: 'wrong-types-2' } }),
    );
    expect(repaired.Item).toMatchObject({ keywords: ['42', 'wafer'] });
    expect(repaired.Item).not.toHaveProperty('query');
    expect(repaired.Item).not.toHaveProperty('description');
  });

  it('refuses a typed dash and a keyword in query syntax that a save adds, and keeps those the rule has stored', async () => {
    await createRule('dash-added', 'wafer');
    const path = '/rules/dash-added';
    const fields = formFields((await get(consoleProcess.port, path, cookie)).body, `${path}/preview`);
    // An en dash where "-" (NOT) was meant: the run would look for the text "–samsung".
    const dashed = await send(consoleProcess.port, 'POST', `${path}/preview`, cookie, {
      ...fields,
      query: 'chips –samsung',
    });
    expect(dashed.status).toBe(400);
    expect(dashed.body).toContain('Query: ');
    expect(dashed.body).toContain('-samsung');
    const quoted = await send(consoleProcess.port, 'POST', `${path}/preview`, cookie, {
      ...fields,
      keywords: '"interest rate"',
    });
    expect(quoted.status).toBe(400);
    expect(quoted.body).toContain('interest rate');
    expect((await sandbox.cli(['--json', 'rules', 'show', 'dash-added'])).json<{ query?: string }>().query).toBe(
      undefined,
    );

    // Stored that way (by hand, or before the check): every other edit of the rule still saves.
    await setByHand('rules', 'dash-added', 'query', 'chips –samsung');
    const stored = formFields((await get(consoleProcess.port, path, cookie)).body, `${path}/preview`);
    expect(stored.query).toBe('chips –samsung');
    await reviewAndSave('dash-added', { ...stored, description: 'Chips, not Samsung' });
    expect((await sandbox.cli(['--json', 'rules', 'show', 'dash-added'])).json()).toMatchObject({
      query: 'chips –samsung',
      description: 'Chips, not Samsung',
    });
  });

  it('refuses a control or text-direction character a save adds, as the CLI does, and keeps one stored; a restore of it too', async () => {
    await createRule('ctl-added', 'wafer');
    const path = '/rules/ctl-added';
    const fields = formFields((await get(consoleProcess.port, path, cookie)).body, `${path}/preview`);
    const edits: Record<string, string>[] = [{ description: 'Economy \u001b[31mRED' }, { keywords: 'rate\u202Ecut' }];
    for (const edit of edits) {
      const refused = await send(consoleProcess.port, 'POST', `${path}/preview`, cookie, { ...fields, ...edit });
      expect(refused.status, JSON.stringify(edit)).toBe(400);
      expect(refused.body).toContain('holds a control or text-direction character');
    }
    expect((await sandbox.cli(['--json', 'rules', 'show', 'ctl-added'])).json()).not.toHaveProperty('description');

    // Stored that way (by hand): every other edit of the rule still saves, keeping it.
    await setByHand('rules', 'ctl-added', 'description', 'Economy \u001b[31mRED');
    const stored = formFields((await get(consoleProcess.port, path, cookie)).body, `${path}/preview`);
    await reviewAndSave('ctl-added', { ...stored, keywords: 'wafer\r\nfab' });
    expect((await sandbox.cli(['--json', 'rules', 'show', 'ctl-added'])).json()).toMatchObject({
      description: 'Economy \u001b[31mRED',
      keywords: ['wafer', 'fab'],
    });
    // Once it is gone, restoring the version that held it is refused (the console and the CLI plan it alike).
    const current = formFields((await get(consoleProcess.port, path, cookie)).body, `${path}/preview`);
    await reviewAndSave('ctl-added', { ...current, description: 'Economy' });
    const history = await sandbox.cli(['--json', 'rules', 'history', 'ctl-added']);
    const versions = history.json<{ versions: { version: string; item: { description?: string } | null }[] }>()
      .versions;
    const held = versions.find((entry) => entry.item?.description === 'Economy \u001b[31mRED');
    expect(held, history.stdout).toBeDefined();
    const restore = await sandbox.cli(['rules', 'restore', 'ctl-added', '--version', held?.version ?? '', '--yes']);
    expect(restore.code).toBe(2);
    expect(restore.stderr).toContain('cannot be restored: description holds a control or text-direction character');
    expect((await sandbox.cli(['--json', 'rules', 'show', 'ctl-added'])).json()).toMatchObject({
      description: 'Economy',
    });
  });

  it("names a problem as the form does, each whole with its advice: the term, not the schema's keywords[2]", async () => {
    await createRule('form-words', 'wafer');
    const path = '/rules/form-words';
    const fields = formFields((await get(consoleProcess.port, path, cookie)).body, `${path}/preview`);
    const long = `fab${'x'.repeat(240)}`;
    const refused = await send(consoleProcess.port, 'POST', `${path}/preview`, cookie, {
      ...fields,
      keywords: `wafer\r\n\r\nchip\r\n${long}`,
      description: 'd'.repeat(600),
    });
    expect(refused.status).toBe(400);
    const shown = /Not saved: ([^<]*)</.exec(refused.body)?.[1] ?? '';
    expect(shown.split(' · ')).toEqual([
      'Description: must be at most 500 characters; shorten it',
      `Keywords &quot;fab${'x'.repeat(36)}…&quot;: must be at most 200 characters; shorten it`,
    ]);
    expect(refused.body).not.toContain('keywords[');

    // The live check words them alike. A message that quotes its term already is not given it a
    // second time, and what it quotes reaches the page's script with a text-direction character
    // made visible, as every rendered page shows it.
    const page = await get(consoleProcess.port, path, cookie);
    const check = async (edit: Record<string, string>): Promise<string[]> => {
      const checked = await liveCheck(page.body, { ...fields, ...edit });
      expect(checked.status).toBe(200);
      return (JSON.parse(checked.body) as { problems: string[] }).problems;
    };
    const [quoted] = await check({ keywords: '"interest rate"' });
    expect(quoted).toMatch(/^Keywords: '"interest rate"': /);
    expect(await check({ categories: '00*2' })).toEqual([expect.stringMatching(/^Categories: "00\*2": /)]);
    const [hidden] = await check({ keywords: `rate\u202Ecut${'😀'.repeat(50)}` });
    expect(hidden).toMatch(/^Keywords "rate/);
    expect(hidden).not.toContain('\u202E');
    // Cut after whole characters: no half of a surrogate pair is left (it would show as \ud83d).
    expect(hidden).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    expect(hidden).not.toMatch(/\\ud[89a-f]/i);
    expect(hidden).toContain('…');
  });

  it('shows an urgent rule as urgent in the Rules list, as rules list does', async () => {
    await createRule('urgent-listed', 'tsunami');
    expect((await sandbox.cli(['rules', 'update', 'urgent-listed', '--urgent'])).code).toBe(0);
    const list = await get(consoleProcess.port, '/rules?q=urgent-listed', cookie);
    const at = list.body.indexOf('/rules/urgent-listed"');
    expect(at).toBeGreaterThan(-1);
    expect(list.body.slice(at, list.body.indexOf('</tr>', at))).toContain('keywords tsunami; (urgent)');
  });

  it('validates a new rule as its review does: an existing id is not "valid"', async () => {
    const page = await get(consoleProcess.port, '/new-rule', cookie);
    const fields = { ...formFields(page.body, '/new-rule/preview'), ruleId: 'quakes', keywords: 'volcano' };
    const checked = await liveCheck(page.body, fields);
    expect(checked.status).toBe(200);
    const result = JSON.parse(checked.body) as { ok: boolean; problems: string[] };
    expect(result.ok).toBe(false);
    expect(result.problems.join(' ')).toContain('rule quakes exists already');
    const review = await send(consoleProcess.port, 'POST', '/new-rule/preview', cookie, fields);
    expect(review.status).toBe(400);
    expect(review.body).toContain('rule quakes exists already');
  });

  it('explains the delivery for the audience the address names, even one that does not exist', async () => {
    const key = await earthquakeKey();
    const page = await get(
      consoleProcess.port,
      `/rules/quakes/explain?article=${encodeURIComponent(key)}&since=2d&audience=no-such-audience`,
      cookie,
    );
    expect(page.status, page.body.slice(0, 2000)).toBe(200);
    expect(page.body).toContain('Delivery to no-such-audience');
    expect(page.body).toContain('audience no-such-audience does not exist');
  });

  it("labels every history column, and a deleted rule's history does not link to a missing page", async () => {
    await createRule('short-lived', 'x');
    const live = await get(consoleProcess.port, '/rules/short-lived/history', cookie);
    expect(live.body).toContain('href="/rules/short-lived">Back to the rule</a>');
    const headers = [...live.body.matchAll(/<th scope="col">([\s\S]*?)<\/th>/g)].map((match) => match[1] ?? '');
    expect(headers.length).toBeGreaterThan(0);
    for (const header of headers) expect(header.replace(/<[^>]*>/g, '').trim()).not.toBe('');

    const deleted = await sandbox.cli(['rules', 'delete', 'short-lived', '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    const gone = await get(consoleProcess.port, '/rules/short-lived/history', cookie);
    expect(gone.status).toBe(200);
    expect(gone.body).not.toContain('href="/rules/short-lived"');
    expect(gone.body).toContain('does not exist now');
  });

  it('refuses a review when the rule was edited outside the console after the form was opened', async () => {
    await createRule('opened-edit', 'wafer');
    const page = await get(consoleProcess.port, '/rules/opened-edit', cookie);
    // The form still shows the old keywords, which the user did not touch.
    await editOutsideConsole('opened-edit', ['wafer', 'foundry']);
    const review = await send(consoleProcess.port, 'POST', '/rules/opened-edit/preview', cookie, {
      ...formFields(page.body, '/rules/opened-edit/preview'),
      description: 'Wafer news',
    });
    expect(review.status, review.body.slice(0, 2000)).toBe(409);
    expect(review.body).toContain('changed since you opened it');
    const after = (await sandbox.cli(['--json', 'rules', 'show', 'opened-edit'])).json<Record<string, unknown>>();
    expect(after.keywords).toEqual(['wafer', 'foundry']);
  });

  it('saves an edit of a rule whose lists are DynamoDB string sets, keeping them as they were', async () => {
    // The run reads a list written as L or SS (the DynamoDB console writes SS).
    await sandbox.stack.clients.documents.send(
      new PutCommand({
        TableName: sandbox.stack.config.tables.rules,
        Item: { ruleId: 'string-set', audienceId: 'chips-team', keywords: new Set(['wafer', 'foundry']) },
      }),
    );
    // The list's text filter finds a term of a set (not only the rule id, which holds "string").
    const filtered = await get(consoleProcess.port, '/rules?q=foundry', cookie);
    expect(filtered.body).toContain('href="/rules/string-set"');
    // It searches what is written, quotes included, and not the attributes' names.
    const quoted = await get(consoleProcess.port, `/rules?q=${encodeURIComponent('"memory chips"')}`, cookie);
    expect(quoted.body).toContain('href="/rules/markets-chip-exports"');
    const named = await get(consoleProcess.port, '/rules?q=excludekeywords', cookie);
    expect(named.body).toContain('No rule fits the filter.');
    const page = await get(consoleProcess.port, '/rules/string-set', cookie);
    await reviewAndSave('string-set', {
      ...formFields(page.body, '/rules/string-set/preview'),
      description: 'Wafer news',
    });
    const stored = await sandbox.stack.clients.documents.send(
      new GetCommand({ TableName: sandbox.stack.config.tables.rules, Key: { ruleId: 'string-set' } }),
    );
    expect(stored.Item?.description).toBe('Wafer news');
    expect(stored.Item?.keywords).toEqual(new Set(['wafer', 'foundry']));
  });

  it('opens and saves a rule called "new": the new-rule form has a path no rule id can take', async () => {
    await createRule('new', 'lithography');
    const list = await get(consoleProcess.port, '/rules?q=lithography', cookie);
    expect(list.body).toContain('href="/rules/new"');
    const page = await get(consoleProcess.port, '/rules/new', cookie);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<h1>Rule new</h1>');
    await reviewAndSave('new', { ...formFields(page.body, '/rules/new/preview'), description: 'Chip-making tools' });
    const stored = await sandbox.stack.clients.documents.send(
      new GetCommand({ TableName: sandbox.stack.config.tables.rules, Key: { ruleId: 'new' } }),
    );
    expect(stored.Item).toMatchObject({ description: 'Chip-making tools', keywords: ['lithography'] });
    const form = await get(consoleProcess.port, '/new-rule', cookie);
    expect(form.body).toContain('<h1>New rule</h1>');
  });

  it('refuses to save over an edit made outside the console after the review, though its version is the same', async () => {
    await createRule('outside-edit', 'wafer');
    const page = await get(consoleProcess.port, '/rules/outside-edit', cookie);
    const review = await send(consoleProcess.port, 'POST', '/rules/outside-edit/preview', cookie, {
      ...formFields(page.body, '/rules/outside-edit/preview'),
      description: 'Wafer news',
    });
    expect(review.status, review.body.slice(0, 2000)).toBe(200);
    await editOutsideConsole('outside-edit', ['wafer', 'foundry']);
    const saved = await send(
      consoleProcess.port,
      'POST',
      '/rules/outside-edit/save',
      cookie,
      formFields(review.body, '/rules/outside-edit/save'),
    );
    expect(saved.status, saved.body.slice(0, 2000)).toBe(409);
    expect(saved.body).toContain('nothing was saved');
    const after = (await sandbox.cli(['--json', 'rules', 'show', 'outside-edit'])).json<Record<string, unknown>>();
    expect(after.keywords).toEqual(['wafer', 'foundry']);
    expect(after.description).toBeUndefined();
  });

  it('shows a rule of a missing audience as the run judges it, and keeps its audience in the form', async () => {
    const audience = await sandbox.cli(['audiences', 'create', 'gone-soon', '--name', 'Gone soon']);
    expect(audience.code, audience.stderr).toBe(0);
    await createRule('orphan', 'volcano', 'gone-soon');
    // Deleted by hand (the CLI refuses while rules use it).
    await sandbox.stack.clients.documents.send(
      new DeleteCommand({ TableName: sandbox.stack.config.tables.audiences, Key: { audienceId: 'gone-soon' } }),
    );

    const list = await get(consoleProcess.port, '/rules', cookie);
    const row = list.body.slice(
      list.body.indexOf('/rules/orphan"'),
      list.body.indexOf('</tr>', list.body.indexOf('/rules/orphan"')),
    );
    expect(row).toContain('INVALID');
    expect(row).toContain('no valid audience');

    const page = await get(consoleProcess.port, '/rules/orphan', cookie);
    expect(page.body).toContain('The run skips this rule');
    expect(page.body).toContain('<option value="gone-soon" selected>gone-soon (does not exist)</option>');
    expect(formFields(page.body, '/rules/orphan/preview').audienceId).toBe('gone-soon');
    // Saving it as it is cannot move it to another audience: the review refuses it.
    const review = await send(
      consoleProcess.port,
      'POST',
      '/rules/orphan/preview',
      cookie,
      formFields(page.body, '/rules/orphan/preview'),
    );
    expect(review.status).toBe(400);
    expect(review.body).toContain('audience gone-soon does not exist');
  });

  /** The rules list's row of `ruleId`. */
  async function listRow(ruleId: string): Promise<string> {
    const list = await get(consoleProcess.port, '/rules', cookie);
    const start = list.body.indexOf(`/rules/${ruleId}"`);
    expect(start, `a row for ${ruleId}`).toBeGreaterThan(-1);
    return list.body.slice(start, list.body.indexOf('</tr>', start));
  }

  it('says a rule of a disabled audience does not run, as rules list does', async () => {
    const audience = await sandbox.cli(['audiences', 'create', 'resting', '--name', 'Resting desk']);
    expect(audience.code, audience.stderr).toBe(0);
    await createRule('resting-rule', 'glacier', 'resting');
    expect(await listRow('resting-rule')).toContain('<td>ok</td>');
    const disabled = await sandbox.cli(['audiences', 'update', 'resting', '--disable']);
    expect(disabled.code, disabled.stderr).toBe(0);

    const row = await listRow('resting-rule');
    expect(row).toContain('audience &quot;resting&quot; is disabled');
    expect(row).not.toContain('INVALID');
    const cli = await sandbox.cli(['--json', 'rules', 'list', '--audience', 'resting']);
    expect(cli.json<{ problem?: string }[]>()[0]?.problem).toBe('audience "resting" is disabled');
    const page = await get(consoleProcess.port, '/rules/resting-rule', cookie);
    expect(page.body).toContain('The rule does not run while audience &quot;resting&quot; is disabled');
  });

  it('shows a hand-written enabled that is not true or false as not enabled, and its form unticked', async () => {
    await createRule('odd-flag', 'aurora');
    await setByHand('rules', 'odd-flag', 'enabled', 'false');
    const row = await listRow('odd-flag');
    expect(row).toContain('<td>no</td>');
    expect(row).toContain('INVALID');
    const page = await get(consoleProcess.port, '/rules/odd-flag', cookie);
    // Saved as the form stands, the rule stays off: the review shows "false" becoming false.
    const fields = formFields(page.body, '/rules/odd-flag/preview');
    expect(fields.enabled).toBeUndefined();
    const review = await send(consoleProcess.port, 'POST', '/rules/odd-flag/preview', cookie, fields);
    expect(review.status, review.body.slice(0, 2000)).toBe(200);
    expect(review.body).toContain('<td>enabled</td><td><del>&quot;false&quot;</del></td><td><ins>false</ins></td>');
    expect(review.body).toContain('1 change(s)');
  });

  it('shows a test send at an address of its own: reloading it shows the result again and sends nothing', async () => {
    const topic = `${sandbox.descriptor.names.audienceTopicPrefix}chips-team`;
    const published = async () => {
      const state = (await motoState(sandbox.descriptor.endpoint)) as {
        sns?: { Topic?: { arn: string; sent_notifications?: unknown[] }[] };
      };
      return state.sns?.Topic?.find((candidate) => candidate.arn.endsWith(`:${topic}`))?.sent_notifications?.length;
    };
    const before = (await published()) ?? 0;
    const sent = await send(consoleProcess.port, 'POST', '/audiences/chips-team/test-send', cookie, { _csrf: csrf });
    expect(sent.status, sent.body.slice(0, 2000)).toBe(303);
    expect(sent.location).toMatch(/^\/audiences\/chips-team\/test-send\/[0-9a-f-]{36}$/);
    expect(await published()).toBe(before + 1);
    const shown = await get(consoleProcess.port, sent.location ?? '', cookie);
    const again = await get(consoleProcess.port, sent.location ?? '', cookie);
    for (const page of [shown, again]) {
      expect(page.status).toBe(200);
      expect(page.body).toContain('[TEST]');
    }
    expect(again.body).toBe(shown.body);
    expect(await published()).toBe(before + 1);
    // A result the console does not keep (restarted, or another audience's) says so.
    const unknown = sent.location?.replace('chips-team', 'markets-desk') ?? '';
    expect((await get(consoleProcess.port, unknown, cookie)).status).toBe(404);
  });

  it('lists an audience whose topic was deleted as such, and a failed test send links to the repair check', async () => {
    const created = await sandbox.cli(['audiences', 'create', 'topic-gone', '--name', 'Topic gone']);
    expect(created.code, created.stderr).toBe(0);
    const topicArn = String((await sandbox.audience('topic-gone'))?.topicArn);
    await sandbox.stack.clients.sns.send(new DeleteTopicCommand({ TopicArn: topicArn }));

    const list = await get(consoleProcess.port, '/audiences', cookie);
    const at = list.body.indexOf('/audiences/topic-gone"');
    const row = list.body.slice(at, list.body.indexOf('</tr>', at));
    expect(row).toContain('topic missing');
    expect(row).not.toMatch(/>ok</);

    const sent = await send(consoleProcess.port, 'POST', '/audiences/topic-gone/test-send', cookie, { _csrf: csrf });
    expect(sent.status).toBe(400);
    expect(sent.body).toContain('href="/audiences/topic-gone/repair"');

    // Its page says the fix for a deleted topic: a repair makes it again.
    const page = await get(consoleProcess.port, '/audiences/topic-gone', cookie);
    expect(page.body).toContain('does not exist: alerts for this audience are parked');
    expect(page.body).toContain('audiences repair topic-gone');
  });

  it('tells an audience stored without a topic to give it one (a repair cannot)', async () => {
    const created = await sandbox.cli(['audiences', 'create', 'topic-less', '--name', 'Topic less']);
    expect(created.code, created.stderr).toBe(0);
    await sandbox.stack.clients.documents.send(
      new UpdateCommand({
        TableName: sandbox.stack.config.tables.audiences,
        Key: { audienceId: 'topic-less' },
        UpdateExpression: 'REMOVE topicArn',
      }),
    );
    const page = await get(consoleProcess.port, '/audiences/topic-less', cookie);
    expect(page.status).toBe(200);
    expect(page.body).toContain('the audience has no topicArn');
    expect(page.body).toContain('audiences update topic-less --topic-arn &lt;arn&gt;');
    expect(page.body).not.toContain('repair the audience');
    expect(page.body).not.toContain('undefined');
  });

  it('replays the window its dry run showed, and says what to fix in the form when it cannot run one', async () => {
    const dry = await get(consoleProcess.port, '/runs/replay?from=6h&to=&audience=', cookie);
    expect(dry.status, dry.body.slice(0, 2000)).toBe(200);
    const confirm = formFields(dry.body, '/runs/replay', 'post');
    // The window as the dry run worked it out, not "6h back" again when Confirm is pressed.
    expect(confirm.from).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(confirm.to).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Date.parse(confirm.to ?? '') - Date.parse(confirm.from ?? '')).toBe(6 * 3_600_000);

    const empty = await get(consoleProcess.port, '/runs/replay?from=&to=&audience=', cookie);
    expect(empty.status).toBe(400);
    expect(empty.body).toContain('Give From');
    expect(empty.body).not.toContain('Nothing to replay');

    const garbage = await get(consoleProcess.port, '/runs/replay?from=garbage&to=&audience=', cookie);
    expect(garbage.status).toBe(400);
    expect(garbage.body).toContain('Dry run not done');
    expect(garbage.body).toContain('From &quot;garbage&quot;');
    expect(garbage.body).not.toContain('--from');
    expect(garbage.body).not.toContain('Nothing to replay');

    // A value that looks like an option stays the field's value (it was read as the CLI's own
    // --json, and the next flag became the value: 'To "--dry-run"').
    const optionLike = await get(consoleProcess.port, '/runs/replay?from=6h&to=--json&audience=', cookie);
    expect(optionLike.status).toBe(400);
    expect(optionLike.body).toContain('To &quot;--json&quot;');
    expect(optionLike.body).not.toContain('--dry-run');
    const audienceLike = await get(
      consoleProcess.port,
      '/runs/replay?from=6h&to=&audience=--to-topic-without-subscribers',
      cookie,
    );
    expect(audienceLike.body).toContain('--to-topic-without-subscribers');
    expect(audienceLike.body).not.toContain('To-topic');

    // An audience that does not exist is not found, as the CLI's exit 3 says, not a conflict.
    const nobody = await get(consoleProcess.port, '/runs/replay?from=6h&to=&audience=nobody', cookie);
    expect(nobody.status, nobody.body.slice(0, 2000)).toBe(404);
    expect(nobody.body).toContain('audience nobody does not exist');
  });

  /** The key of a recent sandbox article about earthquakes (the fixture provider has several). */
  async function earthquakeKey(): Promise<string> {
    const found = await sandbox.cli(['--json', 'articles', 'search', '--text', 'earthquake', '--since', '2d']);
    expect(found.code, found.stderr).toBe(0);
    const key = found.json<{ articles: { key: string }[] }>().articles[0]?.key;
    expect(key).toBeDefined();
    return key ?? '';
  }

  /** One audience's section of an article page. */
  function sectionOf(page: string, audienceId: string): string {
    const at = page.indexOf(`<section aria-labelledby="a-${audienceId}">`);
    expect(at, `a section for ${audienceId}`).toBeGreaterThan(-1);
    return page.slice(at, page.indexOf('</section>', at));
  }

  it('judges an article per audience as the run does: any urgent matching rule makes the match urgent', async () => {
    // Quiet hours around now (UTC), so a match that is not urgent is held and an urgent one is sent.
    const clock = (at: number) => new Date(at).toISOString().slice(11, 16);
    const now = Date.now();
    const quiet = `${clock(now - 2 * 3_600_000)}-${clock(now + 2 * 3_600_000)}`;
    const created = await sandbox.cli([
      'audiences',
      'create',
      'quiet-desk',
      '--name',
      'Quiet desk',
      '--time-zone',
      'UTC',
      '--collapse',
      'none',
      '--quiet-hours',
      quiet,
    ]);
    expect(created.code, created.stderr).toBe(0);
    // Sorted by id, the first matching rule is not urgent; a later one is.
    for (const [ruleId, urgent] of [
      ['quiet-a', false],
      ['quiet-b', true],
    ] as const) {
      const rule = await sandbox.cli([
        'rules',
        'create',
        ruleId,
        '--audience',
        'quiet-desk',
        '--keywords',
        'earthquake',
        ...(urgent ? ['--urgent'] : []),
      ]);
      expect(rule.code, rule.stderr).toBe(0);
    }
    const key = await earthquakeKey();
    const page = await get(consoleProcess.port, `/articles/view?key=${encodeURIComponent(key)}&since=2d`, cookie);
    expect(page.status, page.body.slice(0, 2000)).toBe(200);
    const section = sectionOf(page.body, 'quiet-desk');
    expect(section).toContain('Sent at once.');
    expect(section).not.toContain('Held (');
    expect(section).toContain('quiet-a, quiet-b');
    // What either rule's own explanation says the delivery does: the run's one match, urgent.
    for (const ruleId of ['quiet-a', 'quiet-b']) {
      const explained = await sandbox.cli(['--json', 'rules', 'explain', ruleId, '--article', key, '--since', '2d']);
      expect(explained.code, explained.stderr).toBe(0);
      expect(explained.json(), ruleId).toMatchObject({ delivery: { outcome: 'send' } });
    }
  });

  it('says the run skips an audience that is invalid, and why, instead of "matches"', async () => {
    const created = await sandbox.cli(['audiences', 'create', 'on-mars', '--name', 'On Mars']);
    expect(created.code, created.stderr).toBe(0);
    await createRule('mars-quakes', 'earthquake', 'on-mars');
    // Written by hand, as in the DynamoDB console (the CLI refuses an unknown zone).
    await setByHand('audiences', 'on-mars', 'timeZone', 'Mars/Olympus');
    const key = await earthquakeKey();
    const page = await get(consoleProcess.port, `/articles/view?key=${encodeURIComponent(key)}&since=2d`, cookie);
    expect(page.status, page.body.slice(0, 2000)).toBe(200);
    const section = sectionOf(page.body, 'on-mars');
    expect(section).not.toContain('verdict-match');
    expect(section).toContain('The run skips this audience');
    expect(section).toContain('timeZone: must be an IANA time zone');
  });

  it('lists a rule whose audience has no item, and says the run skips it (it was missing from the page)', async () => {
    await createRule('orphan-quakes', 'earthquake');
    await setByHand('rules', 'orphan-quakes', 'audienceId', 'gone-audience');
    const key = await earthquakeKey();
    const page = await get(consoleProcess.port, `/articles/view?key=${encodeURIComponent(key)}&since=2d`, cookie);
    expect(page.status, page.body.slice(0, 2000)).toBe(200);
    const section = sectionOf(page.body, 'gone-audience');
    expect(section).toContain('orphan-quakes');
    expect(section).toContain('it does not exist (no item in the audiences table): the run skips its rules');
    expect(section).not.toContain('verdict-match');
    // The rules list filtered by that audience keeps the filter in its form (it showed "All").
    const listed = await get(consoleProcess.port, '/rules?audience=gone-audience', cookie);
    expect(listed.body).toContain('orphan-quakes');
    expect(listed.body).toContain('<option value="gone-audience" selected>gone-audience (does not exist)</option>');
    const deleted = await sandbox.cli(['rules', 'delete', 'orphan-quakes', '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
  });

  it('asks for an article key when one is sent empty, and words window errors as the form does', async () => {
    const opened = await get(consoleProcess.port, '/rules/quakes/explain', cookie);
    expect(opened.status).toBe(200);
    expect(opened.body).not.toContain('class="problem"');
    const empty = await get(consoleProcess.port, '/rules/quakes/explain?article=&since=2d', cookie);
    expect(empty.status).toBe(400);
    expect(empty.body).toContain('give the key of an article');
    const view = await get(consoleProcess.port, '/articles/view?key=', cookie);
    expect(view.status).toBe(400);
    expect(view.body).toContain('give the key of an article');
    const wide = await get(consoleProcess.port, '/rules/quakes/explain?article=id:x&since=30d', cookie);
    expect(wide.status).toBe(400);
    // What does not exist answers 404, as the CLI exits 3 for it; a malformed ask stays 400.
    const [noVersion, noAudience, badVersion] = await Promise.all([
      get(consoleProcess.port, '/rules/quakes/restore?version=99', cookie),
      get(consoleProcess.port, '/deliveries?audience=no-such-audience', cookie),
      get(consoleProcess.port, '/rules/quakes/restore?version=x', cookie),
    ]);
    expect(noVersion.status).toBe(404);
    expect(noVersion.body).toContain('has no version 99');
    expect(noAudience.status).toBe(404);
    // The form shows the audience the address named, not the first one listed.
    expect(noAudience.body).toContain(
      '<option value="no-such-audience" selected>no-such-audience (does not exist)</option>',
    );
    expect(badVersion.status).toBe(400);
    expect(badVersion.body).toContain('version &quot;x&quot; is not a version');
    expect(badVersion.body).not.toContain('--version');
    expect(wide.body).toContain('Look back');
    expect(wide.body).not.toContain('--since');
    // The article pages too: a malformed look-back is the request's fault (400), worded as the form.
    for (const path of ['/articles/view?key=id:x&since=abc', '/articles?text=x&since=abc']) {
      const bad = await get(consoleProcess.port, path, cookie);
      expect(bad.status, path).toBe(400);
      expect(bad.body, path).toContain('Look back');
      expect(bad.body, path).not.toContain('--since');
    }
  });
});
