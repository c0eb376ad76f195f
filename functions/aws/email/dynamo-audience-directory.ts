/**
 * The {@link AudienceDirectory} port on the audiences table: one GetItem per audience, validated
 * with the audience schema, kept for `maxAgeMs` (an email function sends many notifications of
 * few audiences). An item that does not validate reads as absent: the email is then rendered
 * from the notification itself (compose.ts `audienceFromDocument`), never lost.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { AudienceDirectory } from '#core/email/ports';
import { type Audience, parseAudience } from '#core/model';

export interface DynamoAudienceDirectoryOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  readonly maxAgeMs?: number;
  readonly now?: () => number;
}

export class DynamoAudienceDirectory implements AudienceDirectory {
  readonly #documents: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #maxAgeMs: number;
  readonly #now: () => number;
  readonly #cache = new Map<string, { at: number; audience: Audience | undefined }>();

  constructor(options: DynamoAudienceDirectoryOptions) {
    this.#documents = DynamoDBDocumentClient.from(options.client);
    this.#table = options.tableName;
    this.#maxAgeMs = options.maxAgeMs ?? 60_000;
    this.#now = options.now ?? Date.now;
  }

  async get(audienceId: string): Promise<Audience | undefined> {
    const now = this.#now();
    const cached = this.#cache.get(audienceId);
    if (cached !== undefined && now - cached.at < this.#maxAgeMs) return cached.audience;
    const { Item: item } = await this.#documents.send(new GetCommand({ TableName: this.#table, Key: { audienceId } }));
    const parsed = item === undefined ? undefined : parseAudience(item);
    const audience = parsed?.ok ? parsed.value : undefined;
    if (this.#cache.size > 1000) this.#cache.clear();
    this.#cache.set(audienceId, { at: now, audience });
    return audience;
  }
}
