/**
 * Key schema of the email subscribers table, shared by the adapter, the CDK stack and the local
 * sandbox so they can never disagree. One table, partition key `pk`, sort key `sk`, TTL attribute
 * `expiresAt` (epoch seconds):
 *
 * | item                     | pk                   | sk                          |
 * | ------------------------ | -------------------- | --------------------------- |
 * | a subscriber's profile   | `sub#<subscriberId>` | `profile`                   |
 * | the address → id lookup  | `addr#<sha256>`      | `addr`                      |
 * | a membership             | `sub#<subscriberId>` | `aud#<audienceId>`          |
 * | one message (history)    | `sub#<subscriberId>` | `msg#<messageKey>`          |
 * | a daily-digest entry     | `sub#<subscriberId>` | `held#<audienceId>#<key>`   |
 * | that it was held (mark)  | `sub#<subscriberId>` | `washeld#<audienceId>#<key>`|
 *
 * Two sparse indexes: {@link membersIndex} lists an audience's pending and confirmed members
 * (`memberOf` is set only on those), {@link digestsIndex} the memberships whose daily digest is
 * waiting (`digestShard` and `digestDueAt`). Addresses appear only in profiles, never in a key.
 */
export const subscriberTableKey = { partitionKey: 'pk', sortKey: 'sk', timeToLiveAttribute: 'expiresAt' } as const;

/** GSI: pending and confirmed members of an audience (`memberOf` = audience id, sorted by `pk`). */
export const membersIndex = { name: 'members', partitionKey: 'memberOf', sortKey: 'pk' } as const;

/** GSI: memberships with a daily digest waiting (`digestShard` = `due`, sorted by `digestDueAt`, a number). */
export const digestsIndex = { name: 'digests', partitionKey: 'digestShard', sortKey: 'digestDueAt' } as const;
