/**
 * What the run makes of each stored rule, for the lists that show it (`rules list`, the console's
 * rules page): judged exactly as the run judges them, audiences included, so a rule of a missing
 * or invalid audience is a problem too, and a valid rule of a disabled audience is named as not
 * running. A valid rule with a keyword written in query syntax, or a typed dash in its query where
 * `-` (NOT) was meant, is named with a warning (it runs, reading them literally).
 */
import { newKeywordSyntaxProblems } from '#core/keyword-syntax';
import { buildRuleSet, parseAudience, parseRule } from '#core/model';
import { newTypedDashProblems } from '#core/query';
import type { Item } from '../items.ts';

/** One rule item's standing: `valid` as the run reads it; `problem` says why it does not run. */
export interface RuleStanding {
  readonly item: Item;
  readonly ruleId: string;
  readonly valid: boolean;
  readonly problem: string | undefined;
}

/** The standing of each of `rules` (in their order), against all of `audiences`. */
export function ruleStandings(rules: readonly Item[], audiences: readonly Item[]): RuleStanding[] {
  const ruleSet = buildRuleSet(rules, audiences);
  const rejected = new Map(
    ruleSet.rejected.filter((entry) => entry.table === 'rules').map((entry) => [entry.key, entry.reason]),
  );
  const disabledAudiences = new Set(
    audiences.flatMap((raw) => {
      const parsed = parseAudience(raw);
      return parsed.ok && !parsed.value.enabled ? [parsed.value.audienceId] : [];
    }),
  );
  return rules.map((item) => {
    const parsed = parseRule(item);
    const ruleId = parsed.ok ? parsed.value.ruleId : parsed.rejected.key;
    // Per item, not by key: several unreadable items may all lack a readable ruleId.
    let problem = parsed.ok ? rejected.get(ruleId) : parsed.rejected.reason;
    const valid = problem === undefined;
    if (problem === undefined && typeof item.audienceId === 'string' && disabledAudiences.has(item.audienceId)) {
      problem = `audience "${item.audienceId}" is disabled`;
    }
    // A warning, not a reason to skip: the run matches such a keyword literally, as it always did.
    const syntax = valid
      ? [
          ...newKeywordSyntaxProblems(item).map(({ message }) => message),
          ...newTypedDashProblems(item.query).map(({ message }) => `query: ${message}`),
        ]
      : [];
    if (syntax.length > 0) {
      problem = [problem, `${syntax.join('; ')} (the run matches it as written)`]
        .filter((part) => part !== undefined)
        .join('; ');
    }
    return { item, ruleId, valid, problem };
  });
}
