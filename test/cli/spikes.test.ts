/**
 * `news-alerts spikes evaluate` on a NAB-format series that is not in the repository (generated
 * here, with its window in NAB's combined_windows.json format): the results files are in NAB's
 * results format, row for row with the data file, and NAB's scoring (bench/spikes/nab.ts) accepts
 * them.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  createReadStream,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLog } from '#core/ports';
import { SPIKE_PRESETS } from '#core/spikes/detector';
import { syntheticSeries } from '#test/spike-world';
import { NAB_PROFILE_NAMES, nabTime, normalizedScore, scoreFile, windowRows } from '../../bench/spikes/nab.ts';
import { DynamoSpikeStore } from '../../functions/aws/dynamo-spike-store.ts';
import { venvBin } from '../../sandbox/python-env.mjs';
import { primeSpikeHistory } from '../../sandbox/spike-demo.ts';
import { type CliSandbox, cliEntry, runCli, startCliSandbox } from './support.ts';

const directory = mkdtempSync(join(tmpdir(), 'spikes-evaluate-'));

/** Runs `script` in sh with $0 = node and $1 = the CLI entry, then `args` as $2, $3, …. */
const shell = (script: string, args: readonly string[], timeout = 60_000) =>
  spawnSync('sh', ['-c', script, process.execPath, cliEntry, ...args], { encoding: 'utf8', timeout });

/** Runs the CLI with `args`, waiting for it (for what runCli's sandbox process cannot show: stdin, pipes). */
const cliSync = (args: readonly string[], timeout = 60_000) =>
  spawnSync(process.execPath, [cliEntry, ...args], { encoding: 'utf8', timeout });
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/**
 * A pipe reader (the moto virtualenv's Python, which every test run has; for FIONREAD and
 * F_GETPIPE_SZ) that reads nothing until the pipe holds
 * its capacity or the writer has closed it, then counts every byte and prints the count.
 */
const lateReader = [
  'import fcntl, os, select, struct, termios, time',
  'capacity = fcntl.fcntl(0, 1032)  # F_GETPIPE_SZ',
  'unread = lambda: struct.unpack("i", fcntl.ioctl(0, termios.FIONREAD, b"0000"))[0]',
  'poll = select.poll(); poll.register(0, select.POLLHUP)',
  'while unread() < capacity and not poll.poll(0): time.sleep(0.005)',
  'total = 0',
  'while chunk := os.read(0, 65536): total += len(chunk)',
  'print(total)',
].join('\n');

describe('news-alerts spikes evaluate', () => {
  it('writes, per preset, a results file in NAB’s format that NAB’s scoring accepts', async () => {
    const data = syntheticSeries(3000, 5, 2400);
    const csv = join(directory, 'Twitter_volume_TEST.csv');
    writeFileSync(csv, data);
    const rows = data.trimEnd().split('\n').slice(1);
    const times = rows.map((row) => row.split(',')[0] as string);
    // NAB's windows file: series by category/file name, edges with microseconds.
    const window: [string, string] = [`${times[2300]}.000000`, `${times[2500]}.000000`];
    const windows = join(directory, 'combined_windows.json');
    writeFileSync(windows, JSON.stringify({ 'realTweets/Twitter_volume_TEST.csv': [window] }));
    const out = join(directory, 'results');

    const result = await runCli([
      'spikes',
      'evaluate',
      '--csv',
      csv,
      '--preset',
      'all',
      '--out',
      out,
      '--windows',
      windows,
      '--json',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const summary = result.json<{ rows: number; bucketMinutes: number; results: { preset: string; file: string }[] }>();
    expect(summary).toMatchObject({ rows: 3000, bucketMinutes: 5 });
    expect(summary.results.map((entry) => entry.preset)).toEqual([...SPIKE_PRESETS]);

    const timestamps = times.map(nabTime);
    const file = { name: 'Twitter_volume_TEST.csv', timestamps, windows: windowRows(timestamps, [window]) };
    for (const preset of SPIKE_PRESETS) {
      const path = join(out, `${preset}_Twitter_volume_TEST.csv`);
      expect(summary.results.find((entry) => entry.preset === preset)?.file).toBe(path);
      const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
      expect(lines[0]).toBe('timestamp,value,anomaly_score,label');
      const results = lines.slice(1).map((line) => line.split(','));
      // Row for row with the data file: NAB joins results to data and windows by timestamp.
      expect(results.map((row) => `${row[0]},${row[1]}`)).toEqual(rows);
      const scores = results.map((row) => Number(row[2]));
      expect(scores.every((score) => score >= 0 && score <= 1)).toBe(true);
      expect(results.map((row, i) => [row[3], i >= 2300 && i <= 2500 ? '1' : '0']).every(([a, b]) => a === b)).toBe(
        true,
      );
      for (const profile of NAB_PROFILE_NAMES) {
        const normalized = normalizedScore([scoreFile(file, scores, 0.5, profile)], profile);
        expect(Number.isFinite(normalized)).toBe(true);
      }
    }
    // The balanced preset finds the burst inside its window.
    const balanced = readFileSync(join(out, 'balanced_Twitter_volume_TEST.csv'), 'utf8').trimEnd().split('\n').slice(1);
    const balancedScores = balanced.map((line) => Number(line.split(',')[2]));
    expect(scoreFile(file, balancedScores, 0.5, 'standard').windowsDetected).toBe(1);
  });

  it('prints one preset’s results to stdout, and names the file and line of a row it cannot read', async () => {
    const csv = join(directory, 'small.csv');
    writeFileSync(csv, syntheticSeries(400, 6, 350));
    const printed = await runCli(['spikes', 'evaluate', '--csv', csv, '--preset', 'fewer']);
    expect(printed.code).toBe(0);
    const lines = printed.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('timestamp,value,anomaly_score,label');
    expect(lines).toHaveLength(401);

    const broken = join(directory, 'broken.csv');
    writeFileSync(broken, 'timestamp,value\n2015-02-26 21:42:53,3\n2015-02-26 21:47:53,many\n');
    const refused = await runCli(['spikes', 'evaluate', '--csv', broken, '--preset', 'fewer']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/broken\.csv:3/);
  });

  it('refuses a windows file without an entry for the series, even when its one entry is another series', async () => {
    const csv = join(directory, 'mine.csv');
    writeFileSync(csv, syntheticSeries(400, 6, 350));
    const rows = readFileSync(csv, 'utf8').trimEnd().split('\n').slice(1);
    const window = [rows[300]?.split(',')[0], rows[320]?.split(',')[0]];
    const windows = join(directory, 'other_windows.json');
    writeFileSync(windows, JSON.stringify({ 'realKnownCause/nyc_taxi.csv': [window] }));

    const refused = await runCli(['spikes', 'evaluate', '--csv', csv, '--preset', 'fewer', '--windows', windows]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('has no single entry for mine.csv; name it with --series');
    expect(refused.stderr).toContain('realKnownCause/nyc_taxi.csv');
    expect(refused.stdout).toBe('');

    // Read from stdin, the windows file is called stdin, as every other input read from it.
    const piped = await runCli(['spikes', 'evaluate', '--csv', csv, '--preset', 'fewer', '--windows', '-'], {
      input: '{"realTweets/mine.csv": [',
    });
    expect(piped.code).toBe(2);
    expect(piped.stderr).toContain('news-alerts: stdin is not JSON: ');

    // Named with --series, the entry labels this series.
    const named = await runCli([
      'spikes',
      'evaluate',
      '--csv',
      csv,
      '--preset',
      'fewer',
      '--windows',
      windows,
      '--series',
      'realKnownCause/nyc_taxi.csv',
    ]);
    expect(named.code).toBe(0);
    const labels = named.stdout
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((line) => line.split(',')[3]);
    expect(labels.filter((label) => label === '1')).toHaveLength(21);
  });

  it('writes through what --out names when it is not a regular file: a link’s file, a named pipe', async () => {
    const csv = join(directory, 'through.csv');
    writeFileSync(csv, syntheticSeries(400, 6, 350));
    const expected = (await runCli(['spikes', 'evaluate', '--csv', csv, '--preset', 'fewer'])).stdout;

    // A symbolic link: the link stays, the file it names gets the results.
    const target = join(directory, 'linked-results.csv');
    writeFileSync(target, 'old');
    const link = join(directory, 'link-to-results.csv');
    symlinkSync(target, link);
    const viaLink = await runCli(['spikes', 'evaluate', '--csv', csv, '--preset', 'fewer', '--out', link]);
    expect(viaLink.stderr).not.toMatch(/error|cannot/);
    expect(viaLink.code).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe(expected);

    // A named pipe (as /dev/stdout can be): written to, not replaced by a regular file.
    const pipe = join(directory, 'results.fifo');
    execFileSync('mkfifo', [pipe]);
    const reader = new Promise<string>((resolve, reject) => {
      let text = '';
      createReadStream(pipe, 'utf8')
        .on('data', (chunk) => {
          text += chunk;
        })
        .on('end', () => resolve(text))
        .on('error', reject);
    });
    const viaPipe = await runCli(['spikes', 'evaluate', '--csv', csv, '--preset', 'fewer', '--out', pipe]);
    expect(viaPipe.stderr).not.toMatch(/error|cannot/);
    expect(viaPipe.code).toBe(0);
    expect(await reader).toBe(expected);
    expect(lstatSync(pipe).isFIFO()).toBe(true);
    expect(readdirSync(directory).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it.runIf(process.platform === 'linux')(
    'writes to /dev/stdout’s own link when --out names it: the process’s stdout',
    async () => {
      const csv = join(directory, 'to-stdout.csv');
      writeFileSync(csv, syntheticSeries(400, 6, 350));
      const expected = (await runCli(['spikes', 'evaluate', '--csv', csv, '--preset', 'fewer'])).stdout;
      // What /dev/stdout links to: a link into /proc that resolves to no path (`pipe:[…]`). Through
      // a shell pipe, as a person would run it (the test's own pipes are sockets, which no program
      // can open by path).
      const result = shell('"$0" "$1" spikes evaluate --csv "$2" --preset fewer --out /proc/self/fd/1 | cat', [csv]);
      expect(result.stderr).not.toMatch(/error|cannot/);
      expect(result.status).toBe(0);
      expect(result.stdout.startsWith(expected)).toBe(true);
    },
  );

  it('appends to what stdout is appending to, and never replaces the series it reads from stdin', () => {
    const csv = join(directory, 'appended.csv');
    writeFileSync(csv, syntheticSeries(400, 6, 350));
    const collected = join(directory, 'collected.csv');
    writeFileSync(collected, 'EARLIER RESULTS\n');
    // `>> collected.csv`: /dev/stdout and /dev/fd/1 name a file opened for appending.
    for (const out of ['/dev/stdout', '/dev/fd/1']) {
      const appended = shell(`"$0" "$1" spikes evaluate --csv "$2" --preset fewer --out ${out} >> "$3"`, [
        csv,
        collected,
      ]);
      expect(appended.status, appended.stderr).toBe(0);
    }
    const text = readFileSync(collected, 'utf8');
    expect(text.startsWith('EARLIER RESULTS\ntimestamp,value,anomaly_score,label\n')).toBe(true);
    expect(text.split('timestamp,value,anomaly_score,label').length).toBe(3);
    // `--csv - --out series.csv < series.csv` would replace the series with its results.
    const before = readFileSync(csv, 'utf8');
    const same = shell('"$0" "$1" spikes evaluate --csv - --preset fewer --out "$2" < "$2"', [csv]);
    expect(same.status).toBe(2);
    expect(same.stderr).toContain('is the --csv file itself');
    expect(readFileSync(csv, 'utf8')).toBe(before);
  });

  it('refuses --out /dev/stdout where -, or stdout appended to the series, would be refused', () => {
    const csv = join(directory, 'stdout-cases.csv');
    writeFileSync(csv, syntheticSeries(400, 6, 350));
    for (const out of ['-', '/dev/stdout', '/dev/fd/1']) {
      const all = cliSync(['spikes', 'evaluate', '--csv', csv, '--preset', 'all', '--out', out]);
      expect(all.status, out).toBe(2);
      expect(all.stderr, out).toContain('--preset all writes one results file per preset');
    }
    const before = readFileSync(csv, 'utf8');
    const appended = shell('"$0" "$1" spikes evaluate --csv "$2" --preset fewer --out /dev/stdout >> "$2"', [csv]);
    expect(appended.status).toBe(2);
    expect(appended.stderr).toContain('stdout is the --csv file itself');
    expect(readFileSync(csv, 'utf8')).toBe(before);
  });

  it('writes all of its results to a pipe whose reader is slow (/dev/stderr, non-blocking in Node)', () => {
    const csv = join(directory, 'large.csv');
    writeFileSync(csv, syntheticSeries(30_000, 6, 25_000));
    const file = join(directory, 'large.results.csv');
    const toFile = cliSync(['spikes', 'evaluate', '--csv', csv, '--preset', 'fewer', '--out', file], 120_000);
    expect(toFile.status, toFile.stderr).toBe(0);
    // The reader starts only once the pipe is full (or the writer is gone): the writer meets a full
    // pipe for sure, without a clock deciding it.
    const piped = shell(
      `"$0" "$1" spikes evaluate --csv "$2" --preset fewer --out /dev/stderr 2>&1 >/dev/null | "$3" -c '${lateReader}'`,
      [csv, venvBin('python')],
      120_000,
    );
    // All of the results (and the warnings stderr also carries), not the 64 KiB a full pipe took.
    expect(Number(piped.stdout.trim())).toBeGreaterThanOrEqual(readFileSync(file).length);
  });

  it('refuses a stdin larger than it reads at once as soon as it is, saying the limit and how to split', () => {
    // 150 MB of one repeated row: refused at 100 MB, without holding the rest (it used to read
    // everything, then count rows).
    const out = join(directory, 'endless.csv');
    const result = shell(
      `yes '2021-03-01 00:00:00,1' | head -c 150000000 | "$0" "$1" spikes evaluate --csv - --out "$2"`,
      [out],
      120_000,
    );
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(
      '--csv: stdin is larger than 100,000,000 bytes, the most read at once; split it into files of at most 2,000,000 rows, each starting with the header line',
    );
    expect(existsSync(out)).toBe(false);
  });

  it('names stdin "stdin" everywhere: in messages, the summary and the results files of --preset all', async () => {
    const data = syntheticSeries(400, 6, 350);
    const out = join(directory, 'from-stdin');
    const all = await runCli(['spikes', 'evaluate', '--csv', '-', '--preset', 'all', '--out', out], { input: data });
    expect(all.code).toBe(0);
    expect(readdirSync(out).sort()).toEqual(SPIKE_PRESETS.map((preset) => `${preset}_stdin.csv`).sort());
    expect(all.stderr).toContain('400 rows of stdin, buckets of 5 min');

    const json = await runCli(['spikes', 'evaluate', '--csv', '-', '--out', join(out, 'one.csv'), '--json'], {
      input: data,
    });
    expect(json.json<{ series: string }>().series).toBe('stdin');

    const broken = await runCli(['spikes', 'evaluate', '--csv', '-'], {
      input: 'timestamp,value\n2015-02-26 21:42:53,3\n2015-02-26 21:47:53,many\n',
    });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('stdin:3: value "many" is not a count');

    // No file name to find the entry of --windows by: --series must say which.
    const windows = join(directory, 'stdin_windows.json');
    writeFileSync(windows, JSON.stringify({ 'realTweets/x.csv': [] }));
    const unnamed = await runCli(['spikes', 'evaluate', '--csv', '-', '--windows', windows], { input: data });
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toContain('--windows with --csv - needs --series');
  });

  it('says what is wrong with a path it cannot read or write, with the usage exit code', async () => {
    const csv = join(directory, 'paths.csv');
    writeFileSync(csv, syntheticSeries(400, 6, 350));
    const missing = await runCli(['spikes', 'evaluate', '--csv', join(directory, 'seris.csv')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--csv: cannot read .*seris\.csv: ENOENT: no such file or directory/);

    const intoDirectory = await runCli(['spikes', 'evaluate', '--csv', csv, '--preset', 'fewer', '--out', directory]);
    expect(intoDirectory.code).toBe(2);
    expect(intoDirectory.stderr).toContain('is a directory; give a file name');
    expect(intoDirectory.stderr).not.toContain('EISDIR');
    // A directory meant that does not exist yet: said so, not a rename of a temporary file.
    const newDirectory = `${join(directory, 'not-yet')}/`;
    const intoNew = await runCli(['spikes', 'evaluate', '--csv', csv, '--preset', 'fewer', '--out', newDirectory]);
    expect(intoNew.code).toBe(2);
    expect(intoNew.stderr).toContain('is a directory; give a file name');
    expect(intoNew.stderr).not.toMatch(/\.tmp|ENOTDIR|the others/);
    expect(existsSync(newDirectory)).toBe(false);

    const allIntoCsv = join(directory, 'single.csv');
    const csvName = await runCli(['spikes', 'evaluate', '--csv', csv, '--preset', 'all', '--out', allIntoCsv]);
    expect(csvName.code).toBe(2);
    expect(csvName.stderr).toContain('names a CSV file; give a directory, or one --preset');
    expect(existsSync(allIntoCsv)).toBe(false);

    const aFile = join(directory, 'results-file');
    writeFileSync(aFile, 'x');
    const intoFile = await runCli(['spikes', 'evaluate', '--csv', csv, '--preset', 'all', '--out', aFile]);
    expect(intoFile.code).toBe(2);
    expect(intoFile.stderr).toContain(`--out ${aFile} is a file`);

    // The series itself as --out (by another spelling of its path): refused, the series kept.
    const series = readFileSync(csv, 'utf8');
    const overInput = await runCli(['spikes', 'evaluate', '--csv', csv, '--out', join(directory, '.', 'paths.csv')]);
    expect(overInput.code).toBe(2);
    expect(overInput.stderr).toContain('is the --csv file itself');
    expect(readFileSync(csv, 'utf8')).toBe(series);

    // A directory in the way of the last preset's file: refused before any preset's file is written.
    const partly = join(directory, 'partly');
    mkdirSync(join(partly, 'more_paths.csv'), { recursive: true });
    const blocked = await runCli(['spikes', 'evaluate', '--csv', csv, '--preset', 'all', '--out', partly]);
    expect(blocked.code).toBe(2);
    expect(blocked.stderr).toContain('more_paths.csv: a directory of that name is in the way');
    expect(readdirSync(partly)).toEqual(['more_paths.csv']);

    // Buckets shorter than the rows' step leave most of them unknown: said, with the step to use.
    const oneMinute = await runCli([
      'spikes',
      'evaluate',
      '--csv',
      csv,
      '--bucket-minutes',
      '1',
      '--out',
      join(directory, 'one-minute.csv'),
    ]);
    expect(oneMinute.code).toBe(0);
    expect(oneMinute.stderr).toMatch(
      /^warning: .*paths\.csv: only 400 of the \d+ 1-minute buckets .*try --bucket-minutes 5\n/,
    );

    // A bucket that does not divide the rows' step: refused, nothing written, the fitting ones named.
    const twoMinutes = await runCli([
      'spikes',
      'evaluate',
      '--csv',
      csv,
      '--bucket-minutes',
      '2',
      '--out',
      join(directory, 'two-minute.csv'),
    ]);
    expect(twoMinutes.code).toBe(2);
    expect(twoMinutes.stderr).toContain("--bucket-minutes 2 does not divide the rows' 5-minute step");
    expect(existsSync(join(directory, 'two-minute.csv'))).toBe(false);

    // A results file in a directory that does not exist: named, not the temporary file beside it.
    const unmade = join(directory, 'missing', 'x.csv');
    const nowhere = await runCli(['spikes', 'evaluate', '--csv', csv, '--out', unmade]);
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain(
      `cannot write the results to ${unmade}: ENOENT: no such file or directory; no results`,
    );
    expect(nowhere.stderr).not.toContain('.tmp');

    // A line break in the series' file name is shown escaped, as the errors show it: one line each.
    const broken = join(directory, 'line\nbreak.csv');
    writeFileSync(broken, readFileSync(csv));
    const named = await runCli(['spikes', 'evaluate', '--csv', broken, '--out', join(directory, 'named.csv')]);
    expect(named.code, named.stderr).toBe(0);
    expect(named.stderr).toContain(`rows of ${directory}/line\\nbreak.csv, buckets of 5 min:`);
    const sparseNamed = await runCli([
      'spikes',
      'evaluate',
      '--csv',
      broken,
      '--bucket-minutes',
      '1',
      '--out',
      join(directory, 'named-1.csv'),
    ]);
    expect(sparseNamed.stderr).toMatch(/^warning: .*line\\nbreak\.csv: only 400 of/);

    // Every preset into one stream would read as one file with three headers.
    const allToStdout = await runCli(['spikes', 'evaluate', '--csv', csv, '--preset', 'all', '--out', '-']);
    expect(allToStdout.code).toBe(2);
    expect(allToStdout.stderr).toContain('give --out <directory>');
    expect(allToStdout.stdout).toBe('');
  });
});

describe('news-alerts spikes explain without counts', () => {
  let sandbox: CliSandbox;
  beforeAll(async () => {
    sandbox = await startCliSandbox();
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it('says why a rule has no counts and what to do, then explains it once a run counted', async () => {
    // Each hint names the sandbox it was given, so pasting it acts on the same target.
    const selector = `news-alerts --sandbox-file ${sandbox.descriptorPath}`;
    const unknown = await sandbox.cli(['spikes', 'explain', 'no-such-rule']);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain(`no rule no-such-rule (${selector} rules list shows the rules)`);

    const off = await sandbox.cli(['spikes', 'explain', 'markets-rates']);
    expect(off.code).toBe(3);
    expect(off.stderr).toContain('rule markets-rates has no spike alerts');
    expect(off.stderr).toContain(`${selector} rules update markets-rates --spikes balanced`);

    // The rule source leaves disabled rules out; explain still tells them apart.
    expect((await sandbox.cli(['rules', 'disable', 'markets-rates'])).code).toBe(0);
    const disabled = await sandbox.cli(['spikes', 'explain', 'markets-rates']);
    expect(disabled.code).toBe(3);
    expect(disabled.stderr).toContain(
      `rule markets-rates is disabled, so no run counts for it; enable it (${selector} rules enable markets-rates)`,
    );
    expect((await sandbox.cli(['rules', 'enable', 'markets-rates'])).code).toBe(0);

    expect((await sandbox.cli(['rules', 'update', 'markets-rates', '--spikes', 'balanced'])).code).toBe(0);
    const notYet = await sandbox.cli(['spikes', 'explain', 'markets-rates']);
    expect(notYet.code).toBe(3);
    expect(notYet.stderr).toContain('has spike alerts (balanced) but no run has counted for it yet');
    expect(notYet.stderr).toContain(`(${selector} run starts one now)`);
    expect(notYet.stderr).not.toContain('--spikes balanced');

    expect((await sandbox.cli(['run'])).code).toBe(0);
    const explained = await sandbox.cli(['spikes', 'explain', 'markets-rates', '--json']);
    expect(explained.code).toBe(0);
    const document = explained.json<{
      ruleId: string;
      preset: string;
      countingNow: boolean;
      hoursEvaluated: number;
      openHours: { at: string; stories: number }[];
      alertsPossibleFrom: string;
    }>();
    expect(document).toMatchObject({ ruleId: 'markets-rates', preset: 'balanced', countingNow: true });
    // One run: its hour is still open, so the chart is empty; it says so, and when alerts can start.
    expect(document.hoursEvaluated).toBe(0);
    expect(Date.parse(document.alertsPossibleFrom) % 3_600_000).toBe(0);
    for (const open of document.openHours) {
      expect(Date.parse(document.alertsPossibleFrom)).toBeGreaterThanOrEqual(Date.parse(open.at) + 71 * 3_600_000);
    }
    const shown = await sandbox.cli(['spikes', 'explain', 'markets-rates']);
    expect(shown.code).toBe(0);
    expect(shown.stderr).toContain('No hour is complete yet');
    // No chart yet, so no caption announcing one.
    // (Captions go to stderr here: piped output is TSV, whose stdout is the table alone.)
    expect(shown.stderr).not.toContain('new stories per hour');
    expect(shown.stderr).toContain('Episodes each preset would have opened:');
    expect(shown.stderr).toContain('Warm-up: no spike alert before ');
    expect(shown.stderr).not.toContain('Runs no longer count');

    // Spike alerts turned off: the counts recorded are still shown, and it says they no longer grow.
    expect((await sandbox.cli(['rules', 'update', 'markets-rates', '--spikes', 'off'])).code).toBe(0);
    const turnedOff = await sandbox.cli(['spikes', 'explain', 'markets-rates']);
    expect(turnedOff.code).toBe(0);
    expect(turnedOff.stderr).toContain('Runs no longer count for this rule: rule markets-rates has no spike alerts');

    // With hours evaluated (three weeks primed as a counting rule would have them), the chart
    // comes with its caption, one line per day of the window.
    const store = new DynamoSpikeStore({
      documents: sandbox.stack.clients.documents,
      tableName: sandbox.descriptor.names.stateTable,
      now: Date.now,
      log: silentLog,
    });
    await primeSpikeHistory(store, {
      ruleId: 'markets-rates',
      audienceId: 'markets-desk',
      now: Date.now(),
      perHour: 2,
    });
    const charted = await sandbox.cli(['spikes', 'explain', 'markets-rates', '--days', '3']);
    expect(charted.code).toBe(0);
    expect(charted.stderr).not.toContain('No hour is complete yet');
    expect(charted.stderr).toContain('new stories per hour over the last 3 day(s)');
    const days = charted.stdout.split('\n').filter((line) => /^\d{4}-\d{2}-\d{2} /.test(line));
    expect(days.length).toBeGreaterThanOrEqual(3);
  });
});
