/**
 * The audiences pages and the holds page: settings, subscribers (their addresses shown here, on
 * the page about them; webhook URLs masked), holds with release times, test send and repair (a
 * dry run first, then a confirmation).
 */
import { randomUUID } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import pLimit from 'p-limit';
import { parseAudience } from '#core/model';
import { topicSubscriptions } from '../../audience-topics.ts';
import { getItem, listItems } from '../../items.ts';
import { displayEndpoint, recordedAs } from '../../subscriptions.ts';
import { listHolds } from '../../workbench/holds.ts';
import { repairAudience } from '../../workbench/repair.ts';
import { audienceTableOf } from '../../workbench/tables.ts';
import { type TestSendResult, testSend } from '../../workbench/test-send.ts';
import { topicChecks, topicProblemWithFix, topicState } from '../../workbench/topics.ts';
import { type ConsoleServices, render, statusOf } from '../context.ts';
import {
  type AudienceRow,
  actions,
  audiencesList,
  holdsTable,
  repairPlan,
  settings,
  testSendResult,
} from '../views/audiences.ts';
import { problem, table } from '../views/layout.ts';

/** How many test results the console keeps for their pages (a reload shows one, never resends). */
const KEPT_TEST_RESULTS = 20;

export function audiencePages(app: Hono, services: ConsoleServices): void {
  const { target } = services;
  // The results of the tests this console sent, newest last (see the test-send POST).
  const sentTests = new Map<string, { readonly audienceId: string; readonly result: TestSendResult }>();

  app.get('/audiences', async (c) => {
    const items = (await listItems(target.clients.documents, audienceTableOf(target))).sort((a, b) =>
      String(a.audienceId).localeCompare(String(b.audienceId)),
    );
    // Whether each valid audience's topic is still there, as `audiences list` says it: the run
    // parks every alert of an audience whose topic was deleted, so "ok" would be wrong.
    const limit = pLimit(topicChecks);
    const topics = await Promise.all(
      items.map((item) => {
        const parsed = parseAudience(item);
        return parsed.ok ? limit(() => topicState(target.clients.sns, parsed.value.topicArn)) : undefined;
      }),
    );
    const rows: AudienceRow[] = items.map((item, index) => {
      const parsed = parseAudience(item);
      const audience = parsed.ok ? parsed.value : undefined;
      const topic = topics[index];
      return {
        audienceId: String(item.audienceId),
        name: audience?.name ?? '',
        mode: audience?.deliveryMode ?? '',
        timeZone: audience?.timeZone ?? '',
        quietHours: audience?.quietHours === undefined ? '' : `${audience.quietHours.start}-${audience.quietHours.end}`,
        budget: audience?.dailyBudget === undefined ? '' : String(audience.dailyBudget),
        status: !parsed.ok
          ? `INVALID: ${parsed.rejected.reason}`
          : topic !== undefined
            ? `${topic.status}: ${topic.problem}`
            : audience?.enabled === false
              ? 'disabled'
              : 'ok',
      };
    });
    return render(c, services, { title: 'Audiences', section: 'audiences' }, audiencesList(rows));
  });

  app.get('/holds', async (c) => {
    const { holds, invalid } = await listHolds(target, undefined, services.now(), services.log);
    return render(
      c,
      services,
      { title: 'Holds', section: 'holds' },
      html`${invalid.map((line) => problem(line))}${holdsTable(holds, true)}
<p>Change quiet hours, delivery mode, digest times or the daily budget (news-alerts audiences update) and the release times here change at once; the next run sends what the settings no longer hold.</p>`,
    );
  });

  app.get('/audiences/:id', async (c) => {
    const audienceId = c.req.param('id');
    const item = await getItem(target.clients.documents, audienceTableOf(target), audienceId);
    const title = `Audience ${audienceId}`;
    if (item === undefined)
      return render(
        c,
        services,
        { title, section: 'audiences' },
        problem(`audience ${audienceId} does not exist`),
        404,
      );
    const parsed = parseAudience(item);
    const entries: [string, string][] = parsed.ok
      ? [
          ['name', parsed.value.name ?? ''],
          ['enabled', String(parsed.value.enabled)],
          ['delivery mode', parsed.value.deliveryMode],
          ['digest times', parsed.value.digestTimes.join(', ')],
          ['time zone', parsed.value.timeZone],
          [
            'quiet hours',
            parsed.value.quietHours === undefined
              ? 'none'
              : `${parsed.value.quietHours.start}-${parsed.value.quietHours.end}`,
          ],
          ['urgent categories', (parsed.value.urgentCategories ?? []).join(', ') || 'none'],
          ['daily budget', parsed.value.dailyBudget === undefined ? 'none' : String(parsed.value.dailyBudget)],
          ['story collapse', parsed.value.collapse],
          ['updates', parsed.value.updates],
          ['locale', parsed.value.locale ?? '(default)'],
          ['topic', parsed.value.topicArn],
        ]
      : [['status', `INVALID: ${parsed.rejected.reason}`]];
    // An audience stored without a topic has no subscribers to ask SNS for: it is told how to
    // give it one, as `audiences show` says.
    let subscribers = problem(topicProblemWithFix(audienceId, item.topicArn).problem);
    if (typeof item.topicArn === 'string' && item.topicArn !== '') {
      try {
        const list = await topicSubscriptions(target.clients.sns, item.topicArn);
        subscribers = table(
          'Subscribers of the topic',
          ['Protocol', 'Endpoint', 'Status'],
          list.map((subscription) => [
            recordedAs(target, subscription)[0] === 'slack' ? 'slack' : (subscription.Protocol ?? ''),
            displayEndpoint(subscription),
            subscription.SubscriptionArn === 'PendingConfirmation' ? 'pending confirmation' : 'confirmed',
          ]),
          'No subscribers.',
        );
      } catch (error) {
        subscribers = problem(topicProblemWithFix(audienceId, item.topicArn, error).problem);
      }
    }
    // An invalid audience's holds are listed too: they wait until it is fixed.
    const holds = (await listHolds(target, audienceId, services.now(), services.log)).holds;
    return render(
      c,
      services,
      { title, section: 'audiences' },
      html`<h2>Settings</h2>${settings(entries)}
<h2>Subscribers</h2>${subscribers}
<h2>Holds</h2>${holdsTable(holds, false)}
${actions(audienceId, services.keys.csrf)}`,
    );
  });

  app.post('/audiences/:id/test-send', async (c) => {
    const audienceId = c.req.param('id');
    const title = `Test send: ${audienceId}`;
    try {
      const result = await testSend(target, audienceId, services.now());
      if (result.refused !== undefined) {
        return render(
          c,
          services,
          { title, section: 'audiences' },
          html`${problem(`SNS refused the test (${result.refused.code}: ${result.refused.reason})`)}<p><a href="/audiences/${encodeURIComponent(audienceId)}/repair">Check and repair the topic</a></p>`,
          409,
        );
      }
      // Post/Redirect/Get: the result has an address of its own, so reloading it (or going back
      // to it) shows what was sent instead of sending the test to every subscriber again.
      const resultId = randomUUID();
      sentTests.set(resultId, { audienceId, result });
      for (const oldest of sentTests.keys()) {
        if (sentTests.size <= KEPT_TEST_RESULTS) break;
        sentTests.delete(oldest);
      }
      return c.redirect(`/audiences/${encodeURIComponent(audienceId)}/test-send/${resultId}`, 303);
    } catch (error) {
      // The test could not be sent (a deleted topic, an invalid audience): the repair check says
      // what is wrong with the topic and fixes it, as console.md promises.
      return render(
        c,
        services,
        { title, section: 'audiences' },
        html`${problem((error as Error).message)}<p><a href="/audiences/${encodeURIComponent(audienceId)}/repair">Check and repair the topic</a></p>`,
        statusOf(error, 400),
      );
    }
  });

  app.get('/audiences/:id/test-send/:result', (c) => {
    const audienceId = c.req.param('id');
    const sent = sentTests.get(c.req.param('result'));
    const title = `Test send: ${audienceId}`;
    if (sent === undefined || sent.audienceId !== audienceId) {
      return render(
        c,
        services,
        { title, section: 'audiences' },
        html`${problem(`this test result is no longer kept (the console keeps the last ${KEPT_TEST_RESULTS}, until it stops); send another from the audience's page`)}<p><a href="/audiences/${encodeURIComponent(audienceId)}">Audience ${audienceId}</a></p>`,
        404,
      );
    }
    return render(c, services, { title, section: 'audiences' }, testSendResult(sent.result));
  });

  const repair = (apply: boolean) => async (c: Context) => {
    const audienceId = c.req.param('id') ?? '';
    const title = `Repair ${audienceId}`;
    try {
      const report = await repairAudience(
        target,
        audienceId,
        { actor: services.actor, now: services.now() },
        services.log,
        {
          apply,
          warn: (text) => services.log.warn(text),
        },
      );
      return render(
        c,
        services,
        { title, section: 'audiences', flash: apply ? 'Repaired.' : undefined },
        repairPlan(report, services.keys.csrf, apply),
      );
    } catch (error) {
      return render(
        c,
        services,
        { title, section: 'audiences' },
        problem((error as Error).message),
        statusOf(error, 400),
      );
    }
  };
  app.get('/audiences/:id/repair', repair(false));
  app.post('/audiences/:id/repair', repair(true));
}
