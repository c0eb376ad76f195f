/**
 * "Did you mean" for the rule and audience ids ops type: an id that is not in its table is compared
 * with the ids that are, and the closest (a case or plural slip, or at most two edits on an id long
 * enough for that to mean a typo) is named in the error. The ids are read with a key-only scan, on
 * the error path only. The suggestion is a courtesy: if the scan fails (no dynamodb:Scan in the
 * ops policy, throttling) the error is the plain one, never the scan's.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { editDistance } from '#core/model';
import type { Target } from './target.ts';

/** Ids longer than this are no typo of a stored one (and would make the edit distance slow). */
const MAX_ID_LENGTH = 128;

/** Ids read at most: past this the table is not scanned further (the error path stays quick). */
const MAX_IDS = 100_000;

/** The stored id closest to `id`, if one is close enough to be a typo of it. */
export function closestId(id: string, known: Iterable<string>): string | undefined {
  if (id.length > MAX_ID_LENGTH) return undefined;
  const folded = id.toLowerCase();
  // Two edits in an id of four characters is another id, not a typo: allow one edit per three.
  const allowed = Math.min(2, Math.floor(id.length / 3));
  let best: { id: string; distance: number } | undefined;
  for (const candidate of known) {
    if (candidate === id || candidate.length > MAX_ID_LENGTH) continue;
    const other = candidate.toLowerCase();
    // One's plural of the other (`quake`/`quakes`, `category`/`categories`) is no edit at all.
    const plural = (word: string) => (/[^aeiou]y$/.test(word) ? `${word.slice(0, -1)}ies` : `${word}s`);
    const distance =
      other === folded || other === plural(folded) || plural(other) === folded ? 0 : editDistance(other, folded);
    if (distance <= allowed && (best === undefined || distance < best.distance)) best = { id: candidate, distance };
  }
  return best?.id;
}

/** The ids of a table (its partition key), key-only, up to {@link MAX_IDS}. */
async function storedIds(target: Target, tableName: string, keyName: string): Promise<string[]> {
  const ids: string[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const output = await target.clients.documents.send(
      new ScanCommand({
        TableName: tableName,
        ProjectionExpression: '#key',
        ExpressionAttributeNames: { '#key': keyName },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of output.Items ?? []) {
      const id = item[keyName];
      if (typeof id === 'string') ids.push(id);
    }
    startKey = output.LastEvaluatedKey;
  } while (startKey !== undefined && ids.length < MAX_IDS);
  return ids;
}

/**
 * `did you mean "x"?` for the missing ids a stored one is close to, or undefined (nothing close,
 * or the ids could not be read). Ids are quoted as JSON strings (a hand-written id's C0 controls
 * escaped; the CLI's output escapes what else a terminal would act on).
 */
export async function didYouMean(
  target: Target,
  kind: 'rule' | 'audience',
  missing: readonly string[],
): Promise<string | undefined> {
  if (missing.length === 0) return undefined;
  let known: string[];
  try {
    known =
      kind === 'rule'
        ? await storedIds(target, target.names.rulesTable, 'ruleId')
        : await storedIds(target, target.names.audiencesTable, 'audienceId');
  } catch {
    return undefined;
  }
  return hintFrom(missing, known);
}

/** {@link didYouMean} with the ids at hand (a rule set already read). */
export function hintFrom(missing: readonly string[], known: readonly string[]): string | undefined {
  const hints = missing.flatMap((id) => {
    const closest = closestId(id, known);
    return closest === undefined ? [] : [{ id, closest }];
  });
  if (hints.length === 0) return undefined;
  if (missing.length === 1) return `did you mean ${JSON.stringify(hints[0]?.closest)}?`;
  return `did you mean ${hints.map((hint) => `${JSON.stringify(hint.closest)} for ${JSON.stringify(hint.id)}`).join(', ')}?`;
}

/**
 * How a not-found message ends: `; did you mean "x"? (<next>)`, or ` (<next>)` without a hint
 * (`next` is the command that lists them all), or ` (did you mean "x"?)` / '' without `next`.
 */
export function hinted(hint: string | undefined, next?: string): string {
  if (next === undefined) return hint === undefined ? '' : ` (${hint})`;
  return hint === undefined ? ` (${next})` : `; ${hint} (${next})`;
}
