/** Templates of the runs page: history with reading details and failures, parked items, replay. */
import { html } from 'hono/html';
import type { RunRecord, UndeliverableRecord } from '#core/ports';
import { formatDuration } from '../../output.ts';
import { parkedCell, runRow } from '../../watermark.ts';
import { csrfField, type Html, table, when } from './layout.ts';

const readingOf = (run: RunRecord): string => {
  const reading = run.summary.reading as { mode?: string; reason?: string; daysStoppedEarly?: number } | undefined;
  if (reading === undefined) return '';
  return `${reading.mode ?? ''}${reading.reason ? ` (${reading.reason})` : ''}${reading.daysStoppedEarly ? `, ${reading.daysStoppedEarly} day(s) stopped early` : ''}`;
};

export function runsTable(runs: readonly RunRecord[]): Html {
  return table(
    'Recent runs and replays, newest first',
    ['Started', 'Kind', 'Status', 'Duration', 'Pages', 'New', 'Sent', 'Held', 'Failed', 'Parked', 'Reading', 'Reason'],
    runs.map((run) => {
      const row = runRow(run);
      return [
        when(run.startedAt),
        row.kind,
        row.status,
        formatDuration(row.durationMs),
        String(run.summary.pages ?? ''),
        row.articlesNew ?? '',
        row.published ?? '',
        row.held ?? '',
        row.failed ?? '',
        String(parkedCell(row) ?? 0),
        readingOf(run),
        row.reason ?? '',
      ];
    }),
    'No run yet.',
  );
}

export function parkedTable(parked: readonly UndeliverableRecord[]): Html {
  return table(
    'Notifications SNS refused for good (or that could not be rendered), waiting for a replay',
    ['Audience', 'Article', 'Failed', 'Code', 'Reason'],
    parked.map((record) => [
      html`<a href="/audiences/${encodeURIComponent(record.audienceId)}/repair">${record.audienceId}</a>`,
      record.articleKey,
      when(record.failedAt),
      record.code,
      record.reason,
    ]),
    'Nothing is parked.',
  );
}

export function replayForm(values: { from: string; to: string; audience: string }): Html {
  return html`<form class="filters" method="get" action="/runs/replay">
  <label>From <input type="text" name="from" value="${values.from}" placeholder="6h, 2026-11-21"></label>
  <label>To <input type="text" name="to" value="${values.to}" placeholder="now"></label>
  <label>Audiences <input type="text" name="audience" value="${values.audience}" placeholder="all"></label>
  <button type="submit">Dry run</button>
</form>
<form class="filters" method="get" action="/runs/replay"><input type="hidden" name="parked" value="1"><button type="submit" class="secondary">Dry run: replay parked</button></form>`;
}

export function replayResult(
  dryRun: boolean,
  document: unknown,
  problemText: string | undefined,
  hidden: Readonly<Record<string, string>>,
  csrf: string,
): Html {
  const doc = document as { rows?: Record<string, unknown>[]; audiences?: Record<string, unknown>[] } | undefined;
  const rows = doc?.rows ?? doc?.audiences ?? [];
  const head = rows[0] === undefined ? [] : Object.keys(rows[0]).filter((key) => typeof rows[0]?.[key] !== 'object');
  if (problemText !== undefined && rows.length === 0) {
    // Nothing ran (bad input, a lease held): no result table that would read as "nothing to do".
    return html`<h2>${dryRun ? 'Dry run not done' : 'Replay not done'}</h2>
<div class="problem" role="alert"><p>${problemText}</p></div>`;
  }
  return html`<h2>${dryRun ? 'Dry run: what a replay would do' : 'Replay done'}</h2>
${problemText === undefined ? '' : html`<div class="problem" role="alert"><p>${problemText}</p></div>`}
${table(
  'Per audience',
  head,
  rows.map((row) => head.map((key) => String(row[key] ?? ''))),
  'Nothing to replay.',
)}
<details><summary>Whole result</summary><pre>${JSON.stringify(document, null, 2)}</pre></details>
${
  dryRun && problemText === undefined
    ? html`<form method="post" action="/runs/replay">${csrfField(csrf)}${Object.entries(hidden).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}<button type="submit">Confirm: replay (sends only what the ledger lacks)</button></form>`
    : ''
}`;
}
