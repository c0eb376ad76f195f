/**
 * The AWS SDK's logger middleware, taken off the clients the functions create. Owns one fact:
 * this project never hands the SDK a logger (it logs through Powertools, functions/shared/powertools.ts),
 * yet the SDK's middleware still runs on every call: it builds the log entry, walking the whole
 * request and response through the operation's schema to redact sensitive members, and only then
 * hands it to the default no-op logger, which drops it. For a PublishBatch of ten rendered alerts
 * that walk was about 2% of the alert run's CPU in the bench's profile (bench/RESULTS.md section 5).
 *
 * Removing the middleware by its name is the SDK's own API for this (`middlewareStack.remove`).
 * A client given a logger later would log nothing from it: give it one before this runs, or not
 * at all.
 */

/** The name the SDK registers the middleware under (@aws-sdk/core, loggerMiddlewareOptions). */
export const SDK_LOGGER_MIDDLEWARE = 'loggerMiddleware';

/** What this needs of a client: its middleware stack. */
interface WithMiddleware {
  readonly middlewareStack: { remove(toRemove: string): boolean };
}

/**
 * Takes the SDK's logger middleware off each client's stack (a document client shares its base
 * client's stack). Safe to call more than once per client.
 */
export function dropSdkLogging(...clients: readonly (WithMiddleware | undefined)[]): void {
  for (const client of clients) client?.middlewareStack.remove(SDK_LOGGER_MIDDLEWARE);
}
