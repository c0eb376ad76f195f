/** Helpers for tests that read the provider client's page stream. */
import type { ArticlePage } from '#core/ports';

/** Every page the stream yields, in order. */
export async function collect(pages: AsyncIterable<ArticlePage>): Promise<ArticlePage[]> {
  const out: ArticlePage[] = [];
  for await (const page of pages) out.push(page);
  return out;
}

/** The error that ends the stream; throws when the stream ends without one. */
export async function failure(pages: AsyncIterable<ArticlePage>): Promise<Error> {
  try {
    await collect(pages);
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the iteration to fail');
}
