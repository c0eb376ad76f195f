/**
 * "What is held for this audience, and when will it go out?" for the CLI and the console: the
 * held notifications of the state table, each with its release time planned from the audience's
 * current settings (functions/core/workbench/holds.ts, which uses the run's planHeldRelease).
 */
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { localDate } from '#core/delivery-plan';
import { parseAudience } from '#core/model';
import type { Log } from '#core/ports';
import { type AudienceHolds, describeBlockedHolds, describeHolds, type HeldView } from '#core/workbench/holds';
import { NotFoundError } from '../errors.ts';
import { newsAlerts } from '../hints.ts';
import { getItem, listItems } from '../items.ts';
import type { Target } from '../target.ts';
import { didYouMean, hinted } from '../unknown-ids.ts';
import { audienceTableOf } from './tables.ts';

/**
 * Holds of one audience, or of every audience that holds something (`audienceId` undefined). The
 * holds of an audience that was deleted, is invalid or is disabled are listed too, `blocked`: no
 * run releases them until it is restored, fixed or enabled, and they must not disappear from view
 * meanwhile; `invalid` says why for each.
 */
export async function listHolds(
  target: Target,
  audienceId: string | undefined,
  now: number,
  log: Log,
): Promise<{ holds: AudienceHolds[]; invalid: string[] }> {
  const state = new DynamoStateStore({ documents: target.clients.documents, tableName: target.names.stateTable, log });
  const table = audienceTableOf(target);
  /** Audience ids, each with its stored item (undefined: deleted). */
  let audiences: [string, Record<string, unknown> | undefined][];
  /** Holds already read (a deleted audience named on the command line), not read twice. */
  const read = new Map<string, Awaited<ReturnType<DynamoStateStore['readHeld']>>>();
  if (audienceId !== undefined) {
    const item = await getItem(target.clients.documents, table, audienceId);
    const held = item === undefined ? await state.readHeld(audienceId) : undefined;
    if (held !== undefined) read.set(audienceId, held);
    if (held !== undefined && held.items.length === 0 && held.releases.length === 0) {
      throw new NotFoundError(
        `audience ${audienceId} does not exist in ${target.label}${hinted(await didYouMean(target, 'audience', [audienceId]), `${newsAlerts()} audiences list`)}`,
      );
    }
    audiences = [[audienceId, item]];
  } else {
    const items = new Map(
      (await listItems(target.clients.documents, table)).map((item) => [String(item.audienceId), item]),
    );
    const holding = new Set((await state.listHoldingAudiences()).map((entry) => entry.audienceId));
    audiences = [...holding].map((id) => [id, items.get(id)]);
  }
  const holds: AudienceHolds[] = [];
  const invalid: string[] = [];
  for (const [id, item] of audiences.sort(([a], [b]) => a.localeCompare(b))) {
    const parsed = item === undefined ? undefined : parseAudience(item);
    if (parsed?.ok !== true) {
      const held = read.get(id) ?? (await state.readHeld(id));
      if (held.items.length === 0 && held.releases.length === 0) continue;
      const blocked =
        parsed === undefined
          ? {
              kind: 'deleted' as const,
              reason: `audience ${id} was deleted: ${held.items.length > 0 ? `its ${held.items.length} held alert(s) are` : 'its unfinished digest release is'} never sent unless it is restored (${newsAlerts()} audiences put --file <its file>)`,
            }
          : {
              kind: 'invalid' as const,
              reason: `audience ${id} is invalid (${parsed.rejected.reason}): its holds wait until it is fixed`,
            };
      invalid.push(blocked.reason);
      holds.push(describeBlockedHolds(id, held.items, held.releases, blocked));
      continue;
    }
    const audience = parsed.value;
    if (!audience.enabled) {
      // The run keeps a disabled audience's holds (digest-release.ts) until it is enabled again.
      const held = read.get(id) ?? (await state.readHeld(id));
      if (held.items.length === 0 && held.releases.length === 0) continue;
      const blocked = {
        kind: 'disabled' as const,
        reason: `audience ${id} is disabled: its holds wait until it is enabled (${newsAlerts()} audiences update ${id} --enable)`,
      };
      invalid.push(blocked.reason);
      holds.push(describeBlockedHolds(id, held.items, held.releases, blocked));
      continue;
    }
    const date = localDate(now, audience.timeZone);
    const [held, counts] = await Promise.all([
      state.readHeld(audience.audienceId),
      state.readDailyCounts([{ audienceId: audience.audienceId, date }]),
    ]);
    holds.push(
      describeHolds(audience, held.items, held.releases, now, counts.get(`${audience.audienceId}|${date}`) ?? 0),
    );
  }
  return { holds, invalid };
}

/** The GOES OUT column: the next run, an instant, or why no run releases it. */
export function goesOut(held: HeldView, audience: AudienceHolds, format: (epochMs: number) => string): string {
  if (held.when === 'next-run') return `next run (${held.cause === 'settings-changed' ? 'settings changed' : 'due'})`;
  if (held.when === 'blocked' || held.releaseAt === undefined) {
    const kind = audience.blocked?.kind;
    return kind === 'deleted'
      ? 'never: audience deleted'
      : kind === 'disabled'
        ? 'once the audience is enabled'
        : 'once the audience is fixed';
  }
  return format(held.releaseAt);
}
