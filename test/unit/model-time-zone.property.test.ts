/**
 * `isTimeZone` remembers its answers (a run validates hundreds of audiences with a few zones): a
 * remembered answer must be the runtime's own, for valid names, misspelt ones and any string, in
 * any order and past the bound where the memory is emptied.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTimeZone, parseAudience } from '#core/model';

/** The runtime's own answer, asked afresh. */
function runtimeKnows(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const names = fc.oneof(
  fc.constantFrom('Asia/Seoul', 'UTC', 'Europe/Berlin', 'America/New_York', 'Etc/GMT+9', 'asia/seoul'),
  fc.constantFrom('Asia/Seol', 'Mars/Olympus', '', ' UTC', 'UTC ', 'Europe/Berlin\u0000', '+09:00'),
  fc.string({ maxLength: 12 }),
);

describe('isTimeZone', () => {
  it("gives the runtime's answer for every name, asked once or again", () => {
    fc.assert(
      fc.property(fc.array(names, { minLength: 1, maxLength: 400 }), (asked) => {
        for (const name of asked) expect(isTimeZone(name)).toBe(runtimeKnows(name));
      }),
      { numRuns: 60 },
    );
  });

  it('an audience reads a known zone in any case as IANA spells it, an alias as written, and refuses an unknown one', () => {
    const audienceIn = (timeZone: string) =>
      parseAudience({ audienceId: 'a', name: 'A', topicArn: 'arn:aws:sns:us-east-1:123456789012:a', timeZone });
    const anyCase = (zone: string) =>
      fc
        .array(fc.boolean(), { minLength: zone.length, maxLength: zone.length })
        .map((upper) => [...zone].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join(''));
    const canonical = fc.constantFrom('Asia/Seoul', 'Europe/London', 'America/New_York', 'UTC', 'Etc/GMT+9');
    fc.assert(
      fc.property(
        canonical.chain((zone) => anyCase(zone).map((typed) => [zone, typed] as const)),
        ([zone, typed]) => {
          const parsed = audienceIn(typed);
          expect(parsed.ok && parsed.value.timeZone, typed).toBe(zone);
        },
      ),
    );
    // An alias is kept as its owner wrote it, whatever Intl resolves it to.
    for (const alias of ['US/Pacific', 'Asia/Calcutta']) {
      const parsed = audienceIn(alias);
      expect(parsed.ok && parsed.value.timeZone).toBe(alias);
    }
    expect(audienceIn('europe/londn').ok).toBe(false);
  });
});
