import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { changeLabel, changeSince, ledgerFacts, maxStoredStatusBytes, titleHash } from '#core/ledger-facts';
import type { Article } from '#core/model';

const article = (overrides: Partial<Article> = {}): Article => ({
  key: 'id:1',
  title: 'Samsung chip exports rise',
  summary: '',
  url: 'https://news.example/1',
  publishedAt: 0,
  categories: [],
  categoryNames: [],
  status: 'PUBLISHED',
  ...overrides,
});

describe('ledger facts', () => {
  it('a re-read of the same article is never a change, whatever its status and title (property)', () => {
    fc.assert(
      fc.property(
        fc.option(fc.string({ maxLength: 600 }), { nil: undefined }),
        fc.string({ maxLength: 700 }),
        (status, title) => {
          const read = article({ status, title });
          expect(changeSince(ledgerFacts(read), read)).toBeUndefined();
        },
      ),
    );
  });

  it('keeps a status longer than the bound as a hash, and the same long status is no change', () => {
    const status = 'UPDATED'.repeat(100);
    const facts = ledgerFacts(article({ status }));
    expect(Buffer.byteLength(facts.status ?? '', 'utf8')).toBeLessThanOrEqual(maxStoredStatusBytes);
    expect(changeSince(facts, article({ status }))).toBeUndefined();
    expect(changeSince(facts, article({ status: `${status}!` }))).toMatchObject({ kind: 'status' });
  });

  it('tells a status change, then a title change, and ignores case and width', () => {
    const facts = ledgerFacts(article());
    expect(changeSince(facts, article({ status: 'UPDATED' }))).toEqual({
      kind: 'status',
      status: 'UPDATED',
      previousStatus: 'PUBLISHED',
    });
    expect(changeSince(facts, article({ title: 'Samsung chip exports rise 10%' }))).toEqual({
      kind: 'title',
      titleHash: titleHash('Samsung chip exports rise 10%'),
    });
    expect(changeSince(facts, article({ title: 'SAMSUNG  chip exports rise' }))).toBeUndefined();
    expect(titleHash('ＳＡＭＳＵＮＧ')).toBe(titleHash('samsung'));
  });

  it('an entry without facts (written before they existed) never counts as changed', () => {
    expect(changeSince({}, article({ status: 'DELETED' }))).toBeUndefined();
    expect(changeSince({ status: 'PUBLISHED' }, article({ status: 'DELETED' }))).toBeUndefined();
  });

  it('labels changes for the notice key, bounded', () => {
    // Each new headline is its own change.
    expect(changeLabel({ kind: 'title', titleHash: 'h1' })).toBe('title=h1');
    expect(changeLabel({ kind: 'status', status: 'UPDATED', previousStatus: '' })).toBe('status=UPDATED');
    // A long status is keyed by its hash: bounded, whole code points, and two long statuses that
    // share their first 64 characters keep different keys.
    const long = (tail: string) =>
      changeLabel({ kind: 'status', status: `${'X'.repeat(80)}🚀${tail}`, previousStatus: '' });
    expect(long('a')).not.toBe(long('b'));
    expect(long('a').length).toBeLessThanOrEqual(7 + 44);
    expect(/\p{Cs}/u.test(long('a'))).toBe(false);
    const emoji = changeLabel({ kind: 'status', status: `${'X'.repeat(63)}🚀`, previousStatus: '' });
    expect(emoji).toBe(`status=${'X'.repeat(63)}🚀`);
  });
});
