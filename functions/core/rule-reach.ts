/**
 * How far back a rule hears of articles. A sweep or a recheck reads further back than the
 * late-arrival window; what it finds there is old news to a rule saved since: an article reaches
 * a rule only if the rule was saved (its `updatedAt`) no later than LATE_ARRIVAL_MINUTES after the
 * article was published, the same reach a new rule has on its first run
 * (docs/incremental-reading.md, "Settings"). The run applies it (alert-run.ts), and the ops
 * workbench's explain says it (workbench/explain.ts).
 */
import type { AudienceMatch, Rule } from './model.ts';

/** Each rule's `updatedAt` as epoch ms, for the rules that carry a readable one. */
export function savedTimes(rules: readonly Pick<Rule, 'ruleId' | 'updatedAt'>[]): Map<string, number> {
  const saved = new Map<string, number>();
  for (const rule of rules) {
    const at = rule.updatedAt === undefined ? Number.NaN : Date.parse(rule.updatedAt);
    if (Number.isFinite(at)) saved.set(rule.ruleId, at);
  }
  return saved;
}

/** The matches without the rules saved after `savedBy` (a rule with no save time is kept). */
export function withoutLaterRules(
  matches: readonly AudienceMatch[],
  savedBy: number,
  savedAt: ReadonlyMap<string, number>,
): AudienceMatch[] {
  const kept: AudienceMatch[] = [];
  for (const match of matches) {
    const rules = match.rules.filter((rule) => (savedAt.get(rule.ruleId) ?? Number.NEGATIVE_INFINITY) <= savedBy);
    if (rules.length === match.rules.length) kept.push(match);
    else if (rules.length > 0) kept.push({ ...match, rules });
  }
  return kept;
}
