/**
 * The deliveries page: per audience, its delivery ledger over a window (sent, held, released,
 * collapsed, parked) and its subscribers, as `deliveries <audience> --sent` shows them.
 */
import type { Hono } from 'hono';
import { html } from 'hono/html';
import { listItems } from '../../items.ts';
import { sentHistory, sentSince } from '../../workbench/sent.ts';
import { audienceTableOf } from '../../workbench/tables.ts';
import { type ConsoleServices, render, statusOf } from '../context.ts';
import { problem, table, when } from '../views/layout.ts';

export function deliveryPages(app: Hono, services: ConsoleServices): void {
  const { target } = services;
  app.get('/deliveries', async (c) => {
    const audiences = (await listItems(target.clients.documents, audienceTableOf(target)))
      .map((item) => String(item.audienceId))
      .sort();
    const audienceId = c.req.query('audience') || audiences[0] || '';
    const since = c.req.query('since') || '24h';
    // An audience the address names that is not stored stays selected, marked, rather than the
    // browser showing the first one listed beside its error.
    const unknown = audienceId !== '' && !audiences.includes(audienceId);
    const options = unknown ? [audienceId, ...audiences] : audiences;
    const form = html`<form class="filters" method="get" action="/deliveries">
  <label>Audience <select name="audience">${options.map((id) => html`<option value="${id}"${id === audienceId ? html` selected` : ''}>${id}${unknown && id === audienceId ? ' (does not exist)' : ''}</option>`)}</select></label>
  <label>Since <input type="text" name="since" value="${since}"></label>
  <button type="submit">Show</button>
</form>`;
    if (audienceId === '')
      return render(
        c,
        services,
        { title: 'Deliveries', section: 'deliveries' },
        html`${form}<p class="empty">No audience yet.</p>`,
      );
    try {
      const now = services.now();
      const history = await sentHistory(
        target,
        audienceId,
        await sentSince(target, since, 'since', now),
        200,
        services.log,
      );
      return render(
        c,
        services,
        { title: `Deliveries: ${audienceId}`, section: 'deliveries' },
        html`${form}
<h2>Subscribers</h2>
${
  history.topicProblem === undefined
    ? table(
        'SNS delivers every message it accepted to each confirmed subscriber',
        ['Protocol', 'Endpoint', 'Status'],
        history.subscribers.map((subscriber) => [subscriber.protocol, subscriber.endpoint, subscriber.status]),
        'No subscribers.',
      )
    : problem(`the topic cannot be read: ${history.topicProblem}`)
}
<h2>Ledger since ${when(history.since)}</h2>
${table(
  `${history.total} notification(s)${history.total > history.entries.length ? ` (newest ${history.entries.length})` : ''}`,
  ['When', 'Article', 'Outcome', 'Rules'],
  history.entries.map((entry) => [when(entry.at), entry.articleKey, entry.outcome, entry.ruleIds.join(', ')]),
  'Nothing in that window.',
)}`,
      );
    } catch (error) {
      return render(
        c,
        services,
        { title: 'Deliveries', section: 'deliveries' },
        html`${form}${problem((error as Error).message)}`,
        statusOf(error, 400),
      );
    }
  });
}
