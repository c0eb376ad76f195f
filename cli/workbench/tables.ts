/**
 * The ops-edited tables as every writer sees them: the rules table with its history (each write
 * records the new version in the same transaction; functions/aws/dynamo-rule-history.ts), the
 * audiences table without. The CLI's commands and the console take their tables from here, so no
 * write path forgets the history.
 */
import { DynamoRuleHistory } from '#aws/dynamo-rule-history';
import type { ItemTable } from '../items.ts';
import type { Target } from '../target.ts';

/** The rule history of a target (the state table). */
export const ruleHistoryOf = (target: Target): DynamoRuleHistory =>
  new DynamoRuleHistory({ documents: target.clients.documents, tableName: target.names.stateTable });

/** The rules table, with history. */
export const ruleTableOf = (target: Target): ItemTable => ({
  tableName: target.names.rulesTable,
  keyName: 'ruleId',
  noun: 'rule',
  history: ruleHistoryOf(target),
});

/** The audiences table. */
export const audienceTableOf = (target: Target): ItemTable => ({
  tableName: target.names.audiencesTable,
  keyName: 'audienceId',
  noun: 'audience',
});
