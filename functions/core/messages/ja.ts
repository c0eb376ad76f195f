/**
 * Japanese. Counts take the counter 件 (articles, alerts, rules); Japanese has no plural forms,
 * so no `Intl.PluralRules` is needed. Lists use the ideographic comma.
 */
import type { CatalogFactory, Messages } from './catalog.ts';

/**
 * The provider's documented statuses in words, and the one news-alerts writes itself (`ESCALATED`:
 * a spike alert whose episode has doubled, spikes/alert.ts); others are shown as sent.
 */
const STATUSES: Readonly<Record<string, string>> = {
  PUBLISHED: '公開',
  UPDATED: '更新',
  DELETED: '削除',
  ESCALATED: '拡大',
};

/** A spike preset in words; a preset this catalog does not know is shown as given. */
const presetWord = (preset: string): string =>
  (({ fewer: '少なめ', balanced: '標準', more: '多め' }) as Readonly<Record<string, string>>)[preset] ?? preset;

/** The Japanese catalog. */
export const ja: CatalogFactory = (count) =>
  ({
    language: 'ja',
    count,
    listSeparator: '、',
    clauseSeparator: '；',
    more: (n) => `ほか${count(n)}件`,
    articles: (n) => `${count(n)}件の記事`,
    untitled: '(無題の記事)',
    status: (status) => STATUSES[status.toUpperCase()] ?? status,
    templates: {
      subject: '[{audience}] {headline}',
      digestSubject: '[{audience}] {articles}: {top}',
      footer: [
        '配信グループ「{audience}」({audienceId})の購読者としてこのアラートを受け取っています。',
        '受け取る記事を変えるには配信グループ {audienceId} のルール(上記のルールID)の変更を、配信を止めるにはこのアドレスの削除を管理者に依頼してください。',
      ].join('\n'),
    },
    reason: {
      keyword: (term) => `キーワード「${term}」`,
      category: (term) => `カテゴリ ${term}`,
      media: (term) => `媒体 ${term}`,
      status: (term) => `状態 ${term}`,
      all: 'すべての記事(全件一致ルール)',
      spike: (preset) => `急増アラート(${presetWord(preset)})`,
      other: (kind, term) => `${kind} ${term}`,
    },
    email: {
      labels: {
        source: '配信元',
        published: '公開日時',
        category: 'カテゴリ',
        categories: 'カテゴリ',
        status: '状態',
        link: 'リンク',
      },
      linkWithheld: '記載なし: ニュース提供元から安全に公開できないリンクが届きました',
      whyHeading: 'このアラートが届いた理由:',
      rule: (ruleId, description, urgent) =>
        `- ルール ${ruleId}${description === undefined ? '' : `: ${description}`}${urgent ? ' (緊急)' : ''}`,
      matched: (reasons) => `  一致: ${reasons}`,
      moreRules: (n) => `- …ほかルール${count(n)}件`,
      alertId: (id) => `アラートID: ${id}`,
    },
    update: {
      prefix: '【更新】',
      statusChanged: (status, previous) => `更新: 状態が${previous ?? 'なし'}から${status ?? 'なし'}に変わりました`,
      withdrawn: '更新: 配信元がこの記事を取り消しました',
      titleChanged: '更新: 見出しが変わりました',
    },
    spike: {
      headline: (rule) => `報道急増: ${rule}`,
      expected: (n) => (n < 1 ? '通常は1件未満' : `通常は約${count(n)}件`),
      observed: (n, expected, since) => `${since}以降の新しい記事${count(n)}件(${expected})`,
      lastBucket: (n, expected, until) => `${until}までの1時間: 新しい記事${count(n)}件(${expected})`,
      outlets: (n) => `${count(n)}媒体`,
      topStoriesHeading: '主な記事:',
      storyOutlets: (n) => `${count(n)}媒体`,
      topOutletsHeading: '主な媒体:',
      outletStories: (name, n) => `${name}(${count(n)}件)`,
      preset: presetWord,
      why: (preset) => `急増アラート(${preset}): この曜日・時間帯の通常より新しい記事が大幅に多い`,
      escalated: (n, expected) => `更新: 急増が続き、新しい記事は${count(n)}件になりました(${expected})`,
      sms: (rule, n, expected, since) => `報道急増: ${rule}: ${since}以降の新しい記事${count(n)}件(${expected})`,
    },
    chat: { why: '理由:' },
    digest: {
      title: (audience, n) => `${audience} \u00B7 ニュースダイジェスト \u00B7 ${count(n)}件の記事`,
      partLine: (part, parts, first, last, total) =>
        `${count(parts)}通中${count(part)}通目 \u00B7 全${count(total)}件中${count(first)}\u2013${count(last)}件目`,
      part: (part, parts) => `${count(part)}/${count(parts)}通目`,
      heldHeading: 'このダイジェストにまとめた理由:',
      heldQuietHours: (n, window) =>
        `おやすみ時間${window === undefined ? '' : `(${window.start}\u2013${window.end})`}に保留した${count(n)}件`,
      heldBudget: (n, budget) =>
        `1日の上限${budget === undefined ? '' : `(即時アラート${count(budget)}件)`}を超えた${count(n)}件`,
      heldDigest: (n, times) => `ダイジェスト配信(${times.join('、')})用に集めた${count(n)}件`,
      groupHeading: (label, n, total) => `${label} \u00B7 ${count(n)}件${total > n ? `(全${count(total)}件中)` : ''}`,
      otherGroup: 'その他',
      spikeGroup: '報道急増',
      urgentMarker: '[緊急] ',
      whyLine: (why) => `理由: ${why}`,
      rule: (ruleId, urgent, reasons) =>
        `ルール ${ruleId}${urgent ? ' (緊急)' : ''}${reasons === '' ? '' : `: ${reasons}`}`,
      moreRules: (n) => `ほかルール${count(n)}件`,
      digestId: (id) => `ダイジェストID: ${id}`,
      smsIntro: (audience, part, parts, n) =>
        `${audience}${parts > 1 ? ` (${count(part)}/${count(parts)}通目)` : ''}: ニュース${count(n)}件`,
      sms: (intro, headlines, more) =>
        `${intro}${headlines.length > 0 ? `。${headlines.join('；')}` : ''}${more > 0 ? ` ほか${count(more)}件` : ''}`,
      chatTitle: (audience, n, part, parts) =>
        `${audience}: ${count(n)}件の記事${parts > 1 ? ` (${count(part)}/${count(parts)}通目)` : ''}`,
      alsoIn: (n, outlets, more) =>
        `ほか${count(n)}媒体でも報道${outlets.length === 0 ? '' : `: ${outlets.join('、')}${more > 0 ? `ほか${count(more)}媒体` : ''}`}`,
      moreInDigest: (n) => `このダイジェストにはほか${count(n)}件`,
      chatSummary: (audience, releaseLocal, n) => `[${audience}] ${releaseLocal}のダイジェスト: ${count(n)}件の記事`,
    },
  }) satisfies Messages;
