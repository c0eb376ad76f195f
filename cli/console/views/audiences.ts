/** Templates of the audiences pages: list, audience (settings, subscribers, holds, test send, repair). */
import { html } from 'hono/html';
import type { AudienceHolds } from '#core/workbench/holds';
import { goesOut } from '../../workbench/holds.ts';
import type { RepairReport } from '../../workbench/repair.ts';
import type { TestSendResult } from '../../workbench/test-send.ts';
import { csrfField, type Html, table, when } from './layout.ts';

export interface AudienceRow {
  readonly audienceId: string;
  readonly name: string;
  readonly mode: string;
  readonly timeZone: string;
  readonly quietHours: string;
  readonly budget: string;
  readonly status: string;
}

export function audiencesList(rows: readonly AudienceRow[]): Html {
  return table(
    `${rows.length} audience(s)`,
    ['Audience', 'Name', 'Mode', 'Time zone', 'Quiet hours', 'Daily budget', 'Status'],
    rows.map((row) => [
      html`<a href="/audiences/${encodeURIComponent(row.audienceId)}">${row.audienceId}</a>`,
      row.name,
      row.mode,
      row.timeZone,
      row.quietHours,
      row.budget,
      row.status,
    ]),
    'No audience yet.',
  );
}

export function settings(entries: readonly (readonly [string, string])[]): Html {
  return html`<dl class="fields">${entries.map(([name, value]) => html`<dt>${name}</dt><dd>${value}</dd>`)}</dl>`;
}

export function holdsTable(holds: readonly AudienceHolds[], withAudience: boolean): Html {
  const rows = holds.flatMap((audience) =>
    audience.held.map((held) => [
      ...(withAudience
        ? [
            audience.blocked?.kind === 'deleted'
              ? `${audience.audienceId} (deleted)`
              : html`<a href="/audiences/${encodeURIComponent(audience.audienceId)}">${audience.audienceId}</a>`,
          ]
        : []),
      held.reason,
      when(held.heldAt),
      goesOut(held, audience, when),
      held.articleKey,
      held.title,
    ]),
  );
  return table(
    'Held alerts and when each goes out (planned from the current settings, as the next run plans it)',
    [...(withAudience ? ['Audience'] : []), 'Reason', 'Held', 'Goes out', 'Article', 'Title'],
    rows,
    'Nothing is held.',
  );
}

export function actions(audienceId: string, csrf: string): Html {
  const id = encodeURIComponent(audienceId);
  return html`<h2>Actions</h2>
<form class="inline" method="post" action="/audiences/${id}/test-send">${csrfField(csrf)}<button type="submit">Send a test notification</button></form>
<a href="/audiences/${id}/repair">Check and repair the topic</a> ·
<a href="/deliveries?audience=${id}">Deliveries</a> ·
<a href="/rules?audience=${id}">Rules</a>`;
}

export function testSendResult(result: TestSendResult): Html {
  return html`<p>Sent “${result.subject}” (SNS message ${result.messageId ?? '?'}; test key ${result.testKey}). Never written to the ledger.</p>
${table(
  'What each subscription accepted',
  ['Protocol', 'Endpoint', 'Result', 'Detail'],
  result.channels.map((channel) => [channel.protocol, channel.endpoint, channel.result, channel.detail]),
  'No subscribers: nobody got it.',
)}`;
}

export function repairPlan(report: RepairReport, csrf: string, applied: boolean): Html {
  const needed = report.topic !== 'ok' || report.subscriptions.some((entry) => entry.result !== 'present');
  return html`<p>Topic ${report.topicArn}: <strong>${report.topic === 'missing' ? 'missing (deleted?)' : report.topic === 'recreated' ? 'created again' : 'exists'}</strong>.</p>
${table(
  'Recorded subscribers',
  ['Protocol', 'Endpoint', 'Result', 'Detail'],
  report.subscriptions.map((entry) => [entry.protocol, entry.endpoint, entry.result, entry.detail]),
  'No subscriber is recorded for this audience.',
)}
${report.notRestored.length === 0 ? '' : html`<h2>Not restored</h2><ul>${report.notRestored.map((line) => html`<li>${line}</li>`)}</ul>`}
<p>${report.parked} parked notification(s)${report.parked > 0 ? html`: <a href="/runs#parked">replay them</a> once repaired` : ''}.</p>
${
  !applied && needed
    ? html`<form method="post" action="/audiences/${encodeURIComponent(report.audienceId)}/repair">${csrfField(csrf)}<button type="submit">Confirm: repair ${report.audienceId}</button></form>`
    : ''
}`;
}
