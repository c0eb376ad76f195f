/**
 * The DynamoDB adapter of {@link StoryStore}, in the state table.
 *
 * TODO(issue 13): the item layout, TTLs and batched reads and writes.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Log, StoredStory, StoryFiling, StoryStore } from '#core/ports';

export interface DynamoStoryStoreOptions {
  /** The one shared document client. */
  readonly documents: DynamoDBDocumentClient;
  /** The state table. */
  readonly tableName: string;
  /** How long a story accepts copies (default STORY_WINDOW_MS of core/story.ts). */
  readonly windowMs?: number;
  /** How long an article's filing is remembered (default 14 days, like the ledger). */
  readonly filingRetentionDays?: number;
  /** Batch requests in flight at once. Default 4. */
  readonly concurrency?: number;
  /** Waits between retries of unprocessed batch items; tests pass a fast one. */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
  readonly log?: Log;
}

export class DynamoStoryStore implements StoryStore {
  constructor(_options: DynamoStoryStoreOptions) {}

  async readFilings(): Promise<Map<string, string>> {
    return new Map();
  }
  async readBands(): Promise<Map<string, readonly string[]>> {
    return new Map();
  }
  async readStories(): Promise<Map<string, StoredStory>> {
    return new Map();
  }
  async write(_changes: { stories: readonly StoredStory[]; filings: readonly StoryFiling[] }): Promise<void> {}
}
