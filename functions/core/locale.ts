/**
 * Which language a subscriber reads, and where the words come from when that language has no
 * wording of its own. Owns one guarantee: every subscriber-facing word resolves to real text in a
 * shipped language (never a key name, never nothing), by a fallback chain that is the same for the
 * alert run, the Slack relay and `audiences validate`.
 *
 * - An audience's `locale` (BCP 47, e.g. `ko-KR`) is used as is for dates and numbers (`Intl`).
 * - Its words come from the first entry of {@link localeChain} that has a shipped catalog
 *   ({@link SHIPPED_LOCALES}): `ko-KR → ko → <defaultLocale> → en`.
 * - Ops templates may be set per locale (`templates.locales`); {@link resolveTemplate} walks the
 *   same chain, then the locale-neutral template, and reports where the wording came from so
 *   validation can say which translation is missing.
 *
 * Pure: no clock, no I/O.
 */
import { BoundedCache } from './bounded-cache.ts';
import type { MessageTemplates, TemplateName } from './model.ts';

/** Languages with a message catalog, in the order the docs list them. */
export const SHIPPED_LOCALES = ['en', 'ko', 'ja'] as const;
/** A language with a message catalog. */
export type ShippedLocale = (typeof SHIPPED_LOCALES)[number];

/** The locale of an audience without `locale` when the stack sets no `defaultLocale`. */
export const FALLBACK_LOCALE = 'en-US';

/** The last resort of every chain: the language every catalog key is written in first. */
const LAST_RESORT: ShippedLocale = 'en';

/** Whether a language subtag (`ko`) has a shipped catalog. */
export const isShipped = (tag: string): tag is ShippedLocale => (SHIPPED_LOCALES as readonly string[]).includes(tag);

/** The canonical form of a tag (`ko-kr` → `ko-KR`), or undefined when it is no BCP 47 tag. */
export function canonicalLocale(tag: string): string | undefined {
  try {
    return Intl.getCanonicalLocales(tag)[0];
  } catch {
    // RangeError for a malformed tag: the caller treats it as absent.
    return undefined;
  }
}

/** `ko-Kore-KR` → `ko-Kore-KR`, `ko-Kore`, `ko`: the tag, then each shorter prefix. */
function prefixes(tag: string): string[] {
  const parts = tag.split('-');
  const out: string[] = [];
  for (let length = parts.length; length >= 1; length--) out.push(parts.slice(0, length).join('-'));
  return out;
}

/** Chains by tag and default: every message of an audience asks for the same one. */
const chains = new BoundedCache<string, readonly string[]>(256);

/**
 * The fallback chain of a locale: the tag and its shorter prefixes, then the default locale and
 * its prefixes, then `en`; canonical tags, no duplicates. A missing or malformed tag starts at the
 * default.
 *
 * @example localeChain('ko-KR', 'en-US') // ['ko-KR', 'ko', 'en-US', 'en']
 */
export function localeChain(tag: string | undefined, defaultLocale: string = FALLBACK_LOCALE): readonly string[] {
  return chains.get(`${tag ?? ''}\u0000${defaultLocale}`, () => {
    const seen = new Set<string>();
    for (const candidate of [tag, defaultLocale, LAST_RESORT]) {
      const canonical = candidate === undefined ? undefined : canonicalLocale(candidate);
      if (canonical !== undefined) for (const prefix of prefixes(canonical)) seen.add(prefix);
    }
    return [...seen];
  });
}

/** The shipped language a chain's words come from: its first entry with a catalog. */
export function messageLocale(chain: readonly string[]): ShippedLocale {
  for (const tag of chain) {
    const lower = tag.toLowerCase();
    if (isShipped(lower)) return lower;
  }
  return LAST_RESORT;
}

/** The language subtag of a tag (`ko-KR` → `ko`). */
export const languageOf = (tag: string): string => (tag.split('-')[0] ?? tag).toLowerCase();

/** Where a template's wording came from. */
export type TemplateSource =
  /** `templates.locales[tag]`; `tag` is the chain entry that had it. */
  | { readonly kind: 'locale'; readonly tag: string }
  /** The locale-neutral `templates.<name>`. */
  | { readonly kind: 'any' }
  /** No template: the catalog's built-in wording of the message locale. */
  | { readonly kind: 'builtin' };

/** A resolved template: the text (absent for `builtin`) and where it came from. */
export interface ResolvedTemplate {
  readonly template?: string | undefined;
  readonly source: TemplateSource;
}

/**
 * The ops template for `name` as a subscriber on `chain` gets it: the first chain entry with a
 * `templates.locales` entry for it (matched case-insensitively), else the locale-neutral
 * `templates.<name>`, else the built-in wording.
 */
export function resolveTemplate(
  templates: MessageTemplates | undefined,
  name: TemplateName,
  chain: readonly string[],
): ResolvedTemplate {
  if (templates === undefined) return { source: { kind: 'builtin' } };
  const byLocale = templates.locales;
  if (byLocale !== undefined) {
    for (const tag of chain) {
      for (const [key, set] of Object.entries(byLocale)) {
        const value = set[name];
        if (value !== undefined && key.toLowerCase() === tag.toLowerCase()) {
          return { template: value, source: { kind: 'locale', tag } };
        }
      }
    }
  }
  const neutral = templates[name];
  if (neutral !== undefined) return { template: neutral, source: { kind: 'any' } };
  return { source: { kind: 'builtin' } };
}

/**
 * What an audience's subscribers get instead of the wording ops meant for their language: one
 * sentence per template whose `templates.locales` lacks the audience's language but has others,
 * naming the fallback. Empty when nothing falls back. `audiences validate` prints these; the run
 * sends the fallback (never a key name, never nothing).
 */
export function templateFallbacks(
  templates: MessageTemplates | undefined,
  locale: string | undefined,
  defaultLocale: string = FALLBACK_LOCALE,
): string[] {
  const byLocale = templates?.locales;
  if (templates === undefined || byLocale === undefined) return [];
  const chain = localeChain(locale, defaultLocale);
  const wanted = chain[0] ?? LAST_RESORT;
  const language = languageOf(wanted);
  const notes: string[] = [];
  for (const name of ['subject', 'digestSubject', 'footer'] as const) {
    const translated = Object.entries(byLocale)
      .filter(([, set]) => set[name] !== undefined)
      .map(([tag]) => tag);
    if (translated.length === 0) continue;
    const resolved = resolveTemplate(templates, name, chain);
    if (resolved.source.kind === 'locale' && languageOf(resolved.source.tag) === language) continue;
    const got =
      resolved.source.kind === 'locale'
        ? `the ${resolved.source.tag} one`
        : resolved.source.kind === 'any'
          ? `templates.${name}`
          : `the built-in ${messageLocale(chain)} wording`;
    notes.push(
      `templates.locales has ${name} for ${translated.join(', ')} but not for ${wanted}: its subscribers get ${got}; add templates.locales.${language}.${name}`,
    );
  }
  return notes;
}

/** A well-formed BCP 47 tag that this runtime's Intl can format dates in. */
export function isSupportedLocale(value: string): boolean {
  try {
    return Intl.DateTimeFormat.supportedLocalesOf([value]).length > 0;
  } catch {
    // RangeError: not a BCP 47 tag.
    return false;
  }
}

/**
 * A locale in canonical form (`ko-kr` → `ko-KR`), or why it cannot be one: a BCP 47 tag `Intl`
 * supports whose language has shipped words (en, ko, ja). The stack's `defaultLocale`, the cold
 * start's `DEFAULT_LOCALE` and `email add --locale` check with this one function, so all say the
 * same thing.
 */
export function checkShippedLocale(value: string): { ok: true; locale: string } | { ok: false; message: string } {
  const refuse = (why: string) => ({
    ok: false as const,
    message: `${why}; use a locale whose language has shipped messages (${SHIPPED_LOCALES.join(', ')}), such as "en-US", "ko-KR" or "ja-JP"; got ${JSON.stringify(value)}`,
  });
  const canonical = canonicalLocale(value.trim());
  if (canonical === undefined) return refuse('is not a BCP 47 locale');
  if (!isSupportedLocale(canonical)) return refuse('is a locale this platform cannot format dates in');
  if (!isShipped(languageOf(canonical))) {
    return refuse(`has no shipped messages for its language "${languageOf(canonical)}"`);
  }
  return { ok: true, locale: canonical };
}
