/** The state table of a target as the CLI reads and changes it (watermark, lease, run history). */
import { DynamoStateStore } from '#aws/dynamo-state-store';
import type { CommandContext } from './context.ts';
import { stderrLog } from './log.ts';
import type { Target } from './target.ts';

/** The state store of a target (run history, watermark, lease). */
export function stateStoreOf(context: CommandContext, target: Target): DynamoStateStore {
  return new DynamoStateStore({
    documents: target.clients.documents,
    tableName: target.names.stateTable,
    log: stderrLog(context.output),
  });
}
