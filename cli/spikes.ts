/**
 * `news-alerts spikes …`: spike alerts from the command line (docs/spikes.md).
 *
 * - `spikes evaluate --csv <file>`: the detector on any `timestamp,value` series, written in NAB's
 *   results format (`timestamp,value,anomaly_score,label`) per preset, so any labelled series can
 *   be scored the way NAB scores detectors. Works offline: no stack or sandbox needed.
 * - `spikes explain <ruleId>` (alias `backtest`): one rule's recorded hourly counts over the last
 *   N days, the expected band, and the episodes each preset would have opened, as a table and a
 *   small text chart.
 * - `spikes list`: the rules with spike alerts, their preset and their episodes.
 */
import {
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { DynamoRuleSource } from '#aws/dynamo-rule-source';
import { DynamoSpikeStore } from '#aws/dynamo-spike-store';
import { providerDate } from '#core/calendar';
import { isTimeZone, parseAudience, parseRule } from '#core/model';
import { formatInZone } from '#core/render';
import { backtestRecord, textChart } from '#core/spikes/backtest';
import { PRESETS, SPIKE_PRESETS, SpikeDetector, type SpikePreset, spikeModel } from '#core/spikes/detector';
import {
  bucketLengthOf,
  checkBucketFitsRows,
  checkSeriesSpan,
  evaluateSeries,
  labelsOf,
  MAX_SERIES_BYTES,
  nabResults,
  readCountSeries,
  SeriesFormatError,
  SPLIT_ADVICE,
  sparseBuckets,
} from '#core/spikes/evaluate';
import { evaluatedThrough, type SpikeRecord } from '#core/spikes/record';
import { spikePresetOf } from '#core/spikes/step';
import { action, integerOption } from './command.ts';
import type { CommandContext } from './context.ts';
import { NotFoundError, UsageError } from './errors.ts';
import { hint } from './hints.ts';
import { getItem } from './items.ts';
import { stderrLog } from './log.ts';
import { safeText } from './output.ts';
import { inputName, readUtf8File, writeAllSync } from './utf8.ts';
import { audienceTableOf, ruleTableOf } from './workbench/tables.ts';

interface EvaluateOptions {
  csv: string;
  preset: string;
  out?: string;
  windows?: string;
  series?: string;
  bucketMinutes?: number;
}

/**
 * Whether `a` and `b` (paths, or descriptors of this process: 0 stdin, 1 stdout) are one regular
 * file, the same inode. Only a regular file counts: a terminal is stdin and stdout at once.
 */
function sameRegularFile(a: string | number, b: string | number): boolean {
  try {
    const [first, second] = [a, b].map((target) => (typeof target === 'number' ? fstatSync(target) : statSync(target)));
    return first?.isFile() === true && first.dev === second?.dev && first.ino === second.ino;
  } catch {
    return false;
  }
}

/**
 * The descriptor of this process that `file` names, if it names one: `/dev/stdout`, `/dev/fd/N`,
 * `/proc/self/fd/N` (or a link to one of them). Such a path stands for a file already open, maybe
 * for appending (`>> collected.csv`): opened again it would be truncated, and replaced by a
 * rename it would lose what it held, so it is written to through the descriptor itself.
 */
function openDescriptorOf(file: string): number | undefined {
  let path = resolve(file);
  for (let hops = 0; hops < 8; hops++) {
    const own = new RegExp(`^/(?:dev/fd|proc/(?:self|${process.pid})/fd)/(\\d+)$`).exec(path);
    if (own !== null) return Number(own[1]);
    let link: string;
    try {
      link = readlinkSync(path);
    } catch {
      return undefined;
    }
    path = resolve(dirname(path), link);
  }
  return undefined;
}

/** One preset's results, and where they go. */
interface ResultsFile {
  readonly preset: SpikePreset;
  readonly file: string;
  readonly text: string;
  readonly alerts: number;
}

/**
 * Refuses, before anything is written, a results path that cannot take its file: the --csv file
 * itself, or a directory in the way. `--preset all` writes every file or none.
 * @throws UsageError naming the file and what is wrong
 */
function checkResultsPath(file: string, onePreset: boolean, source: string): void {
  // With --csv -, the file stdin reads (`--csv - < series.csv`).
  if (sameRegularFile(file, source === '-' ? 0 : source)) {
    throw new UsageError(
      `--out ${file} is the --csv file itself; writing the results there would replace the series: give another file name`,
    );
  }
  // `--out newdir/`: a directory meant, which does not exist yet (renaming a file onto it fails).
  if ((existsSync(file) && statSync(file).isDirectory()) || (onePreset && /[/\\]$/.test(file))) {
    throw new UsageError(
      onePreset
        ? `--out ${file} is a directory; give a file name for one preset's results (--preset all writes one file per preset into a directory)`
        : `cannot write the results to ${file}: a directory of that name is in the way; move it, or give another --out`,
    );
  }
}

interface ResultsTarget {
  readonly path: string;
  /** Written beside, then renamed over (absent, or a regular file). */
  readonly replace: boolean;
  /** This process's descriptor that the path names (`/dev/stdout`): written through it. */
  readonly fd?: number;
}

/**
 * Where a results file goes, by what is at its path now. A rename over a path replaces whatever
 * is there, so only a path that is absent or a regular file may be replaced that way: a symbolic
 * link is followed to the file it names (the link stays, its file gets the results), and anything
 * else (a named pipe, `/dev/stdout`, `/dev/null`) is written to as it is, never replaced.
 */
function resultsTarget(file: string): ResultsTarget {
  const fd = openDescriptorOf(file);
  if (fd !== undefined) return { path: file, replace: false, fd };
  const found = unlessAbsent(() => lstatSync(file));
  if (found === undefined) return { path: file, replace: true };
  if (!found.isSymbolicLink()) return { path: file, replace: found.isFile() };
  const named = unlessAbsent(() => statSync(file));
  // A link to nothing yet: writing through it makes the file it names.
  if (named === undefined) return { path: file, replace: false };
  // A link to a pipe or device (`/dev/stdout` → `/proc/self/fd/1` → `pipe:[…]`, which is no
  // path): written through the link itself.
  return named.isFile() ? { path: realpathSync(file), replace: true } : { path: file, replace: false };
}

/** What `stat` gives, or undefined when the path (or what a link names) does not exist. */
function unlessAbsent(stat: () => Stats): Stats | undefined {
  try {
    return stat();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Writes every results file or none: each that is a regular file (or absent) goes to a temporary
 * file beside it first, and only once all are written are they renamed into place (a rename
 * within a directory replaces at once). A pipe or device (see {@link resultsTarget}) cannot be
 * replaced, nor take its text back: it is written to once every temporary file is written.
 * @throws UsageError naming the file that could not be written
 */
function writeResults(files: readonly ResultsFile[]): void {
  const plans: (ResultsTarget & { readonly entry: ResultsFile })[] = [];
  const temporaries: string[] = [];
  let writing = '';
  try {
    for (const entry of files) {
      writing = entry.file;
      plans.push({ entry, ...resultsTarget(entry.file) });
    }
    for (const plan of plans.filter((each) => each.replace)) {
      writing = plan.entry.file;
      const temporary = join(dirname(plan.path), `.${basename(plan.path)}.${process.pid}.tmp`);
      temporaries.push(temporary);
      writeFileSync(temporary, plan.entry.text);
    }
    for (const plan of plans.filter((each) => !each.replace)) {
      writing = plan.entry.file;
      if (plan.fd === undefined) writeFileSync(plan.path, plan.entry.text);
      else writeAllSync(plan.fd, plan.entry.text);
    }
  } catch (error) {
    for (const temporary of temporaries) rmSync(temporary, { force: true });
    throw new UsageError(
      // Node names the path it opened, which is the temporary file beside the results file: the
      // results file is the one to name ("ENOENT: no such file or directory, open '.x.csv.1.tmp'").
      `cannot write the results to ${writing}: ${(error as Error).message.replace(/, \w+ '.*'$/s, '')}; no results file was replaced`,
      [],
      { cause: error },
    );
  }
  const replaced = plans.filter((plan) => plan.replace);
  let renamed = 0;
  try {
    for (const [index, plan] of replaced.entries()) {
      renameSync(temporaries[index] as string, plan.path);
      renamed += 1;
    }
  } catch (error) {
    for (const temporary of temporaries.slice(renamed)) rmSync(temporary, { force: true });
    const done = plans.filter((plan) => !replaced.slice(renamed).includes(plan)).map((plan) => plan.entry.file);
    // The code, not the message: the message names the temporary file, which is gone.
    const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    const others = replaced.length - renamed - 1;
    throw new UsageError(
      `cannot put the results at ${replaced[renamed]?.entry.file ?? ''} (${why})${done.length > 0 ? `; written: ${done.join(', ')}` : ''}${others > 0 ? `; the other ${others} were not written` : ''}`,
      [],
      { cause: error },
    );
  }
}

/** Checks the directory `--preset all` writes into; a CSV name or a file in the way is the user's to fix. */
function checkResultsDirectory(out: string): void {
  if (/\.csv$/i.test(out)) {
    throw new UsageError(
      `--preset all writes one results file per preset into a directory, and --out ${out} names a CSV file; give a directory, or one --preset`,
    );
  }
  if (existsSync(out) && !statSync(out).isDirectory()) {
    throw new UsageError(`--out ${out} is a file; --preset all writes one results file per preset into a directory`);
  }
}

/** Makes the directory `--preset all` writes into. */
function makeResultsDirectory(out: string): void {
  try {
    mkdirSync(out, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      code === 'EEXIST' || code === 'ENOTDIR'
        ? `--out ${out}: a file is in the way of the directory; --preset all writes one results file per preset into a directory`
        : `cannot make the results directory ${out}: ${(error as Error).message}`,
      [],
      { cause: error },
    );
  }
}

/** The windows of the series from a NAB combined_windows.json: by --series, else by the CSV's file name. */
function windowsFor(file: string, csv: string, series: string | undefined): (readonly [string, string])[] {
  const shown = inputName(file);
  let document: unknown;
  try {
    document = JSON.parse(readUtf8File(file, '--windows'));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${shown} is not JSON: ${(error as Error).message}`);
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new UsageError(
      `${shown} must map series names to lists of [start, end] windows (NAB's combined_windows.json)`,
    );
  }
  const entries = Object.entries(document as Record<string, unknown>);
  const name = basename(csv);
  const found =
    series === undefined
      ? entries.filter(([key]) => key === name || key.endsWith(`/${name}`))
      : entries.filter(([key]) => key === series);
  if (found.length !== 1) {
    throw new UsageError(
      series === undefined
        ? `${shown} has no single entry for ${name}; name it with --series (one of: ${entries
            .map(([key]) => key)
            .slice(0, 10)
            .join(', ')})`
        : `${shown} has no entry "${series}"`,
    );
  }
  const windows = (found[0] as [string, unknown])[1];
  if (
    !Array.isArray(windows) ||
    windows.some((w) => !Array.isArray(w) || w.length !== 2 || w.some((t) => typeof t !== 'string'))
  ) {
    throw new UsageError(`${shown}: the entry for ${name} must be a list of [start, end] timestamp pairs`);
  }
  return windows as [string, string][];
}

async function evaluate(context: CommandContext, _args: readonly unknown[], options: EvaluateOptions): Promise<void> {
  const presets: SpikePreset[] =
    options.preset === 'all'
      ? [...SPIKE_PRESETS]
      : SPIKE_PRESETS.includes(options.preset as SpikePreset)
        ? [options.preset as SpikePreset]
        : [];
  if (presets.length === 0) {
    throw new UsageError(
      `--preset must be one of ${SPIKE_PRESETS.join(', ')} or all; got ${JSON.stringify(options.preset)}`,
    );
  }
  // `--out /dev/stdout` is stdout, as `-` is: the results alone, no summary mixed into them.
  const toStdout = options.out === undefined || options.out === '-' || openDescriptorOf(options.out) === 1;
  if (presets.length > 1 && toStdout) {
    // Three results files in one stream would read as one file with three headers.
    throw new UsageError('--preset all writes one results file per preset: give --out <directory>');
  }
  if (options.series !== undefined && options.windows === undefined) throw new UsageError('--series needs --windows');
  if (options.csv === '-' && options.windows !== undefined && options.series === undefined) {
    throw new UsageError('--windows with --csv - needs --series: stdin has no file name to find its entry by');
  }
  // Stdin is `stdin` in every message and result, and `stdin.csv` in the names of results files.
  const source = inputName(options.csv);
  const fileName = options.csv === '-' ? 'stdin.csv' : basename(options.csv);
  try {
    const series = readCountSeries(
      readUtf8File(options.csv, '--csv', { bytes: MAX_SERIES_BYTES, advice: SPLIT_ADVICE }),
      source,
    );
    const bucketMs =
      options.bucketMinutes === undefined ? bucketLengthOf(series, source) : options.bucketMinutes * 60_000;
    if (options.bucketMinutes !== undefined) checkBucketFitsRows(series, bucketMs, source);
    // Refused before any work: a far-off timestamp would keep the detector stepping for hours.
    checkSeriesSpan(series, bucketMs, source);
    const labels =
      options.windows === undefined
        ? undefined
        : labelsOf(series, windowsFor(options.windows, options.csv, options.series), options.windows);
    // Every preset is evaluated, and every path checked, before anything is written.
    const results: ResultsFile[] = presets.map((preset) => {
      const evaluation = evaluateSeries(series, preset, { bucketMs, source });
      const file = toStdout
        ? '-'
        : presets.length > 1
          ? join(options.out as string, `${preset}_${fileName}`)
          : (options.out as string);
      return { preset, file, text: nabResults(series, evaluation, labels), alerts: evaluation.alerts.length };
    });
    const sparse = sparseBuckets(series, bucketMs);
    if (sparse !== undefined) context.output.warn(`${safeText(source)}: ${sparse}`);
    if (toStdout) {
      // `>> series.csv` would append the results to the series being read.
      if (sameRegularFile(1, options.csv === '-' ? 0 : options.csv)) {
        throw new UsageError(
          `stdout is the --csv file itself (${source}); writing the results there would add them to the series: send them elsewhere`,
        );
      }
      for (const entry of results) context.output.line(entry.text.trimEnd());
      return;
    }
    if (presets.length > 1) checkResultsDirectory(options.out as string);
    for (const entry of results) checkResultsPath(entry.file, presets.length === 1, options.csv);
    if (presets.length > 1) makeResultsDirectory(options.out as string);
    writeResults(results);
    const written = results.map(({ preset, file, alerts }) => ({ preset, file, alerts }));
    context.output.result(
      { series: source, rows: series.values.length, bucketMinutes: bucketMs / 60_000, results: written },
      () => {
        // A file name is one line, as in the errors: a line break in it shows as \n.
        context.output.caption(
          `${series.values.length} rows of ${safeText(source)}, buckets of ${bucketMs / 60_000} min:`,
        );
        context.output.table(
          ['PRESET', 'ALERTS', 'RESULTS FILE'],
          written.map((entry) => [entry.preset, entry.alerts, entry.file]),
        );
      },
    );
  } catch (error) {
    if (error instanceof SeriesFormatError) throw new UsageError(error.message, [], { cause: error });
    throw error;
  }
}

interface ExplainOptions {
  days: number;
  timeZone: string;
  table?: boolean;
}

async function explain(context: CommandContext, args: readonly unknown[], options: ExplainOptions): Promise<void> {
  const [ruleId] = args as [string];
  if (!isTimeZone(options.timeZone))
    throw new UsageError(
      `--time-zone ${safeText(JSON.stringify(options.timeZone))} is not an IANA time zone (such as Asia/Seoul or UTC)`,
    );
  const target = await context.target();
  const store = new DynamoSpikeStore({
    documents: target.clients.documents,
    tableName: target.names.stateTable,
    log: stderrLog(context.output),
  });
  const record = (await store.read([ruleId])).get(ruleId);
  const counting = await countingState(context, ruleId);
  if (record === undefined) throw new NotFoundError(counting.why);
  const backtest = backtestRecord(record, { days: options.days });
  const progress = countingProgress(record);
  const zone = options.timeZone;
  const local = (at: number, layout: 'short' | 'time' | 'date') => formatInZone(at, zone, 'en-GB', layout).text;
  const minuteOfDay = (at: number) => {
    const [hours, minutes] = local(at, 'time').split(':').map(Number);
    return (hours ?? 0) * 60 + (minutes ?? 0);
  };
  const document = {
    ruleId,
    preset: record.preset,
    bucketMinutes: record.bucketMs / 60_000,
    countedThrough: new Date((evaluatedThrough(record) + 1) * record.bucketMs).toISOString(),
    rows: backtest.rows.map((row) => ({
      at: new Date(row.at).toISOString(),
      // An hour no run counted is unknown (null), not -1, and so are its outlets.
      count: row.count < 0 ? null : row.count,
      outlets: row.count < 0 ? null : (row.outlets ?? null),
      expected: Number.isFinite(row.expected) ? Math.round(row.expected * 100) / 100 : null,
      band: Object.fromEntries(
        SPIKE_PRESETS.map((preset) => [preset, Number.isFinite(row.band[preset]) ? row.band[preset] : null]),
      ),
      score: Math.round(row.score * 100) / 100,
      events: row.events,
    })),
    episodes: Object.fromEntries(
      SPIKE_PRESETS.map((preset) => [
        preset,
        backtest.episodes[preset].map((episode) => ({
          ...episode,
          openedAt: new Date(episode.openedAt).toISOString(),
          since: new Date(episode.since).toISOString(),
          to: episode.to === undefined ? null : new Date(episode.to).toISOString(),
        })),
      ]),
    ),
    alert: record.alert ?? null,
    countingNow: counting.counting,
    ...(counting.counting ? {} : { notCountingBecause: counting.why }),
    hoursEvaluated: progress.hoursEvaluated,
    alertsPossibleFrom: new Date(progress.alertsPossibleFrom).toISOString(),
    openHours: progress.openHours.map((open) => ({ at: new Date(open.at).toISOString(), stories: open.stories })),
  };
  context.output.result(document, () => {
    // Why the chart may be short or empty, and whether it still grows: said before it, in words.
    if (!counting.counting) context.output.note(`Runs no longer count for this rule: ${counting.why}.`);
    if (progress.hoursEvaluated === 0) {
      const open = progress.openHours.map(
        (hour) => `${hour.stories} new stories in the hour from ${local(hour.at, 'short')}`,
      );
      context.output.note(
        `No hour is complete yet${open.length > 0 ? ` (counted so far: ${open.join('; ')})` : ''}: the detector evaluates an hour once it is over, so the chart starts after the next run past the hour.`,
      );
    }
    if (progress.alertsPossibleFrom > progress.countedUntil) {
      context.output.note(
        `Warm-up: no spike alert before ${local(progress.alertsPossibleFrom, 'short')} (${zone}), once three days are counted (after a long gap, three days since it); ${progress.hoursEvaluated} hour(s) evaluated so far.`,
      );
    }
    // Each day's row is labelled with its date in the zone shown (2026-11-29), whole. No hour
    // evaluated yet, no chart: the note above says why, and a caption over nothing would not.
    const chart = textChart(backtest, (at) => providerDate(at, zone), minuteOfDay);
    if (chart.length > 0) {
      context.output.caption(
        `Rule ${ruleId}: new stories per hour over the last ${options.days} day(s) (${zone}), preset ${record.preset}; ! marks an episode it opened:`,
      );
      for (const line of chart) context.output.line(line);
      context.output.line();
    }
    context.output.caption('Episodes each preset would have opened:');
    context.output.table(
      ['PRESET', 'OPENED', 'SINCE', 'ENDED', 'STORIES', 'EXPECTED', 'PEAK/H'],
      SPIKE_PRESETS.flatMap((preset) =>
        backtest.episodes[preset].map((episode) => [
          preset,
          local(episode.openedAt, 'short'),
          local(episode.since, 'short'),
          episode.to === undefined
            ? 'open'
            : `${local(episode.to, 'short')}${episode.levelShift ? ' (new level)' : ''}`,
          episode.observed,
          episode.expected,
          episode.peak,
        ]),
      ),
      'none: no preset would have alerted in this window',
    );
    if (options.table) {
      context.output.line();
      context.output.table(
        [
          'HOUR',
          'STORIES',
          'OUTLETS',
          'EXPECTED',
          ...SPIKE_PRESETS.map((preset) => `BAND ${preset.toUpperCase()}`),
          'SCORE',
          'EVENTS',
        ],
        backtest.rows.map((row) => [
          local(row.at, 'short'),
          row.count < 0 ? 'n/a' : row.count,
          row.count < 0 ? 'n/a' : (row.outlets ?? ''),
          Number.isFinite(row.expected) ? row.expected.toFixed(1) : 'n/a',
          ...SPIKE_PRESETS.map((preset) => (Number.isFinite(row.band[preset]) ? row.band[preset] : 'n/a')),
          row.score.toFixed(1),
          Object.entries(row.events)
            .map(([preset, event]) => `${preset}:${event}`)
            .join(' '),
        ]),
      );
    }
  });
}

/** The target's valid rules and audiences (rejected items are warned about on stderr). */
async function loadRules(context: CommandContext) {
  const target = await context.target();
  return await new DynamoRuleSource({
    documents: target.clients.documents,
    rulesTableName: target.names.rulesTable,
    audiencesTableName: target.names.audiencesTable,
    log: stderrLog(context.output),
  }).load();
}

/** How far a rule's counting has come: hours evaluated, hours still open, and the warm-up's end. */
function countingProgress(record: SpikeRecord) {
  const { detector } = record;
  const through = evaluatedThrough(record);
  return {
    hoursEvaluated: detector.counts.filter((count) => count >= 0).length,
    /** The end of the last evaluated hour (epoch ms). */
    countedUntil: (through + 1) * record.bucketMs,
    openHours: record.open
      .filter((open) => open.bucket > through)
      .map((open) => ({ at: open.bucket * record.bucketMs, stories: open.stories.length })),
    // The detector's own answer: three days since counting began, and three counted days in the
    // baseline (after a long gap, the days counted since).
    alertsPossibleFrom:
      new SpikeDetector(spikeModel(record.bucketMs), PRESETS[record.preset], detector).alertsPossibleFrom() *
      record.bucketMs,
  };
}

/**
 * Whether runs count for `ruleId` now, and if not why, with what to do: the rule does not exist,
 * it or its audience is disabled or not valid, or its spike alerts are off. Without counts the
 * reason is also why there is nothing to show (`why`). Read from the items themselves: the rule
 * source keeps only enabled rules of enabled audiences.
 */
async function countingState(context: CommandContext, ruleId: string): Promise<{ counting: boolean; why: string }> {
  const target = await context.target();
  const documents = target.clients.documents;
  const not = (why: string) => ({ counting: false, why });
  const rule = await getItem(documents, ruleTableOf(target), ruleId);
  if (rule === undefined) return not(`no rule ${ruleId} (${hint('rules list')} shows the rules)`);
  const parsed = parseRule(rule);
  if (!parsed.ok) {
    return not(
      `rule ${ruleId} is not valid, so runs skip it: ${parsed.rejected.reason} (${hint(`rules show ${ruleId}`)})`,
    );
  }
  if (!parsed.value.enabled) {
    return not(`rule ${ruleId} is disabled, so no run counts for it; enable it (${hint(`rules enable ${ruleId}`)})`);
  }
  const audienceId = parsed.value.audienceId;
  const audience = await getItem(documents, audienceTableOf(target), audienceId);
  if (audience === undefined) return not(`rule ${ruleId} is for audience ${audienceId}, which does not exist`);
  const audienceParsed = parseAudience(audience);
  if (!audienceParsed.ok) {
    return not(
      `rule ${ruleId} is for audience ${audienceId}, which is not valid, so runs skip its rules: ${audienceParsed.rejected.reason} (${hint(`audiences show ${audienceId}`)})`,
    );
  }
  if (!audienceParsed.value.enabled) {
    return not(
      `rule ${ruleId} is for audience ${audienceId}, which is disabled, so no run counts for it (${hint(`audiences update ${audienceId} --enable`)})`,
    );
  }
  const preset = spikePresetOf(parsed.value);
  if (preset === undefined) {
    return not(
      `rule ${ruleId} has no spike alerts, so nothing is counted for it; give it spike alerts (${hint(`rules update ${ruleId} --spikes balanced`)}) and let the runs count for a few days`,
    );
  }
  return {
    counting: true,
    why: `rule ${ruleId} has spike alerts (${preset}) but no run has counted for it yet; each run counts the hours it read, so look again after the next run (${hint('run')} starts one now)`,
  };
}

async function list(context: CommandContext): Promise<void> {
  const target = await context.target();
  const log = stderrLog(context.output);
  const ruleSet = await loadRules(context);
  const rules = ruleSet.rules.filter((rule) => spikePresetOf(rule) !== undefined);
  const store = new DynamoSpikeStore({ documents: target.clients.documents, tableName: target.names.stateTable, log });
  const records = await store.read(rules.map((rule) => rule.ruleId));
  const rows = rules.map((rule) => {
    const record = records.get(rule.ruleId);
    const counted = record === undefined ? 0 : record.detector.counts.filter((count) => count >= 0).length;
    return {
      ruleId: rule.ruleId,
      audienceId: rule.audienceId,
      preset: spikePresetOf(rule) as SpikePreset,
      hoursCounted: counted,
      openEpisode: record?.detector.open === undefined ? null : record.detector.open.id,
      episodes: record?.recent ?? [],
      lastAlert: record?.alert?.episodeId ?? null,
    };
  });
  context.output.result({ rules: rows }, () => {
    context.output.table(
      ['RULE', 'AUDIENCE', 'PRESET', 'HOURS COUNTED', 'EPISODE OPEN', 'EPISODES'],
      rows.map((row) => [
        row.ruleId,
        row.audienceId,
        row.preset,
        row.hoursCounted,
        row.openEpisode ?? '',
        row.episodes.length,
      ]),
      `no enabled rule has spike alerts (${hint('rules update <ruleId> --spikes balanced')})`,
    );
  });
}

/** Registers `spikes`. */
export function registerSpikes(program: Command): void {
  const spikes = program
    .command('spikes')
    .description('spike alerts: evaluate the detector on any series (NAB format), explain a rule, list rules');

  spikes
    .command('evaluate')
    .description("run the detector over a timestamp,value CSV and write NAB's results format per preset")
    .requiredOption('--csv <file>', 'the series: a CSV with timestamp,value columns (NAB data format)')
    .option('--preset <preset>', `${SPIKE_PRESETS.join(', ')} or all`, 'balanced')
    .option('--out <path>', 'results file (one preset; default stdout), or a directory with --preset all')
    .option('--windows <file>', "labelled windows (NAB's combined_windows.json) to fill the label column")
    .option('--series <key>', 'the entry of --windows for this series (default: by file name)')
    .option(
      '--bucket-minutes <n>',
      'bucket length (default: the most common step between rows)',
      integerOption(1, 1440),
    )
    .addHelpText(
      'after',
      `
The results have NAB's columns: anomaly_score is 1 on the row where an episode opens (the alert)
and 0 elsewhere, label is 1 inside --windows. Score them with NAB's scorer (any threshold in (0, 1]).

Examples:
  news-alerts spikes evaluate --csv Twitter_volume_FB.csv --preset all --out results/
  news-alerts spikes evaluate --csv series.csv --preset fewer > fewer_series.csv`,
    )
    .action(action(evaluate));

  spikes
    .command('explain')
    .alias('backtest')
    .description("a rule's recorded hourly counts, the expected band and the episodes each preset would have opened")
    .argument('<ruleId>')
    .option('--days <n>', 'days back from the last counted hour (up to 28)', integerOption(1, 28), 7)
    .option('--time-zone <zone>', 'time zone of the times shown', 'UTC')
    .option('--table', 'also print every hour as a table row')
    .action(action(explain));

  spikes
    .command('list')
    .description('the rules with spike alerts: preset, hours counted, open episode, episodes')
    .action(action(list));
}
