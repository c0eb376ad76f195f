/**
 * The defaults of a new audience, in one place: `audiences create` and `audiences put` of a new id
 * (cli/audiences.ts) and `npm start --audiences` (scripts/start.ts) read the same audiences file,
 * and the same file must give the same audiences, whichever of them writes it.
 */

/**
 * What `collapse` a new audience gets when its file or flags do not say: new audiences get one
 * alert per story. The schema's default (`none`) is for items written before stories existed, so
 * an upgrade changes no audience; only new audiences start collapsing.
 */
export const NEW_AUDIENCE_COLLAPSE = 'story';

/** A new audience item with the defaults of a new audience where it says nothing itself. */
export function withNewAudienceDefaults<T extends Readonly<Record<string, unknown>>>(item: T): T {
  return item.collapse === undefined ? { ...item, collapse: NEW_AUDIENCE_COLLAPSE } : item;
}
