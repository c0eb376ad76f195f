/**
 * The subscriber's links as URLs of the preference endpoint: `<base>/p/<token>` (the preference
 * page), `<base>/u/<token>` (the one-click unsubscribe: the same management token, so a one-click
 * POST and the page act on the same subscriber and audience), `<base>/c/<token>` (confirmation).
 * Tokens are signed with the current link key on the day the link is made (tokens.ts).
 */
import type { LinkMaker } from './ports.ts';
import { dayOf, type LinkKeys, type LinkPurpose, signLink } from './tokens.ts';

export function createLinkMaker(options: {
  readonly keys: LinkKeys;
  /** The endpoint's public URL (`https://…`, no trailing slash needed). */
  readonly baseUrl: string;
  readonly now: () => number;
}): LinkMaker {
  const base = options.baseUrl.replace(/\/+$/, '');
  const make = async (route: 'p' | 'u' | 'c', purpose: LinkPurpose, subscriberId: string, audienceId: string) => {
    const token = signLink(
      { purpose, subscriberId, audienceId, issuedDay: dayOf(options.now()) },
      await options.keys.current(),
    );
    return `${base}/${route}/${token}`;
  };
  return {
    manage: (subscriberId, audienceId) => make('p', 'manage', subscriberId, audienceId),
    unsubscribe: (subscriberId, audienceId) => make('u', 'manage', subscriberId, audienceId),
    confirm: (subscriberId, audienceId) => make('c', 'confirm', subscriberId, audienceId),
  };
}
