/**
 * Stories: which articles are copies of the same story (syndicated wire copies, prefixed or
 * rewritten headlines, shortened leads) across outlets and runs.
 *
 * TODO(issue 13): fingerprinting (MinHash over shingles, LSH bands) and the resolver over a
 * StoryStore. Until then every article is its own story, which collapses nothing.
 */
import { createHash } from 'node:crypto';
import type { Article } from './model.ts';
import type { Log, StoryAssignment, StoryIndex, StoryRecord, StoryStore } from './ports.ts';

/** How long a story accepts copies after the index first saw it (48 hours). */
export const STORY_WINDOW_MS = 48 * 60 * 60 * 1000;

/**
 * The id of the story an article starts: a hash of its key, so the same lead always makes the
 * same story (16 hex digits: a collision between two leads is a 1-in-10^19 event).
 */
export const storyIdOf = (leadArticleKey: string): string =>
  createHash('sha256').update(leadArticleKey).digest('hex').slice(0, 16);

export interface StoryResolverOptions {
  /** How long a story accepts copies (default {@link STORY_WINDOW_MS}). */
  readonly windowMs?: number;
  readonly log?: Log;
}

/** The story index over a {@link StoryStore}: deterministic, idempotent assignments. */
export class StoryResolver implements StoryIndex {
  readonly #store: StoryStore;

  constructor(store: StoryStore, _options: StoryResolverOptions = {}) {
    this.#store = store;
  }

  async assign(articles: readonly Article[]): Promise<Map<string, StoryAssignment>> {
    return new Map(
      articles.map((article) => [
        article.key,
        { articleKey: article.key, storyId: storyIdOf(article.key), leadArticleKey: article.key },
      ]),
    );
  }

  async readStories(storyIds: readonly string[]): Promise<Map<string, StoryRecord>> {
    return this.#store.readStories(storyIds);
  }
}
