/**
 * "What is held for this audience, and when will it go out?" for the CLI and the console: the
 * held notifications of the state table, each with its release time planned from the audience's
 * current settings (functions/core/workbench/holds.ts, which uses the run's planHeldRelease).
 */
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { localDate } from '#core/delivery-plan';
import { parseAudience } from '#core/model';
import type { Log } from '#core/ports';
import { type AudienceHolds, describeHolds } from '#core/workbench/holds';
import { NotFoundError } from '../errors.ts';
import { newsAlerts } from '../hints.ts';
import { getItem, listItems } from '../items.ts';
import type { Target } from '../target.ts';
import { didYouMean, hinted } from '../unknown-ids.ts';
import { audienceTableOf } from './tables.ts';

/** Holds of one audience, or of every audience that holds something (`audienceId` undefined). */
export async function listHolds(
  target: Target,
  audienceId: string | undefined,
  now: number,
  log: Log,
): Promise<{ holds: AudienceHolds[]; invalid: string[] }> {
  const state = new DynamoStateStore({ documents: target.clients.documents, tableName: target.names.stateTable, log });
  const table = audienceTableOf(target);
  let items: Record<string, unknown>[];
  if (audienceId !== undefined) {
    const item = await getItem(target.clients.documents, table, audienceId);
    if (item === undefined) {
      throw new NotFoundError(
        `audience ${audienceId} does not exist in ${target.label}${hinted(await didYouMean(target, 'audience', [audienceId]), `${newsAlerts()} audiences list`)}`,
      );
    }
    items = [item];
  } else {
    const holding = new Set((await state.listHoldingAudiences()).map((entry) => entry.audienceId));
    items = (await listItems(target.clients.documents, table)).filter((item) => holding.has(String(item.audienceId)));
  }
  const holds: AudienceHolds[] = [];
  const invalid: string[] = [];
  for (const item of items.sort((a, b) => String(a.audienceId).localeCompare(String(b.audienceId)))) {
    const parsed = parseAudience(item);
    if (!parsed.ok) {
      invalid.push(
        `audience ${String(item.audienceId)} is invalid (${parsed.rejected.reason}): its holds wait until it is fixed`,
      );
      continue;
    }
    const audience = parsed.value;
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
