/**
 * Key schema of the three tables, shared by the adapters, the CDK stack and the local sandbox so
 * they can never disagree.
 *
 * - rules:     one item per rule, partition key `ruleId` (ops-edited; docs/rules-and-audiences.md)
 * - audiences: one item per audience, partition key `audienceId` (ops-edited)
 * - state:     run state written only by the function and the CLI: watermark, run lease,
 *              delivery ledger (with story markers, collapsed copies and update notices), parked
 *              undeliverable notifications, run history, held notifications and digest releases,
 *              daily budgets, the reading state, the story index (partitions `story#<id>`,
 *              `story-band#<band>`, `story-filing#<articleKey>`; functions/aws/dynamo-story-index.ts),
 *              and the Slack relay's record of posted deliveries (partition {@link slackPostedPartition}).
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

/**
 * DynamoDB's limits on an item, as the service enforces them on every write: checked by the CLI
 * before it writes, so an ops person reads which item and field to change instead of a raw
 * `ValidationException`.
 */
export const ITEM_LIMITS = {
  /** Whole item, attribute names included: 400 KB. */
  itemBytes: 400 * 1024,
  /** A string partition key value, UTF-8. */
  partitionKeyBytes: 2048,
  /** Nesting of lists and maps. */
  nestingDepth: 32,
} as const;

const utf8Bytes = (value: string): number => Buffer.byteLength(value, 'utf8');

/**
 * The size of a number as DynamoDB counts it: about one byte per two significant digits, plus
 * one (leading and trailing zeros do not count).
 */
function numberBytes(value: number): number {
  const digits = Math.abs(value)
    .toExponential()
    .replace(/e.*$/, '')
    .replace(/\D/g, '')
    .replace(/^0+|0+$/g, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
}

/**
 * The size DynamoDB gives `value` once the document client marshalls it: strings and binary by
 * their bytes, numbers by significant digits, booleans and null one byte, lists and maps three
 * bytes plus one per element plus their contents (map keys included), sets the sum of their
 * elements.
 */
export function attributeValueBytes(value: unknown): number {
  if (typeof value === 'string') return utf8Bytes(value);
  if (typeof value === 'number') return numberBytes(value);
  if (typeof value === 'boolean' || value === null || value === undefined) return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) {
    let total = 0;
    for (const entry of value) total += attributeValueBytes(entry);
    return total;
  }
  if (Array.isArray(value)) {
    let total = 3;
    for (const entry of value) total += 1 + attributeValueBytes(entry);
    return total;
  }
  if (typeof value === 'object') {
    let total = 3;
    for (const [name, entry] of Object.entries(value)) total += 1 + utf8Bytes(name) + attributeValueBytes(entry);
    return total;
  }
  return utf8Bytes(String(value));
}

/** An item's size as DynamoDB measures it (names plus values), with each attribute's share. */
export function measureItem(item: Readonly<Record<string, unknown>>): {
  readonly bytes: number;
  readonly attributes: ReadonlyArray<{ readonly name: string; readonly bytes: number }>;
} {
  const attributes = Object.entries(item)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => ({ name, bytes: utf8Bytes(name) + attributeValueBytes(value) }))
    .sort((a, b) => b.bytes - a.bytes);
  return { bytes: attributes.reduce((total, attribute) => total + attribute.bytes, 0), attributes };
}
