/**
 * The environment variables the CLI reads, in one light module (no imports), so the program can
 * name them in `--help` without loading any command.
 */

/** Names the person or automation making changes (`updatedBy`), when --actor is not given. */
export const actorVariable = 'NEWS_ALERTS_ACTOR';

/** Set to 1 to print the stack of a failure under its message. */
export const debugVariable = 'NEWS_ALERTS_DEBUG';
