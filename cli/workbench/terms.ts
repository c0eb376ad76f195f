/**
 * A rule's lists of terms as people read them (the CLI's `rules list`, the console's rules page and
 * its live check). A term may hold a comma or a space ("1,000 jobs", "interest rate"), so terms are
 * joined with ", " and any term that holds one of those, a quote, or nothing is written as a JSON
 * string: `keywords "semiconductor, chip"` is one term, `keywords semiconductor, chip` two.
 */

/** Attribute names of a rule's term lists, with the words the console's form uses for them. */
const listLabels: Readonly<Record<string, string>> = {
  categories: 'Categories',
  keywords: 'Keywords',
  media: 'Media',
  statuses: 'Statuses',
  excludeCategories: 'Not categories',
  excludeKeywords: 'Not keywords',
};

/** One term as a list shows it. */
const termText = (term: string): string => (term === '' || /[\s,"]/u.test(term) ? JSON.stringify(term) : term);

/** A stored list (array or set) of terms, joined; anything else is no terms. */
export function termsText(value: unknown): string {
  const terms = value instanceof Set || Array.isArray(value) ? [...value].map((entry) => String(entry)) : [];
  return terms.map(termText).join(', ');
}

/**
 * Notes on terms that hold a comma: valid (a term may), but most often two terms typed on one line
 * of the console's one-per-line boxes, or one `--keywords a,b` value split by hand.
 */
export function commaTermNotes(rule: Readonly<Record<string, unknown>>): string[] {
  const notes: string[] = [];
  for (const [name, label] of Object.entries(listLabels)) {
    const value = rule[name];
    const terms = value instanceof Set || Array.isArray(value) ? [...value].map((entry) => String(entry)) : [];
    for (const term of terms.filter((entry) => entry.includes(','))) {
      notes.push(
        `${label}: ${JSON.stringify(term)} is one term, matched as written with its comma; if you meant several, put each on a line of its own`,
      );
    }
  }
  return notes;
}

/**
 * A rule's criteria in one line, as `rules list` and the console's Rules list show them:
 * `categories 002*; keywords "interest rate", inflation; not keywords rumor; (urgent)`.
 */
export function criteriaText(rule: Readonly<Record<string, unknown>>): string {
  const parts: string[] = [];
  const add = (label: string, value: unknown) => {
    const terms = termsText(value);
    if (terms !== '') parts.push(`${label} ${terms}`);
  };
  add('categories', rule.categories);
  add('keywords', rule.keywords);
  add('media', rule.media);
  add('statuses', rule.statuses);
  add('not categories', rule.excludeCategories);
  add('not keywords', rule.excludeKeywords);
  if (typeof rule.query === 'string') parts.push(`query ${rule.query}`);
  if (rule.matchAll === true) parts.push('every article');
  if (rule.urgent === true) parts.push('(urgent)');
  if (typeof rule.spikes === 'string' && rule.spikes !== 'off') parts.push(`spike alerts ${rule.spikes}`);
  return parts.join('; ');
}
