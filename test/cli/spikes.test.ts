/**
 * `news-alerts spikes evaluate` on a NAB-format series that is not in the repository (generated
 * here, with its window in NAB's combined_windows.json format): the results files are in NAB's
 * results format, row for row with the data file, and NAB's scoring (bench/spikes/nab.ts) accepts
 * them.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SPIKE_PRESETS } from '#core/spikes/detector';
import { syntheticSeries } from '#test/spike-world';
import { NAB_PROFILE_NAMES, nabTime, normalizedScore, scoreFile, windowRows } from '../../bench/spikes/nab.ts';
import { runCli } from './support.ts';

const directory = mkdtempSync(join(tmpdir(), 'spikes-evaluate-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

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
});
