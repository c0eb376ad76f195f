/**
 * Key schema of the three tables, shared by the adapters, the CDK stack and the local sandbox so
 * they can never disagree.
 *
 * - rules:     one item per rule, partition key `ruleId` (ops-edited; README, "Rules and audiences")
 * - audiences: one item per audience, partition key `audienceId` (ops-edited)
 * - state:     run state written only by the function and the CLI: watermark, run lease,
 *              delivery ledger, parked undeliverable notifications, run history, and
 *              the Slack relay's record of posted deliveries (partition {@link slackPostedPartition}).
 *              Partition key `pk`, sort key `sk`, TTL attribute `expiresAt` (epoch seconds).
 */
export const rulesTableKey = { partitionKey: 'ruleId' } as const;
export const audiencesTableKey = { partitionKey: 'audienceId' } as const;
export const stateTableKey = { partitionKey: 'pk', sortKey: 'sk', timeToLiveAttribute: 'expiresAt' } as const;

/**
 * The state-table partition where the Slack relay remembers which deliveries it posted
 * (Powertools idempotency records); the relay's IAM policy is limited to it.
 */
export const slackPostedPartition = 'slack#posted';

/** Names of the three tables one deployment (or sandbox) uses. */
export interface TableNames {
  readonly rules: string;
  readonly audiences: string;
  readonly state: string;
}
