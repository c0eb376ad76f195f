/**
 * Rule matching: which audiences want an article, and why.
 *
 * ## Semantics
 *
 * - **Normalization.** Article text and values and rule terms are compared after the same
 *   normalization ({@link normalizeText}): lone surrogates replaced, invisible default-ignorable
 *   characters (soft hyphen, zero-width space, BOM, ...) dropped, Unicode NFKC, full case folding,
 *   whitespace and control-character runs collapsed to one space, ends trimmed. Every comparison is
 *   therefore case-insensitive (`ß` equals `ss`, `İstanbul` is `istanbul`), full-width and
 *   compatibility forms equal their plain forms (`ＡＩ` is `ai`, `ﬁ` is `fi`), and `Sam\u00ADsung`
 *   is `samsung`, as a reader sees it. A term that normalizes to nothing never hits.
 * - **categories** hit when a term equals one of the article's category codes or category names.
 *   A term ending in `*` matches by prefix: `002*` hits `002001000`, `economy >*` hits
 *   `economy > finance`; a lone `*` hits any article that has a category. **excludeCategories**
 *   take the same forms.
 * - **keywords** hit when a term occurs in the title or the summary (never across the two).
 *   Letters, marks and digits of scripts written with spaces (Latin, Cyrillic, Greek, Arabic,
 *   Hebrew, the Indic scripts, ...) form words: where a term starts (ends) with one, the
 *   character before (after) the occurrence must not be one. So `rate` does not hit `corporate`
 *   or `rates`, `рост` does not hit `прирост`, and `AI` hits `AI반도체` and `AI-driven` but not
 *   `said`. Edges of Hangul, Han, kana, Thai (and the other scripts written without spaces) and
 *   punctuation have no such check, because Korean particles attach to the word they follow and
 *   the others have no spaces between words: `반도체` hits `반도체가`, `半導体` hits
 *   `次世代半導体の` (WordKind in text.ts).
 *   Multi-word terms (`interest rate`) match across any run of whitespace. Any occurrence with
 *   valid edges counts. **excludeKeywords** work the same way.
 * - **media** hit when a term equals the article's media code or media name; **statuses** when a
 *   term equals the article's status.
 * - A **query** (`(반도체 OR 메모리) AND 수출 -삼성`) is true or false for an article exactly as
 *   `evaluateQuery` (functions/core/query.ts) says, with the keyword rules above for each term,
 *   `semicond*` checked at its left edge only. It is one more criterion, ANDed with the others;
 *   it counts as a positive criterion only when it has a term every match contains (`queryAnchors`
 *   is defined), so a query that only excludes (`NOT sports`, `chip OR NOT sports`) needs
 *   `matchAll` like a rule without criteria. A query that does not parse (rules are validated
 *   before they get here) makes its rule match nothing.
 * - A rule **matches** when every positive criterion it has (categories, keywords, media,
 *   statuses, an anchored query; a rule "has" a list criterion when the list is not empty) has at
 *   least one hit, its query (if any) is true, and no exclusion hits: AND across criteria, OR
 *   within one, and exclusions win. A rule with no positive criterion matches every article its
 *   query and its exclusions allow when `matchAll` is true, and nothing otherwise (the rule schema
 *   rejects that case anyway); `matchAll` has no effect on a rule that has positive criteria.
 *   Rules with `enabled: false` never match.
 * - **Reasons**: for each criterion, in the order categories, keywords, query, media, statuses,
 *   every term of the rule that hit, spelled as the rule spells it (`{ kind: 'category', term:
 *   'Economy*' }`); the query's are `evaluateQuery`'s (`kind: 'keyword'`, terms as written with
 *   their scope: `semicond*`, `title:반도체`, `interest rate hike`; true terms outside NOT, in
 *   query order, each once). `{ kind: 'all', term: '*' }` for a `matchAll` rule with no other
 *   reason.
 * - **Result**: one {@link AudienceMatch} per audience with at least one matching rule, in
 *   `audienceId` order; its `rules` list every matching rule of that audience in `ruleId` order
 *   (UTF-16 code-unit order, ties in input order), so overlapping rules give one notification that
 *   names them all. Every {@link RuleMatch} has `ruleId`, `description` (possibly undefined),
 *   `urgent` and `reasons`. The indexed matcher's RuleMatch objects, their reasons and one-rule
 *   `rules` lists are frozen and shared between articles.
 *
 * ## Index
 *
 * {@link compileRules} never tries every rule on every article. All distinct terms of all rules
 * share one id space. Per article, the matcher collects the ids of the terms the article hits:
 * its category values in an exact map and a prefix map (one lookup per distinct prefix length
 * among the rules), its media and status in maps (each distinct raw value is resolved once and
 * remembered), and its title and summary through one keyword automaton ({@link TermAutomaton})
 * built over every keyword and excluded keyword of all rules. Each rule is filed under one anchor,
 * its criterion least likely to hit (see {@link ANCHOR_COST}), together with a 32-bit signature of
 * its next most selective criterion. The rules filed under a hit term whose signature meets the
 * article's hits, plus the `matchAll` rules, are the candidates; each is checked against all its
 * criteria and exclusions, compiled to term ids and stored right after its entry under each anchor
 * term, with the same hit set. A match's RuleMatch is shared per rule and set of reasons, so
 * matching allocates only the AudienceMatch results and lists of several rules.
 *
 * Queries share the index. Every term and phrase of every query is in the same keyword automaton
 * (prefix terms too: it reports a word that starts with one); a `title:` or `summary:` leaf has a
 * scoped id of its own, added to the hits when its term is found in that field. Most queries are
 * an AND of terms, ORs of terms, NOTs of those and NEARs ({@link lowerQuery}): such a query
 * becomes criteria of its rule (a clause per OR or term, after the keyword criteria; exclusions
 * for the NOTs; a clause per side of a NEAR), so the scan files and decides it like any keyword
 * rule and only a NEAR is left to check. Any other query is checked as a whole, and one whose
 * anchors (`queryAnchors`: an AND's rarest child, all branches of an OR) cost less than the
 * rule's other criteria files the rule under those anchors; one without anchors leaves the filing
 * to the other criteria or to `matchAll`. Only a candidate that passes its other criteria has its
 * query (or its NEARs) checked, once per rule and article, after the sort, so the scan loop stays
 * as it was, as a postfix program compiled once per rule: a term or phrase is true when its id is
 * among the hits, and only a NEAR whose two terms both occur reads the article text (normalized
 * once per article, on first need). Never every article against every query. A query without an
 * OR outside NOT always gives the same reasons, so its rule shares RuleMatch lists per mask like
 * the others; one with such an OR reuses the list it built last when the reasons repeat.
 * {@link naiveMatch} is the plain scan over all rules that defines the expected output for tests
 * and is the benchmark's baseline.
 */
import type { Article, AudienceMatch, MatchReason, Rule, RuleMatch } from './model.ts';
import {
  evaluateQuery,
  isLeaf,
  parseQuery,
  type QueryLeaf,
  type QueryNode,
  type QueryText,
  queryAnchors,
  queryFalseBecause,
  queryTermLabel,
  type TermFrequency,
} from './query.ts';
import { containsTerm, IdSet, normalizeText, TermAutomaton } from './text.ts';

/** Matches articles against a fixed, compiled set of rules. */
export interface RuleMatcher {
  /** Number of enabled rules the matcher holds. */
  readonly ruleCount: number;
  /** Every audience that wants `article`, with every rule that matched and why (see module docs). */
  match(article: Article): AudienceMatch[];
}

type CriterionKind = 'category' | 'keyword' | 'media' | 'status';

/** Criterion kinds as small integers, for the per-kind hit signatures of an article. */
const KIND_INDEX: Readonly<Record<CriterionKind, number>> = { category: 0, keyword: 1, media: 2, status: 3 };
/** The signature slot that is all ones, used by rules with nothing to prefilter on. */
const NO_FILTER = 4;

/**
 * Anchor cost of one term of each kind: a guess at how often such a term hits, used to file each
 * rule under its most selective criterion (the one whose terms' costs add up to the least). The
 * matcher sees no articles when it compiles, so these are priors from news feeds (and the
 * synthetic benchmark agrees): a keyword is in well under 1% of articles, a leaf category in a
 * few percent, a category prefix covers a subtree, a media outlet publishes a steady share, and a
 * status such as "published" is on almost everything.
 */
export const ANCHOR_COST = {
  keyword: 1,
  /** Keywords of one or two code units (`ai`, `5g`) hit much more often. */
  shortKeyword: 8,
  /** A query's prefix term (`semicond*`) hits every word it starts. */
  keywordPrefix: 3,
  /** A prefix of one to three code units (`ai*`, `sem*`) starts a great many words. */
  shortKeywordPrefix: 24,
  categoryExact: 8,
  categoryPrefix: 24,
  /** A lone `*`: every article with a category. */
  categoryAny: 1000,
  media: 6,
  status: 50,
} as const;

/** A keyword's (or a query word's or phrase's) anchor cost, by its normalized text. */
const keywordCost = (normalized: string): number =>
  normalized.length <= 2 ? ANCHOR_COST.shortKeyword : ANCHOR_COST.keyword;

/**
 * The anchor cost of a query's term or phrase (lower = rarer): what the index weighs when it picks
 * a conjunction's anchor. `rules explain` shows anchors with the same costs.
 */
export const queryLeafCost: TermFrequency = (leaf) => {
  if (leaf.norm.length === 0) return Number.POSITIVE_INFINITY;
  if (leaf.type === 'term' && leaf.prefix) {
    return leaf.norm.length <= 3 ? ANCHOR_COST.shortKeywordPrefix : ANCHOR_COST.keywordPrefix;
  }
  return keywordCost(leaf.norm);
};

/** The term ids of raw article values are cached up to this many values, then the cache starts over. */
const VALUE_CACHE_LIMIT = 50_000;

/** The interned terms of all rules, one id space across kinds so one hit set serves an article. */
class TermDictionary {
  readonly categoryExact = new Map<string, number>();
  readonly categoryPrefix = new Map<string, number>();
  readonly keyword = new Map<string, number>();
  /** A query's prefix terms (`semicond*` as `semicond`), found by the same keyword automaton. */
  readonly keywordPrefix = new Map<string, number>();
  readonly media = new Map<string, number>();
  readonly status = new Map<string, number>();
  /** Anchor cost per term id. */
  readonly cost: number[] = [];
  /** KIND_INDEX of each term id. */
  readonly kind: number[] = [];

  get size(): number {
    return this.cost.length;
  }

  /** The id of a rule term of `kind` (-1 for a term that normalizes to nothing). */
  intern(kind: CriterionKind, term: string): number {
    const normalized = normalizeText(term);
    if (normalized.length === 0) return -1;
    switch (kind) {
      case 'category':
        if (normalized.endsWith('*')) {
          const prefix = normalized.slice(0, -1);
          const cost = prefix.length === 0 ? ANCHOR_COST.categoryAny : ANCHOR_COST.categoryPrefix;
          return this.#add(this.categoryPrefix, prefix, cost, kind);
        }
        return this.#add(this.categoryExact, normalized, ANCHOR_COST.categoryExact, kind);
      case 'keyword':
        return this.#add(this.keyword, normalized, keywordCost(normalized), kind);
      case 'media':
        return this.#add(this.media, normalized, ANCHOR_COST.media, kind);
      case 'status':
        return this.#add(this.status, normalized, ANCHOR_COST.status, kind);
    }
  }

  /**
   * Per field, the id of a term found in that field -> the id of the same term scoped to it
   * (`title:chip`). Scoped ids are not automaton terms: the matcher adds one to an article's hits
   * when the term it scopes is found in its field, so a scoped term is one more hit like any other.
   */
  readonly titleScoped = new Map<number, number>();
  readonly summaryScoped = new Map<number, number>();

  /**
   * The id of a query's term or phrase (-1 for one that normalizes to nothing): a keyword term
   * with the same normalized text, or a prefix term, or for a `title:` or `summary:` leaf that
   * term's scoped id (see `titleScoped`).
   */
  internLeaf(leaf: QueryLeaf): number {
    if (leaf.norm.length === 0) return -1;
    const map = leaf.type === 'term' && leaf.prefix ? this.keywordPrefix : this.keyword;
    const id = this.#add(map, leaf.norm, queryLeafCost(leaf), 'keyword');
    if (leaf.field === 'any') return id;
    const scoped = leaf.field === 'title' ? this.titleScoped : this.summaryScoped;
    let scopedId = scoped.get(id);
    if (scopedId === undefined) {
      scopedId = this.cost.length;
      this.cost.push(queryLeafCost(leaf));
      this.kind.push(KIND_INDEX.keyword);
      scoped.set(id, scopedId);
    }
    return scopedId;
  }

  #add(map: Map<string, number>, key: string, cost: number, kind: CriterionKind): number {
    let id = map.get(key);
    if (id === undefined) {
      id = this.cost.length;
      this.cost.push(cost);
      this.kind.push(KIND_INDEX[kind]);
      map.set(key, id);
    }
    return id;
  }
}

// --- Queries ----------------------------------------------------------------------------------

/** A rule's query, parsed once per rule object; undefined when it does not parse. */
const parsedQueries = new WeakMap<Rule, { readonly node: QueryNode | undefined }>();

/**
 * The parsed query of a rule, or undefined when its query does not parse. Rules are validated
 * before they reach the matcher; a query that slipped through makes its rule match nothing rather
 * than stop the run.
 */
function ruleQuery(rule: Rule): QueryNode | undefined {
  if (rule.query === undefined) return undefined;
  // Keyed by the rule object itself, so naiveMatch parses each rule's query once, not per article.
  let parsed = parsedQueries.get(rule);
  if (parsed === undefined) {
    try {
      parsed = { node: parseQuery(rule.query) };
    } catch {
      parsed = { node: undefined };
    }
    parsedQueries.set(rule, parsed);
  }
  return parsed.node;
}

/** Whether a query has a term every match must contain (see queryAnchors), memoized per query. */
const anchoredQueries = new WeakMap<QueryNode, boolean>();

/** A query that has a term every match must contain (see queryAnchors): a positive criterion. */
function isAnchored(query: QueryNode): boolean {
  let anchored = anchoredQueries.get(query);
  if (anchored === undefined) {
    anchored = queryAnchors(query) !== undefined;
    anchoredQueries.set(query, anchored);
  }
  return anchored;
}

/** Kinds of compiled query nodes. */
const QUERY_UNIT = 0;
const QUERY_AND = 1;
const QUERY_OR = 2;
const QUERY_NOT = 3;

/** A query as the matcher evaluates it: operators over units, each unit one truth per article. */
interface CompiledQueryNode {
  readonly kind: number;
  /** For QUERY_UNIT, the unit's index in its query. */
  readonly unit: number;
  readonly children: readonly CompiledQueryNode[];
}

/** Kinds of query units: where their truth comes from. */
/** A term or phrase (a scoped one by its scoped id, see `TermDictionary.titleScoped`): the article's hits. */
const UNIT_ANY = 0;
/** A NEAR: both sides among the hits, then the distance measured in the text. */
const UNIT_NEAR = 3;

/**
 * A term, a phrase or a NEAR of a query: a part whose truth comes from the article, the same as
 * evaluateQuery finds for that leaf or NEAR. The automaton finds a term exactly where the leaf
 * occurs, so only a NEAR reads the text.
 */
interface QueryUnit {
  readonly kind: number;
  /** The term's id, or a NEAR's left side's (-1: it normalizes to nothing and never occurs). */
  readonly id: number;
  /** A NEAR's right side's id (-1 otherwise). */
  readonly right: number;
  /** A NEAR as parsed, for evaluateQuery. */
  readonly near: QueryNode | undefined;
  /** Indexes into the query's reasons, when the unit is true. */
  readonly reasons: readonly number[];
}

/**
 * One rule's query, compiled against the matcher's term ids. Its truth and reasons follow
 * evaluateQuery (functions/core/query.ts) exactly: a unit is true when evaluateQuery would find
 * that leaf or NEAR true, AND, OR and NOT combine them the same way, and the reasons are the
 * labels of the true units outside NOT, in query order, each once.
 */
class CompiledQuery {
  readonly root: CompiledQueryNode;
  readonly units: QueryUnit[] = [];
  /**
   * The query as a postfix program of `[operation, argument]` pairs (see OP_ANY), run without
   * short cuts on a small stack: cheaper than walking the tree for the few units a query has
   * (a NEAR, the one costly unit, is worked out once per article).
   */
  readonly program: Int32Array;
  /** One frozen reason per distinct label, in order of first appearance in the query. */
  readonly reasons: MatchReason[] = [];
  /**
   * The reasons whenever the query is true, when they never vary: with no OR outside NOT, a true
   * query has every unit outside NOT true. Undefined for queries whose reasons depend on which
   * branches of an OR were true.
   */
  readonly fixedReasons: readonly MatchReason[] | undefined;
  /** Term ids of which every match hits one (queryAnchors); undefined when there are none. */
  readonly anchors: readonly number[] | undefined;
  /**
   * Sets of term ids of which every match hits one, each on its own: one per anchorable part of a
   * top-level AND (each part must be true, so each part's anchors are necessary), else just
   * `anchors`. The index files the rule under the cheapest and filters candidates by the next, so
   * `a AND b` is anchored on one term and only articles that also hit the other reach the query.
   */
  readonly necessary: readonly (readonly number[])[];
  /** How many of the rule's criterion reasons (categories, keywords) come before the query's. */
  readonly reasonsAt: number;
  /** Per NEAR unit: the article (see `#stamp` of the matcher) its truth in `nearTruth` is for. */
  readonly nearStamp: Int32Array;
  readonly nearTruth: Uint8Array;
  /**
   * The RuleMatch list built last, for the criterion mask and query reasons (indexes into
   * `reasons`, in order) it was built for: a rule tends to match for the same reasons again.
   */
  lastList: readonly RuleMatch[] | undefined;
  lastMask = -1;
  lastOrder: number[] = [];
  readonly #labels = new Map<string, number>();

  /**
   * @param reasonsInMask the query's reasons are given by the rule's criteria (a residual of
   *   {@link lowerQuery}: only its NEARs are left to check), so `fixedReasons` is empty.
   */
  constructor(query: QueryNode, dictionary: TermDictionary, reasonsAt: number, reasonsInMask = false) {
    this.root = this.#compile(query, dictionary);
    const program: number[] = [];
    emitProgram(this.root, this.units, program);
    this.program = Int32Array.from(program);
    this.reasonsAt = reasonsAt;
    this.nearStamp = new Int32Array(this.units.length).fill(-1);
    this.nearTruth = new Uint8Array(this.units.length);
    const fixed = reasonsInMask ? [] : fixedReasonIndexes(this.root, this.units);
    this.fixedReasons =
      fixed === undefined
        ? undefined
        : Object.freeze([...new Set(fixed)].flatMap((index) => this.reasons[index] ?? []));
    const rarity = (leaf: QueryLeaf) => dictionary.cost[dictionary.internLeaf(leaf)] ?? UNREACHABLE_COST;
    const anchors = queryAnchors(query, rarity);
    // A term that normalizes to nothing never occurs, so it cannot be the one a match hits.
    const ids = (leaves: readonly QueryLeaf[]) =>
      [...new Set(leaves.map((leaf) => dictionary.internLeaf(leaf)))].filter((id) => id !== -1);
    this.anchors = anchors === undefined ? undefined : ids(anchors);
    const parts = query.type === 'and' ? query.children : [query];
    this.necessary = parts.flatMap((part) => {
      const partAnchors = queryAnchors(part, rarity);
      return partAnchors === undefined ? [] : [ids(partAnchors)];
    });
  }

  #compile(node: QueryNode, dictionary: TermDictionary): CompiledQueryNode {
    switch (node.type) {
      case 'term':
      case 'phrase': {
        return this.#unit(UNIT_ANY, dictionary.internLeaf(node), -1, undefined, [node]);
      }
      case 'near':
        // The parser only builds NEARs of leaves; anything else is false, as in evaluateQuery.
        if (!isLeaf(node.left) || !isLeaf(node.right)) return this.#unit(UNIT_ANY, -1, -1, undefined, []);
        return this.#unit(UNIT_NEAR, dictionary.internLeaf(node.left), dictionary.internLeaf(node.right), node, [
          node.left,
          node.right,
        ]);
      case 'and':
      case 'or':
        return {
          kind: node.type === 'and' ? QUERY_AND : QUERY_OR,
          unit: -1,
          children: node.children.map((child) => this.#compile(child, dictionary)),
        };
      case 'not':
        return { kind: QUERY_NOT, unit: -1, children: [this.#compile(node.child, dictionary)] };
    }
  }

  #unit(
    kind: number,
    id: number,
    right: number,
    near: QueryNode | undefined,
    leaves: readonly QueryLeaf[],
  ): CompiledQueryNode {
    const reasons = leaves.map((leaf) => {
      const label = queryTermLabel(leaf);
      let index = this.#labels.get(label);
      if (index === undefined) {
        index = this.reasons.length;
        this.reasons.push(Object.freeze({ kind: 'keyword', term: label }));
        this.#labels.set(label, index);
      }
      return index;
    });
    this.units.push({ kind, id, right, near, reasons });
    return { kind: QUERY_UNIT, unit: this.units.length - 1, children: [] };
  }
}

/**
 * Operations of a query's postfix program (see `CompiledQuery.program`), each with one argument:
 * push whether a term id is among the article's hits, push a NEAR unit's truth, combine the top
 * `n` values with AND or OR, or negate the top one.
 */
const OP_ANY = 0;
const OP_NEAR = 3;
const OP_AND = 4;
const OP_OR = 5;
const OP_NOT = 6;

/** Appends `node` to a postfix program, children first. */
function emitProgram(node: CompiledQueryNode, units: readonly QueryUnit[], program: number[]): void {
  if (node.kind === QUERY_UNIT) {
    const unit = units[node.unit];
    const op = unit?.kind === UNIT_NEAR ? OP_NEAR : OP_ANY;
    program.push(op, op === OP_NEAR ? node.unit : (unit?.id ?? -1));
    return;
  }
  for (const child of node.children) emitProgram(child, units, program);
  program.push(node.kind === QUERY_AND ? OP_AND : node.kind === QUERY_OR ? OP_OR : OP_NOT, node.children.length);
}

/** The reason indexes of every unit outside NOT, in order; undefined when an OR is outside NOT. */
function fixedReasonIndexes(node: CompiledQueryNode, units: readonly QueryUnit[]): number[] | undefined {
  switch (node.kind) {
    case QUERY_UNIT:
      return [...(units[node.unit]?.reasons ?? [])];
    case QUERY_AND: {
      const indexes: number[] = [];
      for (const child of node.children) {
        const childIndexes = fixedReasonIndexes(child, units);
        if (childIndexes === undefined) return undefined;
        indexes.push(...childIndexes);
      }
      return indexes;
    }
    case QUERY_OR:
      return undefined;
    default:
      return [];
  }
}

/**
 * A query rewritten as criteria of its rule (see {@link lowerQuery}): positive clauses, each
 * true when one of its terms hits (ids and reason labels side by side), term ids to exclude, and
 * the NEARs still to check on the text.
 */
interface LoweredQuery {
  readonly clauses: readonly { readonly ids: readonly number[]; readonly labels: readonly string[] }[];
  readonly exclusions: readonly number[];
  readonly nears: readonly QueryNode[];
}

/** The leaves of an OR of leaves (nested ORs flattened, in order); undefined for any other OR. */
function orOfLeaves(node: QueryNode, into: QueryLeaf[] = []): QueryLeaf[] | undefined {
  if (isLeaf(node)) {
    into.push(node);
    return into;
  }
  if (node.type !== 'or') return undefined;
  for (const child of node.children) if (orOfLeaves(child, into) === undefined) return undefined;
  return into;
}

/** Appends the conjuncts of `node` (nested ANDs flattened, in order). */
function conjuncts(node: QueryNode, into: QueryNode[]): QueryNode[] {
  if (node.type !== 'and') into.push(node);
  else for (const child of node.children) conjuncts(child, into);
  return into;
}

/**
 * The query as the rule's own criteria, when it is an AND (or a single one) of parts of these
 * forms: a term or phrase, an OR of them (a clause), NOT of either (exclusions), or a NEAR of two
 * (a clause per side, and the NEAR left to check on the text). Most queries people write have
 * this shape (`a b`, `(a OR b) c -d`, `"rate hike" -mortgage`, `title:x OR summary:y`), and then
 * the index's scan decides them like any keyword rule, with no query step at all. The reasons
 * agree with evaluateQuery's because they are the true leaves outside NOT in query order, which is
 * clause order; evaluateQuery gives each label once, so a query that repeats a label outside NOT is
 * not lowered (nor is any other shape: undefined, and the rule's query is checked as a whole).
 */
function lowerQuery(query: QueryNode, dictionary: TermDictionary): LoweredQuery | undefined {
  const clauses: { ids: number[]; labels: string[] }[] = [];
  const exclusions: number[] = [];
  const nears: QueryNode[] = [];
  const labels = new Set<string>();
  /** Adds a clause of `leaves`; false when a label repeats. */
  const clause = (leaves: readonly QueryLeaf[]): boolean => {
    const ids: number[] = [];
    const clauseLabels: string[] = [];
    for (const leaf of leaves) {
      const label = queryTermLabel(leaf);
      if (labels.has(label)) return false;
      labels.add(label);
      // A term that normalizes to nothing never occurs: it is no way for the clause to be true.
      const id = dictionary.internLeaf(leaf);
      if (id === -1) continue;
      ids.push(id);
      clauseLabels.push(label);
    }
    clauses.push({ ids, labels: clauseLabels });
    return true;
  };
  for (const part of conjuncts(query, [])) {
    switch (part.type) {
      case 'not': {
        const leaves = orOfLeaves(part.child);
        if (leaves === undefined) return undefined;
        for (const leaf of leaves) {
          const id = dictionary.internLeaf(leaf);
          if (id !== -1) exclusions.push(id);
        }
        break;
      }
      case 'near':
        if (!isLeaf(part.left) || !isLeaf(part.right) || !clause([part.left]) || !clause([part.right]))
          return undefined;
        nears.push(part);
        break;
      default: {
        const leaves = orOfLeaves(part);
        if (leaves === undefined || !clause(leaves)) return undefined;
      }
    }
  }
  return { clauses, exclusions, nears };
}

/** The anchor cost of a query term that can never hit. */
const UNREACHABLE_COST = 1e9;

/** The positive criteria a rule has (non-empty lists), in reason order. */
function positiveCriteria(rule: Rule): [CriterionKind, readonly string[]][] {
  const criteria: [CriterionKind, readonly string[] | undefined][] = [
    ['category', rule.categories],
    ['keyword', rule.keywords],
    ['media', rule.media],
    ['status', rule.statuses],
  ];
  return criteria.filter((entry): entry is [CriterionKind, readonly string[]] => (entry[1]?.length ?? 0) > 0);
}

/** Output order: audience, then rule id (code-unit order), then input position. */
function compareRules(a: { rule: Rule; index: number }, b: { rule: Rule; index: number }): number {
  if (a.rule.audienceId !== b.rule.audienceId) return a.rule.audienceId < b.rule.audienceId ? -1 : 1;
  if (a.rule.ruleId !== b.rule.ruleId) return a.rule.ruleId < b.rule.ruleId ? -1 : 1;
  return a.index - b.index;
}

/** One shape for every RuleMatch (description may be undefined), so V8 keeps the code monomorphic. */
function ruleMatch(rule: Rule, reasons: readonly MatchReason[]): RuleMatch {
  return { ruleId: rule.ruleId, description: rule.description, urgent: rule.urgent, reasons };
}

const ALL_REASONS: readonly MatchReason[] = Object.freeze([Object.freeze({ kind: 'all', term: '*' } as const)]);

/** Rules with up to this many positive terms report which hit as a bit mask (see `evaluate`). */
const MASKABLE_REASONS = 20;
/** The "mask" of a matching rule with more positive terms than that: reasons are collected anew. */
const UNMASKED = 2 ** MASKABLE_REASONS;
/**
 * Rules with up to this many positive terms keep one shared RuleMatch list per reason mask (at
 * most 2^6 slots each, filled when first needed), so after a few articles a match allocates
 * nothing: the 2,000 reason lists and freezes the old two-entry cache still built per 1,000
 * articles cost more than the table's memory (about 0.6 MiB at 20,000 rules). Rules with more
 * terms, rare in practice, remember only the list they built last.
 */
const LIST_TABLE_BITS = 6;
/**
 * Up to this many matches (a typical article has a few dozen) are sorted by insertion, which needs
 * no typed-array view and no call into the runtime; more use the native typed-array sort.
 */
const INSERTION_SORT_LIMIT = 48;
/**
 * Per rule, RULE_INFO ints of `#ruleInfo`: its audience index, the first slot of its shared
 * RuleMatch lists (`#lists`), how many reason bits index those slots (-1: the rule has more than
 * LIST_TABLE_BITS terms and one slot for the list built last), for a one-slot rule the mask of
 * the list in that slot (-1: none), the mask of its current match, where one copy of its
 * program starts in `#records` (-1: filed nowhere), its query's index in `#queries` (-1: no
 * query), and the first slot of its shared lists again when the list for a mask is always the one
 * in that mask's slot (-1: the rule has one slot, or a query whose reasons vary; see
 * `#sharedList`). Eight ints, so a matching rule costs one line of it.
 */
const RULE_INFO = 8;
const INFO_AUDIENCE = 0;
const INFO_LIST_START = 1;
const INFO_LIST_BITS = 2;
const INFO_SLOT_MASK = 3;
const INFO_MASK = 4;
const INFO_PROGRAM = 5;
const INFO_QUERY = 6;
const INFO_SHARED = 7;
/**
 * A record of `#records` starts with a header: the rule index shifted left by FILTER_KIND_BITS
 * with the prefilter's kind below it, the prefilter's signature, and the length of the rule's
 * program that follows.
 */
const RECORD_HEADER = 3;
/** A match is sorted as `ruleIndex * MATCH_KEY_SCALE + mask`, exact in a double. */
const MATCH_KEY_SCALE = 2 ** (MASKABLE_REASONS + 1);
const FILTER_KIND_BITS = 3;

/** An AudienceMatch while the naive matcher collects its rules. */
type AudienceMatchBuilder = { audienceId: string; article: Article; rules: RuleMatch[] };

class IndexedRuleMatcher implements RuleMatcher {
  readonly ruleCount: number;
  /** Enabled rules in output order: audience, then ruleId, then input position. */
  readonly #rules: readonly Rule[];
  readonly #audienceIds: readonly string[];
  readonly #dictionary: TermDictionary;
  /** Distinct lengths of category prefixes, ascending. */
  readonly #prefixLengths: readonly number[];
  readonly #automaton: TermAutomaton | undefined;
  /**
   * The rules anchored on each term, as records (RECORD_HEADER, then the rule's program): term
   * `t`'s are `#records[#anchoredStart[t] .. #anchoredStart[t + 1]]`, and the `matchAll` rules,
   * candidates for every article, follow from `#alwaysStart`. A program is the rule's criteria and
   * exclusions as term ids, `[criterionCount, (termCount, termId...)..., exclusionCount,
   * termId...]`.
   *
   * The header's prefilter is the rule's most selective other criterion, as that criterion's kind
   * (or NO_FILTER) and a 32-bit signature of its term ids (bit `id & 31`). A candidate whose
   * signature shares no bit with the article's hits of that kind cannot match and is skipped: this
   * is what keeps "broad AND broad" rules (a section prefix and a status) from costing a check
   * each.
   *
   * A rule anchored on several terms has a copy of its program under each: the scan then reads
   * the records of a hit term front to back, and the programs it checks are on the lines it reads
   * anyway, where one program per rule made each candidate a cache miss (the largest single cost
   * of a match at 20,000 rules in the profile). Measured on the synthetic benchmark, interleaved in
   * 2,000-article chunks: about 3% less CPU, and only once the "already checked" mark per rule was
   * dropped too (a rule matched under two hit terms is found twice and de-duplicated after the
   * sort); with the mark, the copies gained nothing.
   */
  readonly #records: Int32Array;
  readonly #anchoredStart: Int32Array;
  readonly #alwaysStart: number;
  /** RULE_INFO ints per rule (see there). */
  readonly #ruleInfo: Int32Array;
  /** KIND_INDEX of every term id. */
  readonly #termKind: Uint8Array;
  /**
   * Every rule's possible reasons, built once: rule `r` owns `#reasons[#reasonStart[r] ..
   * #reasonStart[r + 1]]`, one per term id in its program's criteria, in the same order.
   */
  readonly #reasons: readonly MatchReason[];
  readonly #reasonStart: Int32Array;
  /**
   * Shared RuleMatches, each as a frozen one-element list (used as is when the rule is its
   * audience's only match), one slot per rule and reason mask (see LIST_TABLE_BITS and
   * RULE_INFO), filled on first use.
   */
  readonly #lists: (readonly RuleMatch[] | undefined)[];
  /** The rules' compiled queries (see INFO_QUERY). */
  readonly #queries: readonly CompiledQuery[];
  // Per-article scratch space, reused (see compileRules: one caller at a time).
  readonly #hits: IdSet;
  /**
   * Whether queries have `title:` or `summary:` terms: then the summary's hits are collected apart
   * as well, and each term found in a field adds its scoped id for that field (`#titleScoped`,
   * `#summaryScoped`: term id -> scoped id, -1 for none) to the hits.
   */
  readonly #fieldHits: boolean;
  readonly #summaryHits: IdSet;
  readonly #titleScoped: Int32Array;
  readonly #summaryScoped: Int32Array;
  /** Keeps the reads of the prefetch in `match` from being optimized away. */
  #touched = 0;
  /** Counts the articles matched: which article a remembered NEAR truth or `#text` is for. */
  #stamp = 0;
  /** The normalized title and summary of the article of `#textStamp`, built when a NEAR needs them. */
  #text: QueryText | undefined;
  #textStamp = -1;
  /**
   * The reason indexes of the query whose RuleMatch is being built (a query has at most
   * QUERY_LIMITS.terms leaves; room for every unit's reasons of the largest query).
   */
  readonly #reasonOrder: Int32Array;
  /** The value stack of a query's program (see `#queryHolds`): one slot per operation is enough. */
  readonly #queryStack: Uint8Array;
  /** Per kind (KIND_INDEX), the signature of the article's hit term ids; NO_FILTER's is all ones. */
  readonly #signatures = Int32Array.of(0, 0, 0, 0, -1);
  /**
   * The article's matches as `ruleIndex * MATCH_KEY_SCALE + mask` (a rule anchored on several hit
   * terms is checked under each: reading its copy again costs less than a per-rule "seen" mark),
   * then its distinct matching rules, whose indexes are in output order.
   */
  readonly #matchKeys: Float64Array;
  readonly #matched: Int32Array;
  /** Raw category, media and status value -> the term ids it hits (see `#addAll`). */
  readonly #categoryHits = new Map<string, Int32Array>();
  readonly #mediaHits = new Map<string, Int32Array>();
  readonly #statusHits = new Map<string, Int32Array>();

  constructor(rules: readonly Rule[]) {
    const dictionary = new TermDictionary();
    const ordered = rules
      .map((rule, index) => ({ rule, index }))
      .filter(({ rule }) => rule.enabled !== false)
      .sort(compareRules)
      .map(({ rule }) => rule);
    this.ruleCount = ordered.length;
    this.#rules = ordered;
    const audienceIds: string[] = [];

    const programs: number[][] = [];
    const ruleInfo = new Int32Array(RULE_INFO * ordered.length);
    const reasons: MatchReason[] = [];
    const reasonStart: number[] = [];
    /** Per term id: [rule index, filter kind, filter signature] triples. */
    const anchoredLists = new Map<number, number[]>();
    const always: number[] = [];
    const queries: CompiledQuery[] = [];
    let listSlots = 0;
    ordered.forEach((rule, ruleIndex) => {
      if (audienceIds[audienceIds.length - 1] !== rule.audienceId) audienceIds.push(rule.audienceId);
      const criteria = positiveCriteria(rule).map(([kind, terms]) => {
        const ids = terms.map((term) => dictionary.intern(kind, term));
        return { kind, terms: terms.filter((_, i) => ids[i] !== -1), ids: ids.filter((id) => id !== -1) };
      });
      const exclusions = [
        ...(rule.excludeCategories ?? []).map((term) => dictionary.intern('category', term)),
        ...(rule.excludeKeywords ?? []).map((term) => dictionary.intern('keyword', term)),
      ].filter((id) => id !== -1);
      const parsedQuery = ruleQuery(rule);
      const lowered = parsedQuery === undefined ? undefined : lowerQuery(parsedQuery, dictionary);
      // Categories and keywords come first in `criteria`: the query's reasons go after theirs.
      const queryAt = criteria.filter(({ kind }) => kind === 'category' || kind === 'keyword').length;
      let query: CompiledQuery | undefined;
      if (lowered !== undefined) {
        criteria.splice(
          queryAt,
          0,
          ...lowered.clauses.map(({ labels, ids }) => ({
            kind: 'keyword' as const,
            terms: [...labels],
            ids: [...ids],
          })),
        );
        exclusions.push(...lowered.exclusions);
        if (lowered.nears.length > 0) {
          const nears: QueryNode =
            lowered.nears.length === 1 && lowered.nears[0] !== undefined
              ? lowered.nears[0]
              : { type: 'and', children: lowered.nears };
          query = new CompiledQuery(nears, dictionary, 0, true);
        }
      } else if (parsedQuery !== undefined) {
        const reasonsAt = criteria.slice(0, queryAt).reduce((sum, { ids }) => sum + ids.length, 0);
        query = new CompiledQuery(parsedQuery, dictionary, reasonsAt);
      }
      if (query !== undefined) queries.push(query);
      const reasonCount = criteria.reduce((sum, { ids }) => sum + ids.length, 0);
      const listBits = reasonCount <= LIST_TABLE_BITS ? reasonCount : -1;
      const shared = listBits === -1 || (query !== undefined && query.fixedReasons === undefined) ? -1 : listSlots;
      ruleInfo.set(
        [
          audienceIds.length - 1,
          listSlots,
          listBits,
          -1,
          -1,
          -1,
          query === undefined ? -1 : queries.length - 1,
          shared,
        ],
        RULE_INFO * ruleIndex,
      );
      listSlots += listBits === -1 ? 1 : 2 ** listBits;
      const program = [criteria.length];
      for (const { ids } of criteria) program.push(ids.length, ...ids);
      program.push(exclusions.length, ...exclusions);
      programs.push(program);
      reasonStart.push(reasons.length);
      for (const { kind, terms } of criteria) {
        for (const term of terms) reasons.push(Object.freeze({ kind, term }));
      }

      // A query that does not parse matches nothing (see ruleQuery).
      if (rule.query !== undefined && parsedQuery === undefined) return;
      // A query with anchors is one more criterion to file the rule under; one without is only
      // checked. A lowered query's are among the criteria already.
      const queryAnchorIds = lowered === undefined ? query?.anchors : undefined;
      if (criteria.length === 0 && queryAnchorIds === undefined) {
        if (rule.matchAll) always.push(ruleIndex, NO_FILTER, -1);
        return;
      }
      // A criterion none of whose terms can hit makes the rule unmatchable: file it nowhere.
      const necessary = (lowered === undefined ? query?.necessary : undefined) ?? [];
      if (criteria.some(({ ids }) => ids.length === 0) || necessary.some((ids) => ids.length === 0)) return;
      const costOf = (ids: readonly number[]) => ids.reduce((sum, id) => sum + (dictionary.cost[id] ?? 0), 0);
      const filing: { kind: CriterionKind; ids: readonly number[] }[] = [...criteria];
      for (const ids of necessary) filing.push({ kind: 'keyword', ids });
      const bySelectivity = filing.sort((a, b) => costOf(a.ids) - costOf(b.ids));
      const anchor = bySelectivity[0]?.ids ?? [];
      const filter = bySelectivity[1];
      const filterKind = filter === undefined ? NO_FILTER : KIND_INDEX[filter.kind];
      const filterSignature = filter === undefined ? -1 : filter.ids.reduce((bits, id) => bits | (1 << (id & 31)), 0);
      for (const id of new Set(anchor)) {
        let list = anchoredLists.get(id);
        if (list === undefined) {
          list = [];
          anchoredLists.set(id, list);
        }
        list.push(ruleIndex, filterKind, filterSignature);
      }
    });
    reasonStart.push(reasons.length);
    if (ordered.length >= 2 ** (31 - FILTER_KIND_BITS)) {
      throw new RangeError(`${ordered.length} rules are more than a record can address`);
    }

    const records: number[] = [];
    /** Appends records for [rule index, filter kind, filter signature] triples. */
    const file = (triples: readonly number[]) => {
      for (let i = 0; i < triples.length; i += 3) {
        const ruleIndex = triples[i] ?? 0;
        const program = programs[ruleIndex] ?? [];
        const info = RULE_INFO * ruleIndex + INFO_PROGRAM;
        if (ruleInfo[info] === -1) ruleInfo[info] = records.length + RECORD_HEADER;
        records.push(ruleIndex * 2 ** FILTER_KIND_BITS + (triples[i + 1] ?? NO_FILTER), triples[i + 2] ?? -1);
        records.push(program.length, ...program);
      }
    };
    const anchoredStart = new Int32Array(dictionary.size + 1);
    for (let termId = 0; termId < dictionary.size; termId++) {
      anchoredStart[termId] = records.length;
      file(anchoredLists.get(termId) ?? []);
    }
    anchoredStart[dictionary.size] = records.length;
    this.#alwaysStart = records.length;
    file(always);

    this.#audienceIds = audienceIds;
    this.#dictionary = dictionary;
    this.#records = Int32Array.from(records);
    this.#anchoredStart = anchoredStart;
    this.#ruleInfo = ruleInfo;
    this.#termKind = Uint8Array.from(dictionary.kind);
    this.#reasons = reasons;
    this.#reasonStart = Int32Array.from(reasonStart);
    this.#lists = new Array<readonly RuleMatch[] | undefined>(listSlots).fill(undefined);
    this.#queries = queries;
    this.#prefixLengths = [...new Set([...dictionary.categoryPrefix.keys()].map((prefix) => prefix.length))].sort(
      (a, b) => a - b,
    );
    this.#automaton =
      dictionary.keyword.size + dictionary.keywordPrefix.size === 0
        ? undefined
        : new TermAutomaton([
            ...[...dictionary.keyword].map(([text, id]) => ({ text, id })),
            ...[...dictionary.keywordPrefix].map(([text, id]) => ({ text, id, prefix: true })),
          ]);
    this.#hits = new IdSet(dictionary.size);
    this.#fieldHits = dictionary.titleScoped.size + dictionary.summaryScoped.size > 0;
    this.#summaryHits = new IdSet(this.#fieldHits ? dictionary.size : 1);
    const scopedIds = (scoped: Map<number, number>) => {
      const ids = new Int32Array(this.#fieldHits ? dictionary.size : 0).fill(-1);
      for (const [id, scopedId] of scoped) ids[id] = scopedId;
      return ids;
    };
    this.#titleScoped = scopedIds(dictionary.titleScoped);
    this.#summaryScoped = scopedIds(dictionary.summaryScoped);
    const largest = (size: (query: CompiledQuery) => number) => queries.reduce((most, q) => Math.max(most, size(q)), 1);
    this.#reasonOrder = new Int32Array(largest((query) => 2 * query.units.length));
    this.#queryStack = new Uint8Array(largest((query) => query.program.length / 2));
    this.#matched = new Int32Array(Math.max(1, ordered.length));
    this.#matchKeys = new Float64Array(Math.max(1, records.length));
  }

  match(article: Article): AudienceMatch[] {
    const hits = this.#hits;
    hits.reset();
    this.#stamp = (this.#stamp + 1) | 0;
    this.#collectHits(article, hits);

    // The loops below are indexed rather than for-of: they run for every candidate of every article.
    const hitTerms = hits.members;
    const hitCount = hits.size;
    const signatures = this.#signatures;
    const records = this.#records;
    const anchoredStart = this.#anchoredStart;
    signatures.fill(0, 0, NO_FILTER);
    // Reading the first record of each hit term here, where the reads do not depend on each other,
    // lets the processor fetch those lines at once instead of one cache miss per term in the scan.
    let touched = 0;
    for (let h = 0; h < hitCount; h++) {
      const termId = hitTerms[h] ?? 0;
      const kind = this.#termKind[termId] ?? 0;
      signatures[kind] = (signatures[kind] ?? 0) | (1 << (termId & 31));
      touched |= records[anchoredStart[termId] ?? 0] ?? 0;
    }
    this.#touched ^= touched;
    const keys = this.#matchKeys;
    let count = 0;
    const info = this.#ruleInfo;
    const kindMask = 2 ** FILTER_KIND_BITS - 1;
    // One pass per hit term, then one over the matchAll rules.
    for (let h = 0; h <= hitCount; h++) {
      let at: number;
      let end: number;
      if (h < hitCount) {
        const termId = hitTerms[h] ?? 0;
        at = anchoredStart[termId] ?? 0;
        end = anchoredStart[termId + 1] ?? 0;
      } else {
        at = this.#alwaysStart;
        end = records.length;
      }
      while (at < end) {
        const entry = records[at] ?? 0;
        const next = at + RECORD_HEADER + (records[at + 2] ?? 0);
        if (((signatures[entry & kindMask] ?? 0) & (records[at + 1] ?? 0)) !== 0) {
          const mask = evaluate(records, at + RECORD_HEADER, hits);
          if (mask !== -1) keys[count++] = (entry >>> FILTER_KIND_BITS) * MATCH_KEY_SCALE + mask;
        }
        at = next;
      }
    }
    if (count === 0) return [];
    // Rule indexes are in output order, so sorting the keys sorts the output; a rule anchored on
    // several hit terms matched once per term, and its keys are now side by side. A rule's query
    // is checked here, once per rule, rather than in the scan above: that loop is the hot one for
    // every rule, and stays as small as it was without queries.
    if (count <= INSERTION_SORT_LIMIT) insertionSort(keys, count);
    else keys.subarray(0, count).sort();
    const matched = this.#matched;
    const checkQueries = this.#queries.length > 0;
    let distinct = 0;
    for (let k = 0; k < count; k++) {
      const key = keys[k] ?? 0;
      if (k > 0 && key === keys[k - 1]) continue;
      const ruleIndex = Math.floor(key / MATCH_KEY_SCALE);
      if (checkQueries) {
        const query = info[RULE_INFO * ruleIndex + INFO_QUERY] ?? -1;
        if (query !== -1 && !this.#queryHolds(query, article, hits)) continue;
      }
      info[RULE_INFO * ruleIndex + INFO_MASK] = key - ruleIndex * MATCH_KEY_SCALE;
      matched[distinct++] = ruleIndex;
    }
    count = distinct;

    const result: AudienceMatch[] = [];
    const audienceIds = this.#audienceIds;
    for (let m = 0; m < count; ) {
      const ruleIndex = matched[m] ?? 0;
      const audience = info[RULE_INFO * ruleIndex + INFO_AUDIENCE] ?? 0;
      let end = m + 1;
      while (end < count && info[RULE_INFO * (matched[end] ?? 0) + INFO_AUDIENCE] === audience) end++;
      let rules: readonly RuleMatch[];
      if (end === m + 1) {
        rules = this.#sharedList(ruleIndex) ?? this.#ruleMatchList(ruleIndex, hits, article);
      } else {
        const list: RuleMatch[] = [];
        for (let k = m; k < end; k++) {
          const other = matched[k] ?? 0;
          const match = (this.#sharedList(other) ?? this.#ruleMatchList(other, hits, article))[0];
          if (match !== undefined) list.push(match);
        }
        rules = list;
      }
      result.push({ audienceId: audienceIds[audience] ?? '', article, rules });
      m = end;
    }
    return result;
  }

  /**
   * The shared list of a matching rule for its current mask when it has been built already (see
   * INFO_SHARED), else undefined and `#ruleMatchList` decides. Most matches end here: a few reads
   * that the output loop can inline, where `#ruleMatchList` first asks about queries, masks too
   * wide for a table and one-slot rules.
   */
  #sharedList(ruleIndex: number): readonly RuleMatch[] | undefined {
    const info = this.#ruleInfo;
    const start = info[RULE_INFO * ruleIndex + INFO_SHARED] ?? -1;
    const mask = info[RULE_INFO * ruleIndex + INFO_MASK] ?? 0;
    return start === -1 || mask === UNMASKED ? undefined : this.#lists[start + mask];
  }

  /**
   * A frozen one-element list holding the RuleMatch of a matching rule, for the reasons in its
   * current mask (see `evaluate`): the shared one for that mask, built on first use.
   */
  #ruleMatchList(ruleIndex: number, hits: IdSet, article: Article): readonly RuleMatch[] {
    const info = this.#ruleInfo;
    const ruleAt = RULE_INFO * ruleIndex;
    const mask = info[ruleAt + INFO_MASK] ?? 0;
    if (this.#queries.length > 0) {
      const query = this.#queryOf(ruleIndex);
      if (query !== undefined && query.fixedReasons === undefined) {
        return this.#queryRuleMatchList(ruleIndex, mask, query, article, hits);
      }
    }
    if (mask === UNMASKED) return Object.freeze([this.#buildRuleMatch(ruleIndex, mask, hits)]);
    const lists = this.#lists;
    const bits = info[ruleAt + INFO_LIST_BITS] ?? 0;
    let slot = info[ruleAt + INFO_LIST_START] ?? 0;
    if (bits !== -1) {
      slot += mask;
    } else if (info[ruleAt + INFO_SLOT_MASK] !== mask) {
      lists[slot] = undefined;
      info[ruleAt + INFO_SLOT_MASK] = mask;
    }
    let list = lists[slot];
    if (list === undefined) {
      list = Object.freeze([this.#buildRuleMatch(ruleIndex, mask, hits)]);
      lists[slot] = list;
    }
    return list;
  }

  /**
   * The RuleMatch of a matching rule: the reasons of its criteria in `mask`, with `queryReasons`
   * (a query's, see `#queryReasons`) after those of its categories and keywords.
   */
  #buildRuleMatch(ruleIndex: number, mask: number, hits: IdSet, queryReasons?: readonly MatchReason[]): RuleMatch {
    const first = this.#reasonStart[ruleIndex] ?? 0;
    const count = (this.#reasonStart[ruleIndex + 1] ?? 0) - first;
    const query = this.#queryOf(ruleIndex);
    const queryAt = query?.reasonsAt ?? count;
    const reasons: MatchReason[] = [];
    /** How many of `reasons` go before the query's. */
    let before = 0;
    if (mask === UNMASKED) {
      // The program's criteria list the same term ids, in the same order, as the rule's reasons.
      const program = this.#records;
      let at = this.#ruleInfo[RULE_INFO * ruleIndex + INFO_PROGRAM] ?? 0;
      const criteria = program[at++] ?? 0;
      let k = 0;
      for (let criterion = 0; criterion < criteria; criterion++) {
        const end = at + 1 + (program[at] ?? 0);
        for (at += 1; at < end; at++, k++) {
          if (!hits.has(program[at] ?? -1)) continue;
          reasons.push(this.#reason(first + k));
          if (k < queryAt) before++;
        }
      }
    } else {
      for (let k = 0; k < count; k++) {
        if ((mask & (1 << k)) === 0) continue;
        reasons.push(this.#reason(first + k));
        if (k < queryAt) before++;
      }
    }
    // A query whose reasons never vary gives them here, so its rule's lists are shared per mask.
    const fromQuery = queryReasons ?? query?.fixedReasons;
    if (fromQuery !== undefined && fromQuery.length > 0) reasons.splice(before, 0, ...fromQuery);
    const rule = this.#rules[ruleIndex];
    if (rule === undefined) throw new RangeError(`no rule at index ${ruleIndex}`);
    // No reason at all: a matchAll rule (whose query, if any, only excludes).
    return Object.freeze(ruleMatch(rule, reasons.length === 0 ? ALL_REASONS : Object.freeze(reasons)));
  }

  /**
   * A rule's compiled query, if it has one. (Never index `#queries` with -1: a negative index is a
   * named-property lookup, which made every keyword match about 15% slower.)
   */
  #queryOf(ruleIndex: number): CompiledQuery | undefined {
    const index = this.#ruleInfo[RULE_INFO * ruleIndex + INFO_QUERY] ?? -1;
    return index === -1 ? undefined : this.#queries[index];
  }

  #reason(index: number): MatchReason {
    const reason = this.#reasons[index];
    if (reason === undefined) throw new RangeError(`no reason at index ${index}`);
    return reason;
  }

  /** Whether query `index` is true for the article (whose term ids are in `hits`). */
  #queryHolds(index: number, article: Article, hits: IdSet): boolean {
    const query = this.#queries[index];
    if (query === undefined) return false;
    const program = query.program;
    const stack = this.#queryStack;
    let top = 0;
    for (let at = 0; at < program.length; at += 2) {
      const argument = program[at + 1] ?? 0;
      switch (program[at]) {
        case OP_ANY:
          stack[top++] = hits.has(argument) ? 1 : 0;
          break;
        case OP_NEAR:
          stack[top++] = this.#unitHolds(query, argument, article, hits) ? 1 : 0;
          break;
        case OP_AND: {
          let value = 1;
          for (let k = 0; k < argument; k++) value &= stack[--top] ?? 0;
          stack[top++] = value;
          break;
        }
        case OP_OR: {
          let value = 0;
          for (let k = 0; k < argument; k++) value |= stack[--top] ?? 0;
          stack[top++] = value;
          break;
        }
        default:
          stack[top - 1] = (stack[top - 1] ?? 0) ^ 1;
      }
    }
    return stack[0] === 1;
  }

  #holds(query: CompiledQuery, node: CompiledQueryNode, article: Article, hits: IdSet): boolean {
    const children = node.children;
    switch (node.kind) {
      case QUERY_UNIT:
        return this.#unitHolds(query, node.unit, article, hits);
      case QUERY_AND:
        for (let i = 0; i < children.length; i++) {
          const child = children[i];
          if (child !== undefined && !this.#holds(query, child, article, hits)) return false;
        }
        return true;
      case QUERY_OR:
        for (let i = 0; i < children.length; i++) {
          const child = children[i];
          if (child !== undefined && this.#holds(query, child, article, hits)) return true;
        }
        return false;
      default: {
        const child = children[0];
        return child === undefined || !this.#holds(query, child, article, hits);
      }
    }
  }

  /** A unit's truth for the article (see QueryUnit); a NEAR's is worked out once per article. */
  #unitHolds(query: CompiledQuery, index: number, article: Article, hits: IdSet): boolean {
    const unit = query.units[index];
    if (unit === undefined) return false;
    switch (unit.kind) {
      case UNIT_ANY:
        return hits.has(unit.id);
      default: {
        if (!hits.has(unit.id) || !hits.has(unit.right) || unit.near === undefined) return false;
        if (query.nearStamp[index] !== this.#stamp) {
          query.nearTruth[index] = evaluateQuery(unit.near, this.#textOf(article)) === undefined ? 0 : 1;
          query.nearStamp[index] = this.#stamp;
        }
        return query.nearTruth[index] === 1;
      }
    }
  }

  /**
   * The one-element RuleMatch list of a matching rule whose query's reasons vary (see
   * `fixedReasons`): the labels of the query's true units outside NOT, in query order, each once
   * (evaluateQuery's reasons). The list built last is reused when the mask and those reasons are
   * the same.
   */
  #queryRuleMatchList(
    ruleIndex: number,
    mask: number,
    query: CompiledQuery,
    article: Article,
    hits: IdSet,
  ): readonly RuleMatch[] {
    const order = this.#reasonOrder;
    const collected = this.#collect(query, query.root, article, hits, 0);
    let distinct = 0;
    for (let i = 0; i < collected; i++) {
      const index = order[i] ?? -1;
      let seen = false;
      for (let j = 0; j < distinct && !seen; j++) seen = order[j] === index;
      if (!seen) order[distinct++] = index;
    }
    const last = query.lastOrder;
    let same = query.lastList !== undefined && mask !== UNMASKED && query.lastMask === mask && last.length === distinct;
    for (let i = 0; i < distinct && same; i++) same = last[i] === order[i];
    if (same && query.lastList !== undefined) return query.lastList;
    const indexes = Array.from(order.subarray(0, distinct));
    const reasons = indexes.flatMap((index) => query.reasons[index] ?? []);
    const list = Object.freeze([this.#buildRuleMatch(ruleIndex, mask, hits, reasons)]);
    query.lastList = list;
    query.lastMask = mask;
    query.lastOrder = indexes;
    return list;
  }

  /**
   * Whether `node` is true, as the count of reason indexes in `#reasonOrder` after it: `count`
   * plus its units' reasons when it is true, -1 when it is false.
   */
  #collect(query: CompiledQuery, node: CompiledQueryNode, article: Article, hits: IdSet, count: number): number {
    const children = node.children;
    switch (node.kind) {
      case QUERY_UNIT: {
        if (!this.#unitHolds(query, node.unit, article, hits)) return -1;
        const reasons = query.units[node.unit]?.reasons ?? [];
        const order = this.#reasonOrder;
        let at = count;
        for (let i = 0; i < reasons.length && at < order.length; i++) order[at++] = reasons[i] ?? -1;
        return at;
      }
      case QUERY_AND: {
        let at = count;
        for (let i = 0; i < children.length && at !== -1; i++) {
          const child = children[i];
          if (child !== undefined) at = this.#collect(query, child, article, hits, at);
        }
        return at;
      }
      case QUERY_OR: {
        // Every true branch gives its reasons, not only the first.
        let at = count;
        let any = false;
        for (let i = 0; i < children.length; i++) {
          const child = children[i];
          const after = child === undefined ? -1 : this.#collect(query, child, article, hits, at);
          if (after !== -1) {
            at = after;
            any = true;
          }
        }
        return any ? at : -1;
      }
      default: {
        const child = children[0];
        return child === undefined || !this.#holds(query, child, article, hits) ? count : -1;
      }
    }
  }

  /** The article's title and summary as queries read them (normalized), built once per article. */
  #textOf(article: Article): QueryText {
    if (this.#textStamp !== this.#stamp || this.#text === undefined) {
      this.#text = { title: normalizeText(article.title), summary: normalizeText(article.summary) };
      this.#textStamp = this.#stamp;
    }
    return this.#text;
  }

  /** Adds the id of every rule term the article hits, of every kind. */
  #collectHits(article: Article, hits: IdSet): void {
    const dictionary = this.#dictionary;
    if (dictionary.categoryExact.size > 0 || dictionary.categoryPrefix.size > 0) {
      for (const value of article.categories) this.#addAll(this.#categoryHits, value, hits, this.#categoryTerms);
      for (const value of article.categoryNames) this.#addAll(this.#categoryHits, value, hits, this.#categoryTerms);
    }
    if (dictionary.media.size > 0) {
      if (article.media !== undefined) this.#addAll(this.#mediaHits, article.media, hits, this.#mediaTerms);
      if (article.mediaName !== undefined) this.#addAll(this.#mediaHits, article.mediaName, hits, this.#mediaTerms);
    }
    if (dictionary.status.size > 0 && article.status !== undefined) {
      this.#addAll(this.#statusHits, article.status, hits, this.#statusTerms);
    }
    const automaton = this.#automaton;
    if (automaton !== undefined) {
      // Title and summary are scanned one after the other rather than joined: a term cannot span
      // them, and a concatenated string would be a V8 cons string, which reads slower per character.
      if (this.#fieldHits) {
        this.#collectFieldHits(automaton, article, hits);
      } else {
        automaton.findIn(article.title, hits);
        if (article.summary.length > 0) automaton.findIn(article.summary, hits);
      }
    }
  }

  /**
   * Finds the keyword and query terms of the title and of the summary, and adds the scoped id of
   * each that has one for the field it was found in. The title's are the ids the title scan adds
   * to `hits` (no earlier hit is a keyword); the summary's are collected apart, as some of them
   * may be in `hits` already.
   */
  #collectFieldHits(automaton: TermAutomaton, article: Article, hits: IdSet): void {
    const members = hits.members;
    const titleFrom = hits.size;
    automaton.findIn(article.title, hits);
    const titleTo = hits.size;
    const titleScoped = this.#titleScoped;
    for (let i = titleFrom; i < titleTo; i++) {
      const scoped = titleScoped[members[i] ?? 0] ?? -1;
      if (scoped !== -1) hits.add(scoped);
    }
    if (article.summary.length === 0) return;
    const summary = this.#summaryHits;
    summary.reset();
    automaton.findIn(article.summary, summary);
    const summaryScoped = this.#summaryScoped;
    for (let i = 0; i < summary.size; i++) {
      const id = summary.members[i] ?? 0;
      hits.add(id);
      const scoped = summaryScoped[id] ?? -1;
      if (scoped !== -1) hits.add(scoped);
    }
  }

  /**
   * Adds the term ids a category, media or status value hits. Such values repeat across articles,
   * so each distinct raw value is normalized and looked up once and its ids are remembered.
   */
  #addAll(cache: Map<string, Int32Array>, value: string, hits: IdSet, lookUp: (normalized: string) => number[]): void {
    let ids = cache.get(value);
    if (ids === undefined) {
      if (cache.size >= VALUE_CACHE_LIMIT) cache.clear();
      ids = Int32Array.from(lookUp(normalizeText(value)));
      cache.set(value, ids);
    }
    for (let i = 0; i < ids.length; i++) hits.add(ids[i] ?? 0);
  }

  /** The category terms a normalized category value hits: the exact term and every prefix term. */
  readonly #categoryTerms = (value: string): number[] => {
    const dictionary = this.#dictionary;
    const ids: number[] = [];
    const exact = dictionary.categoryExact.get(value);
    if (exact !== undefined) ids.push(exact);
    for (const length of this.#prefixLengths) {
      if (length > value.length) break;
      const prefix = dictionary.categoryPrefix.get(value.slice(0, length));
      if (prefix !== undefined) ids.push(prefix);
    }
    return ids;
  };

  readonly #mediaTerms = (value: string): number[] => {
    const id = this.#dictionary.media.get(value);
    return id === undefined ? [] : [id];
  };

  readonly #statusTerms = (value: string): number[] => {
    const id = this.#dictionary.status.get(value);
    return id === undefined ? [] : [id];
  };
}

/**
 * Runs one rule's program (see `#records`) against an article's hits. Returns -1 unless every
 * criterion has a hit and no exclusion does; otherwise the bit mask of the criterion terms that
 * hit, in program order (bit k: the rule's k-th reason), or UNMASKED for a rule with more than
 * MASKABLE_REASONS terms.
 */
function evaluate(program: Int32Array, start: number, hits: IdSet): number {
  let at = start;
  const criteria = program[at++] ?? 0;
  let mask = 0;
  let bit = 0;
  for (let criterion = 0; criterion < criteria; criterion++) {
    const end = at + 1 + (program[at] ?? 0);
    let hit = false;
    for (at += 1; at < end; at++, bit++) {
      if (hits.has(program[at] ?? -1)) {
        hit = true;
        if (bit < MASKABLE_REASONS) mask |= 1 << bit;
      }
    }
    if (!hit) return -1;
  }
  const end = at + 1 + (program[at] ?? 0);
  for (at += 1; at < end; at++) {
    if (hits.has(program[at] ?? -1)) return -1;
  }
  return bit > MASKABLE_REASONS ? UNMASKED : mask;
}

/** Sorts `keys[0 .. count]` ascending in place; for the few matches of one article. */
function insertionSort(keys: Float64Array, count: number): void {
  for (let i = 1; i < count; i++) {
    const key = keys[i] ?? 0;
    let j = i - 1;
    while (j >= 0 && (keys[j] ?? 0) > key) {
      keys[j + 1] = keys[j] ?? 0;
      j--;
    }
    keys[j + 1] = key;
  }
}

/**
 * Compiles rules into an indexed matcher (see the module documentation for the semantics and the
 * index). Compile once per rule set and reuse the matcher for every article of a run; it keeps
 * per-article scratch space, so one matcher serves one caller at a time.
 */
export function compileRules(rules: readonly Rule[]): RuleMatcher {
  return new IndexedRuleMatcher(rules);
}

// ---------------------------------------------------------------------------------------------
// The reference: every rule tried on the article, term by term.

interface NormalizedRule {
  readonly categories: readonly string[];
  readonly excludeCategories: readonly string[];
  readonly keywords: readonly string[];
  readonly excludeKeywords: readonly string[];
  readonly media: readonly string[];
  readonly statuses: readonly string[];
}

/**
 * Normalized terms per rule object. Memoized so the baseline measures the scan over all rules, not
 * repeated normalization of the same terms (which would flatter the index).
 */
const normalizedRules = new WeakMap<Rule, NormalizedRule>();

function normalizedTerms(rule: Rule): NormalizedRule {
  let normalized = normalizedRules.get(rule);
  if (normalized === undefined) {
    const all = (terms: readonly string[] | undefined) => (terms ?? []).map(normalizeText);
    normalized = {
      categories: all(rule.categories),
      excludeCategories: all(rule.excludeCategories),
      keywords: all(rule.keywords),
      excludeKeywords: all(rule.excludeKeywords),
      media: all(rule.media),
      statuses: all(rule.statuses),
    };
    normalizedRules.set(rule, normalized);
  }
  return normalized;
}

interface NormalizedArticle {
  readonly categoryValues: readonly string[];
  readonly title: string;
  readonly summary: string;
  readonly media: readonly string[];
  readonly status: string | undefined;
}

// One test per criterion kind: does this normalized term hit the article? (Empty terms never do.)

function categoryHits(article: NormalizedArticle, term: string): boolean {
  if (term.length === 0) return false;
  if (term.endsWith('*')) {
    const prefix = term.slice(0, -1);
    return article.categoryValues.some((value) => value.startsWith(prefix));
  }
  return article.categoryValues.includes(term);
}

const keywordHits = (article: NormalizedArticle, term: string) =>
  containsTerm(article.title, term) || containsTerm(article.summary, term);

const mediaHits = (article: NormalizedArticle, term: string) => term.length > 0 && article.media.includes(term);

const statusHits = (article: NormalizedArticle, term: string) => term.length > 0 && term === article.status;

/** The terms of one criterion that hit, as reasons; undefined when the rule lacks the criterion. */
function criterionReasons(
  kind: CriterionKind,
  raw: readonly string[] | undefined,
  normalized: readonly string[],
  article: NormalizedArticle,
  hitTest: (article: NormalizedArticle, term: string) => boolean,
): MatchReason[] | undefined {
  if (raw === undefined || raw.length === 0) return undefined;
  const reasons: MatchReason[] = [];
  normalized.forEach((term, i) => {
    if (hitTest(article, term)) reasons.push({ kind, term: raw[i] ?? term });
  });
  return reasons;
}

/** Why `rule` matches `article`, or undefined when it does not. */
function naiveReasons(rule: Rule, article: NormalizedArticle): readonly MatchReason[] | undefined {
  const terms = normalizedTerms(rule);
  // Every criterion the rule has needs a hit; the cheap ones are tried before the keywords.
  const categories = criterionReasons('category', rule.categories, terms.categories, article, categoryHits);
  if (categories?.length === 0) return undefined;
  const media = criterionReasons('media', rule.media, terms.media, article, mediaHits);
  if (media?.length === 0) return undefined;
  const statuses = criterionReasons('status', rule.statuses, terms.statuses, article, statusHits);
  if (statuses?.length === 0) return undefined;
  const keywords = criterionReasons('keyword', rule.keywords, terms.keywords, article, keywordHits);
  if (keywords?.length === 0) return undefined;
  // A query is one more criterion, ANDed with the others; one that does not parse matches nothing.
  const query = ruleQuery(rule);
  if (rule.query !== undefined && query === undefined) return undefined;
  const queryReasons = query === undefined ? undefined : evaluateQuery(query, article);
  if (query !== undefined && queryReasons === undefined) return undefined;
  // Only a query with a term every match contains counts as a positive criterion (NOT-only does not).
  const hasCriterion =
    [categories, keywords, media, statuses].some((reasons) => reasons !== undefined) ||
    (query !== undefined && isAnchored(query));
  if (!hasCriterion && !rule.matchAll) return undefined;
  if (terms.excludeCategories.some((term) => categoryHits(article, term))) return undefined;
  if (terms.excludeKeywords.some((term) => keywordHits(article, term))) return undefined;
  const reasons = [
    ...(categories ?? []),
    ...(keywords ?? []),
    ...(queryReasons ?? []),
    ...(media ?? []),
    ...(statuses ?? []),
  ];
  return reasons.length === 0 ? [{ kind: 'all', term: '*' }] : reasons;
}

/** Which terms of each criterion hit an article: the reference matcher's own tests, one criterion at a time. */
export interface CriterionHits {
  /** Terms of `categories` that hit; undefined when the rule has no such criterion (likewise below). */
  readonly categories: readonly string[] | undefined;
  readonly keywords: readonly string[] | undefined;
  readonly media: readonly string[] | undefined;
  readonly statuses: readonly string[] | undefined;
  /** Terms of `excludeCategories` and `excludeKeywords` that hit (empty: none; a hit excludes). */
  readonly excludedByCategories: readonly string[];
  readonly excludedByKeywords: readonly string[];
  /**
   * The query's verdict: `absent` (no query), `invalid` (does not parse: matches nothing), or
   * whether it is true with the terms that made it so, and whether it has a term every match
   * contains (only such a query counts as a positive criterion).
   */
  readonly query:
    | { readonly state: 'absent' }
    | { readonly state: 'invalid' }
    | {
        readonly state: 'evaluated';
        readonly true: boolean;
        readonly terms: readonly string[];
        /** When false, why: each part of the query that failed (queryFalseBecause). */
        readonly falseBecause: readonly string[];
        readonly anchored: boolean;
      };
  /** The values of the article the criteria were compared with, normalized as the matcher does. */
  readonly article: {
    readonly categoryValues: readonly string[];
    readonly media: readonly string[];
    readonly status: string | undefined;
  };
  /** Whether the rule matches (enabled aside): exactly {@link naiveMatch}'s verdict for an enabled rule. */
  readonly matches: boolean;
}

/**
 * Every criterion of `rule` tried on `article`, each on its own (the reference matcher stops at
 * the first criterion that fails; this one does not), for `news-alerts rules explain`. `matches`
 * is the reference matcher's verdict (the enabled flag aside), so what explain says is what runs.
 */
export function criterionHits(rule: Rule, article: Article): CriterionHits {
  const normalized = normalizedArticle(article);
  const terms = normalizedTerms(rule);
  const categories = criterionReasons('category', rule.categories, terms.categories, normalized, categoryHits);
  const keywords = criterionReasons('keyword', rule.keywords, terms.keywords, normalized, keywordHits);
  const media = criterionReasons('media', rule.media, terms.media, normalized, mediaHits);
  const statuses = criterionReasons('status', rule.statuses, terms.statuses, normalized, statusHits);
  const excluded = (raw: readonly string[] | undefined, all: readonly string[], hit: typeof categoryHits) =>
    all.flatMap((term, index) => (hit(normalized, term) ? [raw?.[index] ?? term] : []));
  const parsed = ruleQuery(rule);
  let query: CriterionHits['query'];
  if (rule.query === undefined) query = { state: 'absent' };
  else if (parsed === undefined) query = { state: 'invalid' };
  else {
    const reasons = evaluateQuery(parsed, normalized);
    query = {
      state: 'evaluated',
      true: reasons !== undefined,
      terms: (reasons ?? []).map((reason) => reason.term),
      falseBecause: reasons === undefined ? queryFalseBecause(parsed, normalized) : [],
      anchored: isAnchored(parsed),
    };
  }
  const termsOf = (reasons: MatchReason[] | undefined) => reasons?.map((reason) => reason.term);
  return {
    categories: termsOf(categories),
    keywords: termsOf(keywords),
    media: termsOf(media),
    statuses: termsOf(statuses),
    excludedByCategories: excluded(rule.excludeCategories, terms.excludeCategories, categoryHits),
    excludedByKeywords: excluded(rule.excludeKeywords, terms.excludeKeywords, keywordHits),
    query,
    article: { categoryValues: normalized.categoryValues, media: normalized.media, status: normalized.status },
    matches: naiveReasons(rule, normalized) !== undefined,
  };
}

/** An article's values normalized as the reference matcher compares them. */
function normalizedArticle(article: Article): NormalizedArticle {
  return {
    categoryValues: [...article.categories, ...article.categoryNames].map(normalizeText),
    title: normalizeText(article.title),
    summary: normalizeText(article.summary),
    media: [article.media, article.mediaName].filter((value) => value !== undefined).map(normalizeText),
    status: article.status === undefined ? undefined : normalizeText(article.status),
  };
}

/**
 * The reference matcher: tries every enabled rule on the article, term by term, with the same
 * semantics and output as {@link compileRules}. For tests and as the benchmark's baseline; not for
 * production use (its cost grows with rules × terms for every article).
 */
export function naiveMatch(rules: readonly Rule[], article: Article): AudienceMatch[] {
  const normalized = normalizedArticle(article);
  const matches: { rule: Rule; index: number; reasons: readonly MatchReason[] }[] = [];
  rules.forEach((rule, index) => {
    if (rule.enabled === false) return;
    const reasons = naiveReasons(rule, normalized);
    if (reasons !== undefined) matches.push({ rule, index, reasons });
  });
  matches.sort(compareRules);
  const result: AudienceMatch[] = [];
  let current: AudienceMatchBuilder | undefined;
  for (const { rule, reasons } of matches) {
    if (current?.audienceId !== rule.audienceId) {
      current = { audienceId: rule.audienceId, article, rules: [] };
      result.push(current);
    }
    current.rules.push(ruleMatch(rule, reasons));
  }
  return result;
}
