/**
 * The runs page: the run history (reading details, failures, parked pages), parked notifications
 * per audience, and replay with a dry run first. Replay runs the CLI's own `replay` command
 * (`--dry-run --json`, then for real) against the same target, so the console replays exactly as
 * the CLI does, under the run lease, through the delivery ledger.
 */
import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import type { UndeliverableRecord } from '#core/ports';
import { listItems } from '../../items.ts';
import { audienceTableOf } from '../../workbench/tables.ts';
import { type ConsoleServices, render, runCli, statusOfCode } from '../context.ts';
import { parkedTable, replayForm, replayResult, runsTable } from '../views/runs.ts';

export function runPages(app: Hono, services: ConsoleServices): void {
  const { target } = services;
  const state = () =>
    new DynamoStateStore({
      documents: target.clients.documents,
      tableName: target.names.stateTable,
      log: services.log,
    });

  app.get('/runs', async (c) => {
    const runs = await state().recentRuns(30);
    const parked: UndeliverableRecord[] = [];
    for (const item of await listItems(target.clients.documents, audienceTableOf(target))) {
      parked.push(...(await state().listUndeliverable(String(item.audienceId))));
    }
    return render(
      c,
      services,
      { title: 'Runs', section: 'runs' },
      html`${runsTable(runs)}
<h2 id="parked">Parked notifications</h2>${parkedTable(parked)}
<h2 id="replay">Replay</h2>
<p>Re-delivers a past window through the delivery ledger: only what was never delivered goes out. A dry run comes first.</p>
${replayForm({ from: '6h', to: '', audience: '' })}`,
    );
  });

  const replayArgs = (values: { from: string; to: string; audience: string; parked: boolean }): string[] =>
    values.parked
      ? ['replay', '--parked']
      : // Each value joined to its flag: a value that looks like an option (`--json`) stays a value.
        [
          'replay',
          `--from=${values.from}`,
          ...(values.to ? [`--to=${values.to}`] : []),
          ...(values.audience ? [`--audience=${values.audience}`] : []),
        ];

  /** The command's message in the form's words: its fields, not the CLI's flags. */
  const inFormWords = (message: string): string =>
    message
      .replace(/--from(?![\w-])/g, 'From')
      .replace(/--to(?![\w-])/g, 'To')
      .replace(/--audience(?![\w-])/g, 'Audiences');

  const replay = async (
    c: Context,
    values: { from: string; to: string; audience: string; parked: boolean },
    dryRun: boolean,
  ) => {
    if (!values.parked && values.from.trim() === '') {
      return render(
        c,
        services,
        { title: dryRun ? 'Replay: dry run' : 'Replay', section: 'runs' },
        html`${replayForm(values)}${replayResult(dryRun, undefined, 'Give From: a provider date (2026-11-21), a date-time with its zone, or a span back such as 6h.', {}, services.keys.csrf)}`,
        400,
      );
    }
    const run = await runCli(services, ['--json', ...replayArgs(values), ...(dryRun ? ['--dry-run'] : [])]);
    let document: unknown;
    try {
      document = JSON.parse(run.stdout);
    } catch {
      document = { output: run.stdout };
    }
    const failed = run.code !== 0;
    const error = (document as { error?: { code?: unknown; message?: string } }).error;
    const message = failed
      ? inFormWords(error?.message ?? run.stderr.trim().split('\n').at(-1) ?? 'the replay failed')
      : undefined;
    // The confirmation replays the window the dry run showed, not "6h back" worked out again
    // when the button is pressed.
    const shown = (document as { window?: { since?: unknown; until?: unknown } }).window;
    const window =
      !values.parked && typeof shown?.since === 'string' && typeof shown.until === 'string'
        ? { from: shown.since, to: shown.until }
        : { from: values.from, to: values.to };
    return render(
      c,
      services,
      { title: dryRun ? 'Replay: dry run' : 'Replay', section: 'runs' },
      html`${replayForm(values)}${replayResult(
        dryRun,
        document,
        message,
        { ...window, audience: values.audience, parked: values.parked ? '1' : '' },
        services.keys.csrf,
      )}`,
      // As the CLI's error code says (ops-guide.md, Exit codes): an audience the form names that
      // does not exist is not found, not a conflict.
      failed ? statusOfCode(error?.code ?? (run.code === 2 ? 'usage' : undefined), 409) : 200,
    );
  };

  app.get('/runs/replay', (c) =>
    replay(
      c,
      {
        from: c.req.query('from') ?? '6h',
        to: c.req.query('to') ?? '',
        audience: c.req.query('audience') ?? '',
        parked: c.req.query('parked') === '1',
      },
      true,
    ),
  );
  app.post('/runs/replay', async (c) => {
    const body = await c.req.parseBody();
    const text = (name: string) => (typeof body[name] === 'string' ? (body[name] as string) : '');
    return replay(
      c,
      { from: text('from'), to: text('to'), audience: text('audience'), parked: text('parked') === '1' },
      false,
    );
  });
}
