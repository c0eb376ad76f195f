/**
 * `isTimeZone` remembers its answers (a run validates hundreds of audiences with a few zones): a
 * remembered answer must be the runtime's own, for valid names, misspelt ones and any string, in
 * any order and past the bound where the memory is emptied.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTimeZone } from '#core/model';

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
});
