/**
 * Local times in alerts and digests come from cached Intl formatters instead of luxon (render.ts
 * `formatInZone`); they must read exactly as luxon wrote them, in every zone and locale, DST
 * changes included. The reference below is the luxon code the fast path replaced.
 */
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import {
  formatInZone,
  formatLocalTime,
  formatShortLocalTime,
  LOCAL_TIME_LAYOUTS,
  type LocalTimeLayout,
} from '#core/render';

function luxonZoned(epochMs: number, timeZone: string, locale: string, layout: LocalTimeLayout) {
  const local = DateTime.fromMillis(epochMs, { zone: timeZone }).setLocale(locale);
  const zoned = local.isValid ? local : DateTime.fromMillis(epochMs, { zone: 'UTC' }).setLocale(locale);
  const zone = zoned.zoneName ?? 'UTC';
  return {
    text: zoned.toLocaleString(LOCAL_TIME_LAYOUTS[layout]),
    zoneLabel: zone === 'UTC' ? '(UTC)' : `(${zone}, UTC${zoned.toFormat('ZZ')})`,
  };
}

const zones = fc.constantFrom(
  'UTC',
  'utc',
  'Etc/UTC',
  'Asia/Seoul',
  'Europe/London',
  'America/New_York',
  'Europe/Berlin',
  'Australia/Lord_Howe',
  'America/St_Johns',
  'Asia/Kolkata',
  'Pacific/Chatham',
  'UTC+9',
  'Mars/Olympus_Mons',
);
const locales = fc.constantFrom(
  'en-US',
  'en-GB',
  'ko-KR',
  'ja-JP',
  'de-DE',
  'fr-FR',
  'ar-EG',
  'hi-IN',
  'th-TH',
  'en-US-u-nu-arab',
);
const layoutNames = fc.constantFrom<LocalTimeLayout>('full', 'short', 'date', 'time');

describe('local times without luxon', () => {
  it('read as luxon wrote them for arbitrary instants, zones and locales', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1950, 0, 1), max: Date.UTC(2100, 0, 1) }),
        zones,
        locales,
        layoutNames,
        (ms, zone, locale, layout) => {
          expect(formatInZone(ms, zone, locale, layout)).toEqual(luxonZoned(ms, zone, locale, layout));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('read as luxon wrote them in the minutes around DST changes', () => {
    const changes = [
      Date.UTC(2026, 2, 8, 7),
      Date.UTC(2026, 10, 1, 6),
      Date.UTC(2026, 2, 29, 1),
      Date.UTC(2026, 9, 25, 1),
      Date.UTC(2026, 3, 4, 15),
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...changes),
        fc.integer({ min: -7200, max: 7200 }),
        zones,
        locales,
        (change, seconds, zone, locale) => {
          const ms = change + seconds * 1000;
          expect(formatLocalTime(ms, zone, locale)).toBe(
            `${luxonZoned(ms, zone, locale, 'full').text} ${luxonZoned(ms, zone, locale, 'full').zoneLabel}`,
          );
          expect(formatShortLocalTime(ms, zone, locale)).toBe(luxonZoned(ms, zone, locale, 'short').text);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('names the zone and its offset on each side of a change', () => {
    expect(formatLocalTime(Date.UTC(2026, 2, 8, 6, 59), 'America/New_York', 'en-US')).toBe(
      'Sun, Mar 8, 2026, 01:59 (America/New_York, UTC-05:00)',
    );
    expect(formatLocalTime(Date.UTC(2026, 2, 8, 7), 'America/New_York', 'en-US')).toBe(
      'Sun, Mar 8, 2026, 03:00 (America/New_York, UTC-04:00)',
    );
    expect(formatLocalTime(Date.UTC(2026, 10, 22), 'UTC', 'en-US')).toBe('Sun, Nov 22, 2026, 00:00 (UTC)');
  });
});
