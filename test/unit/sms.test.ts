/**
 * SMS segment arithmetic against the GSM 03.38 / 23.040 rules: GSM-7 basic and extension table,
 * UCS-2 fallback, single-part versus multipart capacities, and parts that never split an escape
 * sequence or a surrogate pair.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fitsSms, isGsm7, SMS_LIMITS, smsSegments, toGsmFriendly } from '#core/sms';

describe('smsSegments: GSM-7', () => {
  it('counts an empty text as nothing to send', () => {
    expect(smsSegments('')).toEqual({ encoding: 'GSM-7', segments: 0, units: 0 });
  });

  it('fits 160 basic characters in one segment and needs two for 161', () => {
    expect(smsSegments('a'.repeat(160))).toEqual({ encoding: 'GSM-7', segments: 1, units: 160 });
    expect(smsSegments('a'.repeat(161))).toEqual({ encoding: 'GSM-7', segments: 2, units: 161 });
  });

  it('uses 153 septets per part once a text is split', () => {
    expect(smsSegments('a'.repeat(306)).segments).toBe(2);
    expect(smsSegments('a'.repeat(307)).segments).toBe(3);
    expect(smsSegments('a'.repeat(459)).segments).toBe(3);
    expect(smsSegments('a'.repeat(460)).segments).toBe(4);
  });

  it('counts extension-table characters as two septets', () => {
    for (const char of ['^', '{', '}', '\\', '[', ']', '~', '|', '€', '\f']) {
      expect(smsSegments(char), JSON.stringify(char)).toEqual({ encoding: 'GSM-7', segments: 1, units: 2 });
    }
    // 159 + 2 = 161 septets: one extension character pushes a full message into two parts.
    expect(smsSegments(`${'a'.repeat(158)}€`)).toEqual({ encoding: 'GSM-7', segments: 1, units: 160 });
    expect(smsSegments(`${'a'.repeat(159)}€`)).toEqual({ encoding: 'GSM-7', segments: 2, units: 161 });
    expect(smsSegments('€'.repeat(80))).toEqual({ encoding: 'GSM-7', segments: 1, units: 160 });
    expect(smsSegments('€'.repeat(81))).toEqual({ encoding: 'GSM-7', segments: 2, units: 162 });
  });

  it('never splits an escape sequence across parts', () => {
    // 152 septets then an extension character: it cannot start in the last septet of part one.
    const text = `${'a'.repeat(152)}€${'a'.repeat(152)}`;
    expect(smsSegments(text)).toEqual({ encoding: 'GSM-7', segments: 3, units: 306 });
    expect(smsSegments('a'.repeat(306)).segments).toBe(2);
  });

  it('keeps accented letters of the basic table in GSM-7', () => {
    expect(smsSegments('Ça déjà vu: Øre, Ñoño, £5, ¥10, ¿qué? ¡olé! §1 ÄÖÜäöüß ΔΦΓΛΩΠΨΣΘΞ').encoding).toBe('GSM-7');
    expect(isGsm7('@£$¥èéùìòÇ\nØø\rÅåΔ_ÆæßÉ ¤')).toBe(true);
  });
});

describe('smsSegments: UCS-2', () => {
  it('switches the whole text to UCS-2 for one character outside GSM-7', () => {
    expect(smsSegments(`${'a'.repeat(69)}ç`)).toEqual({ encoding: 'UCS-2', segments: 1, units: 70 });
    expect(smsSegments(`${'a'.repeat(70)}ç`)).toEqual({ encoding: 'UCS-2', segments: 2, units: 71 });
    expect(smsSegments('“quoted”').encoding).toBe('UCS-2');
    expect(smsSegments('…').encoding).toBe('UCS-2');
  });

  it('fits 70 Korean or Japanese characters in one segment and needs two for 71', () => {
    expect(smsSegments('한'.repeat(70))).toEqual({ encoding: 'UCS-2', segments: 1, units: 70 });
    expect(smsSegments('한'.repeat(71))).toEqual({ encoding: 'UCS-2', segments: 2, units: 71 });
    expect(smsSegments('日'.repeat(134))).toEqual({ encoding: 'UCS-2', segments: 2, units: 134 });
    expect(smsSegments('日'.repeat(135))).toEqual({ encoding: 'UCS-2', segments: 3, units: 135 });
  });

  it('counts an emoji outside the BMP as two units and never splits its surrogate pair', () => {
    expect(smsSegments('🚀')).toEqual({ encoding: 'UCS-2', segments: 1, units: 2 });
    expect(smsSegments('🚀'.repeat(35))).toEqual({ encoding: 'UCS-2', segments: 1, units: 70 });
    expect(smsSegments('🚀'.repeat(36))).toEqual({ encoding: 'UCS-2', segments: 2, units: 72 });
    // 66 units then a pair: the pair moves to part two whole, so 67 + 67 + 1 units need 3 parts.
    const text = `${'a'.repeat(66)}🚀${'a'.repeat(66)}`;
    expect(smsSegments(text)).toEqual({ encoding: 'UCS-2', segments: 3, units: 134 });
  });
});

describe('segment properties', () => {
  it('never reports fewer segments than the units strictly need', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 400, size: 'max' }), (text) => {
        const { encoding, segments, units } = smsSegments(text);
        const { single, multipart } = SMS_LIMITS[encoding];
        if (units === 0) return segments === 0;
        if (units <= single) return segments === 1;
        return segments >= Math.ceil(units / multipart) && segments <= Math.ceil(units / (multipart - 1));
      }),
    );
  });

  it('is monotonic: appending text never reduces the segment count', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 200, size: 'max' }),
        fc.string({ unit: 'grapheme', maxLength: 200, size: 'max' }),
        (a, b) => {
          return smsSegments(a + b).segments >= smsSegments(a).segments;
        },
      ),
    );
  });

  it('fitsSms compares against the segment budget', () => {
    expect(fitsSms('a'.repeat(160), 1)).toBe(true);
    expect(fitsSms('a'.repeat(161), 1)).toBe(false);
    expect(fitsSms('a'.repeat(161), 2)).toBe(true);
  });
});

describe('toGsmFriendly', () => {
  it('replaces typographic punctuation when that makes a Latin headline GSM-7', () => {
    const headline = '“Fed’s rate call” – markets … wait';
    const friendly = toGsmFriendly(headline);
    expect(friendly).toBe('"Fed\'s rate call" - markets ... wait');
    expect(smsSegments(friendly).encoding).toBe('GSM-7');
  });

  it('leaves text that stays UCS-2 anyway untouched', () => {
    const headline = '한국은행 “물가 잡기” – 총력';
    expect(toGsmFriendly(headline)).toBe(headline);
  });
});
