/**
 * functions/core/spikes/evaluate.ts against hostile series: whatever the timestamps, the work is
 * bounded before it starts (a far-off timestamp is refused, with its line, instead of stepping the
 * detector for hours); whatever the text, an error quotes at most a short piece of it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PRESETS } from '#core/spikes/detector';
import {
  bucketLengthOf,
  type CountSeries,
  checkSeriesSpan,
  evaluateSeriesWith,
  MAX_SERIES_BUCKETS,
  readCountSeries,
  SeriesFormatError,
} from '#core/spikes/evaluate';

const HOUR = 3_600_000;
const START = Date.UTC(2021, 2, 1);

/** A series at the given epoch ms (values 1). */
function seriesAt(times: readonly number[]): CountSeries {
  const texts = times.map((time) => new Date(time).toISOString());
  return { texts, times, values: times.map(() => 1), valueTexts: times.map(() => '1') };
}

describe('spikes evaluate: the span of a series is bounded before any work', () => {
  it('refuses exactly the series spanning more buckets than the bound, naming the line after the widest gap', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 1_000_000 }), { minLength: 1, maxLength: 30 }),
        fc.nat({ max: 29 }),
        fc.integer({ min: 0, max: 4 * MAX_SERIES_BUCKETS }),
        fc.constantFrom(1, 5, 60, 1440),
        (steps, at, far, minutes) => {
          const bucketMs = minutes * 60_000;
          const gaps = steps.map((step, index) => (index === at % steps.length ? far * bucketMs + step : step * 1000));
          const times = [START];
          for (const gap of gaps) times.push((times.at(-1) as number) + gap);
          const series = seriesAt(times);
          const buckets = Math.floor(((times.at(-1) as number) - START) / bucketMs) + 1;
          if (buckets <= MAX_SERIES_BUCKETS) {
            expect(() => checkSeriesSpan(series, bucketMs, 'x.csv')).not.toThrow();
            return;
          }
          const widest = gaps.indexOf(Math.max(...gaps)) + 1;
          expect(() => checkSeriesSpan(series, bucketMs, 'x.csv')).toThrow(
            new RegExp(`^x\\.csv:${widest + 2}: timestamp .* after the row before it.*split the file there`),
          );
        },
      ),
    );
  });

  it('refuses a far-off last row at once instead of stepping every bucket up to it', () => {
    const text = ['timestamp,value', '2021-03-01 00:00:00,1', '2021-03-01 01:00:00,2', '2261-12-31 23:55:00,1'];
    const series = readCountSeries(text.join('\n'), 'far.csv');
    expect(() => evaluateSeriesWith(series, PRESETS.balanced, { bucketMs: HOUR, source: 'far.csv' })).toThrow(
      /^far\.csv:4: timestamp 2261-12-31 23:55:00 is 241 years after the row before it/,
    );
    // Just past the bound (about ten seconds of stepping without it): refused too.
    const past = seriesAt([START, START + HOUR, START + MAX_SERIES_BUCKETS * HOUR]);
    expect(() => evaluateSeriesWith(past, PRESETS.balanced, { bucketMs: HOUR })).toThrow(SeriesFormatError);
    expect(() => evaluateSeriesWith(past, PRESETS.balanced, { bucketMs: HOUR })).toThrow(/:4: .*at most 2,000,000/);
  });
});

describe('spikes evaluate: the years of a timestamp', () => {
  // Years 0-99 read as "not a timestamp" (JavaScript dates put them in the 1900s), and years NAB's
  // scorer cannot read (pandas timestamps) were accepted into a results file it then refused
  // (found by a reviewer).
  it.each([
    '0000-01-01 00:00:00',
    '0050-06-01 12:00:00',
    '1600-01-01 00:00:00',
    '2262-05-01 00:00:00',
    '9999-12-31 23:55:00',
  ])('refuses %s, naming the years NAB can score', (timestamp) => {
    const text = ['timestamp,value', '2021-03-01 00:00:00,1', `${timestamp},2`].join('\n');
    expect(() => readCountSeries(text, 'years.csv')).toThrow(
      `years.csv:3: timestamp "${timestamp}": the year must be from 1678 to 2261, the years NAB's scorer can read (as pandas timestamps)`,
    );
  });

  it('takes the first and last years pandas holds whole', () => {
    const text = ['timestamp,value', '1678-01-01 00:00:00,1', '2261-12-31 23:00:00,2'].join('\n');
    expect(readCountSeries(text, 'edge.csv').times).toEqual([Date.UTC(1678, 0, 1), Date.UTC(2261, 11, 31, 23)]);
  });
});

describe('spikes evaluate: the rows of a series are bounded while they are read', () => {
  it('refuses exactly the series with more rows than the limit, at the first row past it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 60 }),
        fc.nat({ max: 3 }),
        (rows, most, blank) => {
          const lines = Array.from(
            { length: rows },
            (_, row) => `${new Date(START + row * HOUR).toISOString()},${row}`,
          );
          const text = `timestamp,value\n${lines.join('\n')}${'\n'.repeat(blank)}`;
          if (rows <= most) {
            expect(readCountSeries(text, 's.csv', most).values).toHaveLength(rows);
          } else {
            expect(() => readCountSeries(text, 's.csv', most)).toThrow(
              `s.csv:${most + 2}: more than ${most} rows, the most evaluated at once; split it into files of at most 2,000,000 rows`,
            );
          }
        },
      ),
    );
  });
});

describe('spikes evaluate: line endings and what an error quotes', () => {
  it('reads the same series whether its lines end in LF, CRLF or a lone CR (old Mac), mixed or not', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 1000 }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.constantFrom('\n', '\r\n', '\r'), { minLength: 41, maxLength: 41 }),
        (counts, breaks) => {
          const lines = [
            'timestamp,value',
            ...counts.map((count, row) => `${new Date(START + row * HOUR).toISOString()},${count}`),
          ];
          const text = lines.map((line, index) => `${line}${breaks[index]}`).join('');
          expect(readCountSeries(text, 'mac.csv').values).toEqual(counts);
        },
      ),
    );
  });

  it('quotes at most 80 characters of any line it refuses, with an ellipsis when it cut', () => {
    const long = fc.string({ unit: 'binary', maxLength: 2000, size: 'max' }).filter((text) => !/[\r\n,]/.test(text));
    fc.assert(
      fc.property(long, fc.constantFrom('header', 'timestamp', 'value'), (junk, where) => {
        const text =
          where === 'header'
            ? `${junk}\n`
            : where === 'timestamp'
              ? `timestamp,value\nx${junk},1\n`
              : `timestamp,value\n2021-03-01 00:00:00,x${junk}\n`;
        let message = '';
        try {
          readCountSeries(text, 'bad.csv');
        } catch (error) {
          message = (error as Error).message;
        }
        // A header that happens to name both columns is no error.
        if (where === 'header' && message === '') return;
        expect(message).toMatch(/^bad\.csv:[12]: /);
        expect(message.length).toBeLessThan(80 * 6 + 400);
        const quote = /"((?:[^"\\]|\\.)*)"(…?)/.exec(
          message.slice(message.indexOf(where === 'header' ? 'found' : where)),
        );
        expect(quote).not.toBeNull();
        const shown = [...(JSON.parse(`"${quote?.[1]}"`) as string)];
        expect(shown.length).toBeLessThanOrEqual(80);
        expect(quote?.[2] === '…').toBe([...`${where === 'header' ? '' : 'x'}${junk}`.trimEnd()].length > 80);
      }),
    );
  });
});

describe('spikes evaluate: bucket advice that works when followed', () => {
  it('on rows closer than the bucket, names a --bucket-minutes that evaluates, or says to sum rows finer than a minute', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(20, 30, 90, 60, 120, 300, 600, 3600),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 3, max: 20 }),
        (stepSeconds, minutes, rows) => {
          const series = seriesAt(Array.from({ length: rows }, (_, row) => START + row * stepSeconds * 1000));
          const evaluate = (bucketMinutes: number) =>
            evaluateSeriesWith(series, PRESETS.balanced, { bucketMs: bucketMinutes * 60_000, source: 's.csv' });
          let message = '';
          try {
            evaluate(minutes);
          } catch (error) {
            message = (error as Error).message;
          }
          const fits = stepSeconds % 60 === 0 && (stepSeconds / 60) % minutes === 0;
          if (fits || stepSeconds >= minutes * 60) {
            expect(message).toBe('');
            return;
          }
          expect(message).toMatch(/^s\.csv:3: a second row in the same \d+-minute bucket as the row before it/);
          expect(message).toContain(`sum the rows into ${minutes}-minute buckets first`);
          const advised = /give --bucket-minutes (\d+)/.exec(message)?.[1];
          if (stepSeconds % 60 !== 0) {
            expect(advised).toBeUndefined();
          } else {
            expect(advised).toBe(String(stepSeconds / 60));
            expect(() => evaluate(Number(advised))).not.toThrow();
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('asks to sum rows finer than a minute rather than for a --bucket-minutes that cannot work', () => {
    const series = seriesAt(Array.from({ length: 10 }, (_, row) => START + row * 30_000));
    expect(() => bucketLengthOf(series, 's.csv')).toThrow(
      /^s\.csv: rows are mostly 30 s apart; .*sum the rows into buckets of whole minutes first$/,
    );
    expect(() => bucketLengthOf(series, 's.csv')).not.toThrow(/give --bucket-minutes/);
  });
});
