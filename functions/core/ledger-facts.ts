/**
 * What the delivery ledger keeps about an article so that a re-read can tell the article came
 * back changed (audience setting `updates`): its status as the provider sent it and a hash of its
 * normalized title. The ledger owns "nothing twice"; this module owns "what counts as changed":
 * another status, or a title that differs once normalized (case, width and spacing changes are
 * not changes). An entry written before these facts existed never counts as changed, so an
 * upgrade cannot send a burst of update notices for old alerts.
 */
import { createHash } from 'node:crypto';
import type { Article } from './model.ts';
import type { DeliveryRecord, LedgerFacts } from './ports.ts';
import { normalizeTextKeepingApostrophes } from './text.ts';

/**
 * FNV-1a (32-bit) of the normalized title, base 36: the ledger only needs to tell two titles
 * apart, never to recover one, and 7 characters per entry keep the ledger small. A collision
 * (1 in 4 billion) would hide one title change; it can never send anything twice.
 */
export function titleHash(title: string): string {
  // As the entries already in the ledger were hashed: `’` and `'` stay apart (see the function).
  const text = normalizeTextKeepingApostrophes(title);
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(36);
}

/**
 * Longest article status a ledger entry keeps verbatim (UTF-8 bytes). The status is provider
 * bytes: a longer one is kept as `#` + SHA-256, so no status can push an entry past DynamoDB's
 * 400 KB (which would fail every run that re-reads the article).
 */
export const maxStoredStatusBytes = 256;

/**
 * The status as a ledger entry keeps it (see {@link maxStoredStatusBytes}). Recording and
 * comparing both go through it, so a long status never looks changed because it was shortened.
 */
export const storedStatus = (status: string): string =>
  Buffer.byteLength(status, 'utf8') <= maxStoredStatusBytes
    ? status
    : `#${createHash('sha256').update(status, 'utf8').digest('base64url')}`;

/** The facts to record with a ledger entry of `article` (status `''` when the provider sent none). */
export function ledgerFacts(article: Article, storyId?: string): LedgerFacts {
  return {
    status: storedStatus(article.status ?? ''),
    titleHash: titleHash(article.title),
    ...(storyId === undefined ? {} : { storyId }),
  };
}

/** How an article changed since its ledger entry was written. */
export type ArticleChange =
  | { readonly kind: 'status'; readonly status: string; readonly previousStatus: string }
  | { readonly kind: 'title'; readonly titleHash: string };

/**
 * The change between what the ledger recorded and the article as read now, or undefined when
 * nothing changed or the entry recorded no facts (written before they existed). A changed status
 * wins over a changed title: one notice says both.
 */
export function changeSince(
  recorded: Pick<DeliveryRecord, 'status' | 'titleHash'>,
  article: Article,
): ArticleChange | undefined {
  if (recorded.status === undefined || recorded.titleHash === undefined) return undefined;
  const status = article.status ?? '';
  if (storedStatus(status) !== recorded.status) return { kind: 'status', status, previousStatus: recorded.status };
  const hash = titleHash(article.title);
  if (hash !== recorded.titleHash) return { kind: 'title', titleHash: hash };
  return undefined;
}

/**
 * The change's part of an update notice's ledger key: `status=UPDATED`, or `title=<hash of the new
 * title>` (each new headline is its own change). The status is provider bytes: one longer than 64
 * characters is keyed by its SHA-256, so no value can push the key past DynamoDB's limit, put half
 * an emoji into it, or share a key with another long status.
 */
export function changeLabel(change: ArticleChange): string {
  if (change.kind === 'title') return `title=${change.titleHash}`;
  const status =
    [...change.status].length <= 64
      ? change.status
      : `#${createHash('sha256').update(change.status, 'utf8').digest('base64url')}`;
  return `status=${status}`;
}

/** The fields a ledger entry's outcome (sent, held, released, collapsed) is read from. */
const outcomeFields = new Set([
  'deliveredAt',
  'heldFor',
  'collapsedInto',
  'releasedAt',
  'releasedIn',
  'releaseOutcome',
  'releaseCause',
]);

/**
 * Which of those a hand edit damaged (read as absent, listed in `malformed`): the outcome cannot
 * be told from the rest, and `deliveries --article` and `rules explain` say so instead of guessing.
 */
export const outcomeFieldsDamaged = (entry: Pick<DeliveryRecord, 'malformed'>): string[] =>
  (entry.malformed ?? []).filter((field) => outcomeFields.has(field));

/**
 * The lead a collapsed copy's entry went with: its `collapsedLead`, or for an entry written before
 * that field existed, the lead its story's `marker` names, when the marker is no younger than the
 * copy's entry (a marker written later, by an urgent copy taking the story over, names another
 * lead). Undefined for any other entry, and when the marker is not known.
 */
export function leadOfCollapsedCopy(entry: DeliveryRecord, marker: DeliveryRecord | undefined): string | undefined {
  if (entry.collapsedInto === undefined) return undefined;
  if (entry.collapsedLead !== undefined) return entry.collapsedLead;
  return marker !== undefined && marker.deliveredAt <= entry.deliveredAt ? marker.leadArticleKey : undefined;
}

/**
 * Why the ledger says a copy's lead ({@link leadOfCollapsedCopy}) never carried the story to the
 * audience, or undefined when it did: it has no entry, a digest release dropped it, or it is
 * itself a collapsed copy. Not delivery-pipeline.ts `leadReached`: a lead held for a digest that
 * was parked is still owed to the audience by `replay --parked`, which sends the digest as it is,
 * so the copies recorded with it wait too. What the run knows beside the ledger (a lead it is
 * sending now) the pipeline decides (`#copyLeadFate`); `deliveries --article` and `rules explain`
 * go by the ledger alone.
 */
export function whyCopyLeadLost(leadEntry: DeliveryRecord | undefined): string | undefined {
  if (leadEntry === undefined) return 'the ledger has no entry for it';
  if (leadEntry.collapsedInto !== undefined) return 'it was itself recorded as a collapsed copy';
  if (leadEntry.releaseOutcome === 'dropped') return 'a digest release dropped it';
  return undefined;
}

/** Whether {@link whyCopyLeadLost} has a reason: the copy is planned again when read again. */
export const copyLeadEntryLost = (leadEntry: DeliveryRecord | undefined): boolean =>
  whyCopyLeadLost(leadEntry) !== undefined;
