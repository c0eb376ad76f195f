/**
 * The evaluation interface (functions/core/spikes/evaluate.ts: any `timestamp,value` series in,
 * NAB's results format out) and the bench's NAB scorer (bench/spikes/nab.ts): the scorer gives the
 * null detector 0 and a perfect one 100 as NAB's README says, rewards an early detection more than a
 * late one, charges each false-positive row, and ignores the probationary rows; bad input gets an
 * error that names the line.
 */
import { describe, expect, it } from 'vitest';
import { PRESETS } from '#core/spikes/detector';
import {
  bucketLengthOf,
  checkBucketFitsRows,
  evaluateSeries,
  evaluateSeriesWith,
  labelsOf,
  nabResults,
  readCountSeries,
  sparseBuckets,
} from '#core/spikes/evaluate';
import { syntheticSeries } from '#test/spike-world';
import {
  eventCounts,
  type LabelledFile,
  NAB_PROFILE_NAMES,
  nabTime,
  normalizedScore,
  probationRows,
  scoreFile,
} from '../../bench/spikes/nab.ts';
import { publishedRows } from '../../bench/spikes/nab-bench.ts';

const FIVE_MINUTES = 300_000;

const file = (rows: number, windows: [number, number][]): LabelledFile => ({
  name: 'synthetic',
  timestamps: Array.from({ length: rows }, (_, i) => i * FIVE_MINUTES),
  windows,
});

describe('NAB scoring (bench/spikes/nab.ts)', () => {
  const labelled = file(4000, [
    [1000, 1199],
    [3000, 3199],
  ]);
  const scores = (rows: number[]) => {
    const out = new Array(4000).fill(0);
    for (const row of rows) out[row] = 1;
    return out;
  };

  it('gives the null detector 0 and one that fires on each window’s first row 100, at every profile', () => {
    for (const profile of NAB_PROFILE_NAMES) {
      expect(normalizedScore([scoreFile(labelled, scores([]), 0.5, profile)], profile)).toBeCloseTo(0, 9);
      expect(normalizedScore([scoreFile(labelled, scores([1000, 3000]), 0.5, profile)], profile)).toBeCloseTo(100, 9);
    }
  });

  it('rewards the earliest detection of a window, more for earlier; charges each false row', () => {
    const early = scoreFile(labelled, scores([1010, 3010]), 0.5, 'standard').score;
    const late = scoreFile(labelled, scores([1190, 3190]), 0.5, 'standard').score;
    const both = scoreFile(labelled, scores([1010, 1190, 3010]), 0.5, 'standard').score;
    expect(early).toBeGreaterThan(late);
    expect(both).toBeCloseTo(early, 9);
    const withFalse = scoreFile(labelled, scores([1010, 3010, 2000, 2001]), 0.5, 'reward_low_FP_rate');
    expect(withFalse.falsePositiveRows).toBe(2);
    expect(withFalse.score).toBeCloseTo(
      scoreFile(labelled, scores([1010, 3010]), 0.5, 'reward_low_FP_rate').score - 0.44,
      2,
    );
    // Probation: 15% of the rows, at most 750; a detection there costs nothing.
    expect(probationRows(4000)).toBe(600);
    expect(scoreFile(labelled, scores([100]), 0.5, 'standard').falsePositiveRows).toBe(0);
  });

  it('counts events as the README defines them: one false alarm per run of detections', () => {
    const counts = eventCounts(labelled, scores([1010, 2000, 2001, 2002, 2500]), 0.5);
    expect(counts).toMatchObject({ windows: 2, hits: 1, falseAlarms: 2 });
  });

  it('reads the published detectors’ table of the data set’s README', () => {
    const readme = [
      '| detector | NAB standard | low-FP | low-FN | event precision | event recall | windows hit | FP alerts | FP / series-week |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
      '| ARTime | 80.2 | 66.6 | 86.8 | 0.28 | 1.00 | 15/15 | 39 | 1.04 |',
      '| null | 0.0 | 0.0 | 0.0 | n/a | 0.00 | 0/15 | 0 | 0.00 |',
    ].join('\n');
    const rows = publishedRows(readme);
    expect(rows.map((row) => row.detector)).toEqual(['ARTime', 'null']);
    expect(rows[0]).toMatchObject({ scores: { reward_low_FP_rate: 66.6 }, hits: 15, windows: 15, falseAlarms: 39 });
    expect(Number.isNaN(rows[1]?.precision)).toBe(true);
  });
});

describe('spikes evaluate: any series in, NAB results out', () => {
  it('finds the burst of a synthetic NAB-format series and writes one alert row in NAB’s columns', () => {
    const text = syntheticSeries(3000, 3, 2400);
    const series = readCountSeries(text, 'synthetic.csv');
    expect(bucketLengthOf(series, 'synthetic.csv')).toBe(FIVE_MINUTES);
    const evaluation = evaluateSeries(series, 'balanced', { bucketMs: FIVE_MINUTES });
    expect(evaluation.alerts).toContain(2400);
    const windowFrom = series.texts[2300] as string;
    const windowTo = series.texts[2500] as string;
    const labels = labelsOf(series, [[windowFrom, windowTo]], 'windows.json');
    const results = nabResults(series, evaluation, labels).trimEnd().split('\n');
    expect(results[0]).toBe('timestamp,value,anomaly_score,label');
    expect(results).toHaveLength(3001);
    expect(results[2401]).toMatch(/^2015-03-0\d \d\d:\d\d:53,4\d\d,1,1$/);
    expect(results.slice(1).every((row) => /^[^,]+,\d+,[01],[01]$/.test(row))).toBe(true);
    // The timestamps go back out as they came in: NAB matches windows to them.
    expect(results.slice(1).map((row) => nabTime(row.split(',')[0] as string))).toEqual(series.times);
  });

  it('gives unknown buckets for gaps and refuses two rows in one bucket', () => {
    const text = syntheticSeries(400, 4, 1000).split('\n');
    const gappy = [text[0], ...text.slice(1, 200), ...text.slice(260, 401)].join('\n');
    const series = readCountSeries(gappy, 'gappy.csv');
    const evaluation = evaluateSeriesWith(series, PRESETS.more, { bucketMs: FIVE_MINUTES });
    expect(evaluation.verdicts).toHaveLength(series.values.length);
    expect(() =>
      evaluateSeries(
        readCountSeries(
          ['timestamp,value', '2020-01-01 00:00:00,1', '2020-01-01 00:01:00,2', '2020-01-01 00:05:00,3'].join('\n'),
          'dup.csv',
        ),
        'balanced',
        { bucketMs: FIVE_MINUTES, source: 'dup.csv' },
      ),
    ).toThrow(/dup\.csv:3: a second row in the same 5-minute bucket/);
  });

  it('reads cells a spreadsheet or pandas wrote in double quotes as the cells they quote', () => {
    const plain = readCountSeries('timestamp,value\n2020-01-01 00:00:00,3\n2020-01-01 00:05:00,4\n', 'p.csv');
    const quoted = readCountSeries(
      '"timestamp","value"\n"2020-01-01 00:00:00","3"\n "2020-01-01 00:05:00" ,4\n',
      'q.csv',
    );
    expect(quoted).toEqual(plain);
    // The results file names the rows as NAB's scorer reads them: without the quotes.
    expect(nabResults(quoted, evaluateSeries(quoted, 'balanced', { bucketMs: FIVE_MINUTES }), undefined)).toBe(
      nabResults(plain, evaluateSeries(plain, 'balanced', { bucketMs: FIVE_MINUTES }), undefined),
    );
    // A quoted count with a thousands separator is still refused for its comma.
    expect(() => readCountSeries('timestamp,value\n2020-01-01 00:00:00,"1,000"\n', 'm.csv')).toThrow(
      /m\.csv:2: 3 cells/,
    );
  });

  it('says which line and what to fix for input it cannot read', () => {
    expect(() => readCountSeries('time,count\n1,2\n', 'a.csv')).toThrow(
      /a\.csv:1: the first line must name the columns "timestamp" and "value"/,
    );
    expect(() => readCountSeries('timestamp,value\n2020-01-01 00:00:00,3\n2020-01-01 00:05:00,x\n', 'b.csv')).toThrow(
      /b\.csv:3: value "x" is not a count/,
    );
    expect(() => readCountSeries('timestamp,value\n2020-01-01 00:05:00,3\n2020-01-01 00:00:00,4\n', 'c.csv')).toThrow(
      /c\.csv:3: timestamp 2020-01-01 00:00:00 is before the row before it; sort the file by time/,
    );
    expect(() => readCountSeries('timestamp,value\n01/02/2020,3\n2020-01-01 00:05:00,4\n', 'd.csv')).toThrow(
      /d\.csv:2: timestamp "01\/02\/2020" is not/,
    );
    expect(() => readCountSeries('timestamp,value\n2020-01-01 00:00:00,-1\n2020-01-01 00:05:00,4\n', 'e.csv')).toThrow(
      /not a count/,
    );
  });

  it('refuses rows a scorer would misread instead of guessing: extra cells, impossible dates, repeats, fractions, hex, huge values', () => {
    const file = (rows: string) => `timestamp,value\n2020-01-01 00:00:00,3\n${rows}\n2020-01-01 01:00:00,4\n`;
    const cases: [string, RegExp][] = [
      ['2020-01-01 00:05:00,1,000', /f\.csv:3: 3 cells, but the header names 2 columns; a value must not hold a comma/],
      ['2020-01-01 00:05:00,7,extra', /f\.csv:3: 3 cells/],
      // Too few cells: no comma to blame.
      [
        '2020-01-01 00:05:00',
        /f\.csv:3: 1 cell, but the header names 2 columns; give every row a cell for each column$/,
      ],
      ['2020-02-30 00:05:00,4', /f\.csv:3: timestamp "2020-02-30 00:05:00" is not/],
      ['2020-01-01 24:00:00,4', /f\.csv:3: timestamp "2020-01-01 24:00:00" is not/],
      ['2020-01-01T00:61:00Z,4', /f\.csv:3: timestamp "2020-01-01T00:61:00Z" is not/],
      [
        '2020-01-01 00:00:00,4',
        /f\.csv:3: timestamp 2020-01-01 00:00:00 repeats the row before it; keep one row per timestamp/,
      ],
      ['2020-01-01 00:05:00,0.37', /f\.csv:3: value "0.37" is not a whole count; .*scale.*rounding would make it 0\)/],
      // What rounding would do to this value, not to another one.
      ['2020-01-01 00:05:00,2.6', /f\.csv:3: value "2\.6" is not a whole count; .*rounding would make it 3\)/],
      ['2020-01-01 00:05:00,1e3', /f\.csv:3: value "1e3" is in exponent form; write counts as decimal digits/],
      ['2020-01-01 00:05:00,0x1F', /f\.csv:3: value "0x1F" is not a count \(decimal digits/],
      ['2020-01-01 00:05:00,Infinity', /f\.csv:3: value "Infinity" is not a count/],
      [`2020-01-01 00:05:00,1${'0'.repeat(154)}`, /f\.csv:3: value "1000.*…? is larger than a count can be/],
    ];
    for (const [row, error] of cases) expect(() => readCountSeries(file(row), 'f.csv'), row).toThrow(error);
    // A leap day, a whole count written with a point (before or after it), and an offset all read.
    const fine = readCountSeries(
      'timestamp,value\n2020-02-29 23:55:00,3.0\n2020-03-01T09:00:00+09:00,4\n2020-03-01 00:05:00,.0\n2020-03-01T09:10+09:00,6.\n',
      'g.csv',
    );
    expect(fine.values).toEqual([3, 4, 0, 6]);
  });

  it('one row needs a bucket length given, not "two rows"; a header alone has nothing to evaluate', () => {
    const one = readCountSeries('timestamp,value\n2020-01-01 00:00:00,3\n', 'one.csv');
    expect(() => bucketLengthOf(one, 'one.csv')).toThrow(
      /one\.csv: one row cannot tell the bucket length; give --bucket-minutes/,
    );
    expect(evaluateSeries(one, 'balanced', { bucketMs: 3_600_000 }).verdicts).toHaveLength(1);
    expect(() => readCountSeries('timestamp,value\n', 'empty.csv')).toThrow(
      /empty\.csv: no rows after the header line/,
    );
  });

  it('rows a few seconds off the grid are told to round their timestamps, not to sum into buckets they already are', () => {
    // A logger writing every 5 minutes, each row a few seconds late or early.
    const jitter = [0, 3, -2, 40, -40, 1, -3, 2, 35, -1];
    const rows = jitter.map((seconds, row) => {
      const at = new Date(Date.UTC(2020, 0, 1, 0, 5 * row, 0) + seconds * 1000);
      return `${at.toISOString().slice(0, 19).replace('T', ' ')},${row}`;
    });
    const series = readCountSeries(`timestamp,value\n${rows.join('\n')}\n`, 'j.csv');
    expect(() => bucketLengthOf(series, 'j.csv')).toThrow(
      /^j\.csv: rows are about 5 minutes apart, but their timestamps are a few seconds off that grid \(the most common step is \d+ s\): round each timestamp to the nearest 5 minutes of the clock first/,
    );
    const rowsAt = (name: string, offsets: readonly number[]) =>
      readCountSeries(
        `timestamp,value\n${offsets
          .map(
            (seconds, row) =>
              `${new Date(Date.UTC(2020, 0, 1, 0, 5 * row, seconds)).toISOString().slice(0, 19).replace('T', ' ')},${row}`,
          )
          .join('\n')}\n`,
        name,
      );
    // Rows only ever late, by seconds: 5-minute buckets from the first row already hold one each.
    const late = rowsAt('l.csv', [0, 12, 3, 20, 7, 1, 15, 9]);
    expect(() => bucketLengthOf(late, 'l.csv')).toThrow(
      /give --bucket-minutes 5, which puts each row in a bucket of its own$/,
    );
    expect(() => evaluateSeriesWith(late, PRESETS.balanced, { bucketMs: FIVE_MINUTES, source: 'l.csv' })).not.toThrow();
    // Rows two and a half minutes past the marks, a few seconds either way: rounding would put two
    // in one mark, and so would buckets from the first row: summed into the clock's buckets, they
    // are one each.
    // The first row late, the others either way: buckets from it would pair two; rounding works.
    const firstLate = rowsAt('f.csv', [14, -10, 12, -14, 5, -3, 13, -12]);
    expect(() => bucketLengthOf(firstLate, 'f.csv')).toThrow(
      /round each timestamp to the nearest 5 minutes of the clock first/,
    );
    const halfway = rowsAt('h.csv', [153, 146, 155, 148, 150, 154, 145, 151]);
    expect(() => bucketLengthOf(halfway, 'h.csv')).toThrow(/sum the rows into buckets of whole minutes first$/);
    // Rows a steady 57 s apart drift off the minute grid: rounding would put two in one bucket.
    const steady = readCountSeries(
      `timestamp,value\n${Array.from({ length: 30 }, (_, row) => `${new Date(Date.UTC(2020, 0, 1) + row * 57_000).toISOString().slice(0, 19).replace('T', ' ')},1`).join('\n')}\n`,
      's.csv',
    );
    expect(() => bucketLengthOf(steady, 's.csv')).toThrow(
      /rows are mostly 57 s apart; .*sum the rows into buckets of whole minutes first$/,
    );
    expect(() => evaluateSeriesWith(series, PRESETS.balanced, { bucketMs: FIVE_MINUTES, source: 'j.csv' })).toThrow(
      /^j\.csv:\d+: a second row in the same 5-minute bucket as the row before it \(\d+ s apart, nearly 5 min\): .*round each to the nearest 5 minutes of the clock first/,
    );
  });

  it('refuses a bucket length that neither is the rows’ step nor divides it, and names the ones that do', () => {
    const hourly = readCountSeries(
      [
        'timestamp,value',
        ...Array.from(
          { length: 48 },
          (_, h) => `2020-01-0${1 + Math.floor(h / 24)} ${String(h % 24).padStart(2, '0')}:00:00,${h}`,
        ),
      ].join('\n'),
      'h.csv',
    );
    expect(() => checkBucketFitsRows(hourly, 7 * 60_000, 'h.csv')).toThrow(
      /^h\.csv: --bucket-minutes 7 does not divide the rows' 60-minute step.*give --bucket-minutes 60, 30, 20, 15, 12, 10, …$/,
    );
    expect(() => checkBucketFitsRows(hourly, 25 * 60_000, 'h.csv')).toThrow(/--bucket-minutes 25 does not divide/);
    for (const minutes of [60, 30, 15, 1])
      expect(() => checkBucketFitsRows(hourly, minutes * 60_000, 'h.csv')).not.toThrow();
    // Longer than the step: two rows in one bucket, which evaluation refuses row by row.
    expect(() => checkBucketFitsRows(hourly, 120 * 60_000, 'h.csv')).not.toThrow();
    const fiveMinutes = readCountSeries(syntheticSeries(50, 5, 500), 'f.csv');
    expect(() => checkBucketFitsRows(fiveMinutes, 2 * 60_000, 'f.csv')).toThrow(/give --bucket-minutes 5, 1$/);
  });

  it('warns when a bucket length leaves most buckets without a row, and names the rows’ own step', () => {
    const series = readCountSeries(syntheticSeries(600, 5, 500), 's.csv');
    expect(sparseBuckets(series, 5 * 60_000)).toBeUndefined();
    // Two rows per ten-minute bucket is refused elsewhere; one-minute buckets leave 4 in 5 empty.
    const warning = sparseBuckets(series, 60_000);
    expect(warning).toMatch(
      /^only 600 of the 2996 1-minute buckets .* have a row; .*unknown .*try --bucket-minutes 5$/,
    );
    // A series with a long gap: most buckets empty, but the rows' own step is the bucket length.
    const gappy = readCountSeries(
      'timestamp,value\n2020-01-01 00:00:00,3\n2020-01-01 00:05:00,3\n2020-01-01 00:10:00,3\n2020-01-02 00:00:00,3\n',
      'g.csv',
    );
    const gap = sparseBuckets(gappy, 5 * 60_000);
    expect(gap).toMatch(/^only 4 of the 289 5-minute buckets/);
    expect(gap).not.toContain('try --bucket-minutes');
  });
});
