/**
 * Korean. Counts take the counter 건 (articles, alerts) or 개 (rules, reasons); Korean has no
 * plural forms, so no `Intl.PluralRules` is needed.
 */
import type { CatalogFactory, Messages } from './catalog.ts';

/**
 * The provider's documented statuses in words, and the one news-alerts writes itself (`ESCALATED`:
 * a spike alert whose episode has doubled, spikes/alert.ts); others are shown as sent.
 */
const STATUSES: Readonly<Record<string, string>> = {
  PUBLISHED: '게시됨',
  UPDATED: '수정됨',
  DELETED: '삭제됨',
  ESCALATED: '확대됨',
};

/**
 * The particle 로/으로 after `word`: 으로 after a syllable with a final consonant other than ㄹ;
 * after anything that is not Hangul (a provider code) both forms, as Korean writing does.
 */
function towards(word: string): string {
  const last = word.codePointAt(word.length - 1) ?? 0;
  if (last < 0xac00 || last > 0xd7a3) return `${word}(으)로`;
  const final = (last - 0xac00) % 28;
  return final === 0 || final === 8 ? `${word}로` : `${word}으로`;
}

/** A spike preset in words; a preset this catalog does not know is shown as given. */
const presetWord = (preset: string): string =>
  (({ fewer: '적게', balanced: '보통', more: '많이' }) as Readonly<Record<string, string>>)[preset] ?? preset;

/** The Korean catalog. */
export const ko: CatalogFactory = (count) =>
  ({
    language: 'ko',
    count,
    listSeparator: ', ',
    clauseSeparator: '; ',
    more: (n) => `외 ${count(n)}건`,
    articles: (n) => `기사 ${count(n)}건`,
    untitled: '(제목 없는 기사)',
    status: (status) => STATUSES[status.toUpperCase()] ?? status,
    templates: {
      subject: '[{audience}] {headline}',
      digestSubject: '[{audience}] {articles}: {top}',
      footer: [
        '"{audience}" 수신 그룹({audienceId})의 구독자이므로 이 알림을 받았습니다.',
        '받을 기사를 바꾸려면 관리자에게 수신 그룹 {audienceId}의 규칙(위 규칙 ID) 변경을, 그만 받으려면 이 주소의 삭제를 요청하세요.',
      ].join('\n'),
    },
    reason: {
      keyword: (term) => `키워드 "${term}"`,
      category: (term) => `분류 ${term}`,
      media: (term) => `매체 ${term}`,
      status: (term) => `상태 ${term}`,
      all: '모든 기사(전체 일치 규칙)',
      spike: (preset) => `급증 알림(${presetWord(preset)})`,
      other: (kind, term) => `${kind} ${term}`,
    },
    email: {
      labels: {
        source: '출처',
        published: '발행',
        category: '분류',
        categories: '분류',
        status: '상태',
        link: '링크',
      },
      linkWithheld: '포함하지 않음: 뉴스 제공처가 안전하게 공개할 수 없는 링크를 보냈습니다',
      whyHeading: '이 알림을 받은 이유:',
      rule: (ruleId, description, urgent) =>
        `- 규칙 ${ruleId}${description === undefined ? '' : `: ${description}`}${urgent ? ' (긴급)' : ''}`,
      matched: (reasons) => `  일치: ${reasons}`,
      moreRules: (n) => `- …외 규칙 ${count(n)}개`,
      alertId: (id) => `알림 ID: ${id}`,
    },
    update: {
      prefix: '[업데이트] ',
      statusChanged: (status, previous) =>
        `업데이트: 상태가 ${previous ?? '없음'}에서 ${towards(status ?? '없음')} 바뀌었습니다`,
      withdrawn: '업데이트: 언론사가 이 기사를 삭제했습니다',
      titleChanged: '업데이트: 제목이 바뀌었습니다',
    },
    spike: {
      headline: (rule) => `보도 급증: ${rule}`,
      expected: (n) => (n < 1 ? '평소 1건 미만' : `평소 약 ${count(n)}건`),
      observed: (n, expected, since) => `${since} 이후 새 기사 ${count(n)}건(${expected})`,
      lastBucket: (n, expected, until) => `${until}까지 한 시간: 새 기사 ${count(n)}건(${expected})`,
      outlets: (n) => `매체 ${count(n)}곳`,
      topStoriesHeading: '주요 기사:',
      storyOutlets: (n) => `매체 ${count(n)}곳`,
      topOutletsHeading: '주요 매체:',
      outletStories: (name, n) => `${name}(${count(n)}건)`,
      preset: presetWord,
      why: (preset) => `급증 알림(${preset}): 이 요일·시간대의 평소보다 새 기사가 훨씬 많습니다`,
      escalated: (n, expected) => `업데이트: 급증이 계속되어 새 기사가 ${count(n)}건이 되었습니다(${expected})`,
      sms: (rule, n, expected, since) => `보도 급증: ${rule}: ${since} 이후 새 기사 ${count(n)}건(${expected})`,
    },
    chat: { why: '이유:' },
    digest: {
      title: (audience, n) => `${audience} \u00B7 뉴스 요약 \u00B7 기사 ${count(n)}건`,
      partLine: (part, parts, first, last, total) =>
        `${count(parts)}통 중 ${count(part)}번째 \u00B7 전체 ${count(total)}건 중 ${count(first)}\u2013${count(last)}번`,
      part: (part, parts) => `${count(part)}/${count(parts)}통`,
      heldHeading: '이 요약에 모은 이유:',
      heldQuietHours: (n, window) =>
        `방해 금지 시간${window === undefined ? '' : `(${window.start}\u2013${window.end})`}에 보류한 ${count(n)}건`,
      heldBudget: (n, budget) =>
        `하루 한도${budget === undefined ? '' : `(즉시 알림 ${count(budget)}건)`}를 넘은 ${count(n)}건`,
      heldDigest: (n, times) => `요약 발송 시각(${times.join(', ')})에 맞춰 모은 ${count(n)}건`,
      groupHeading: (label, n, total) => `${label} \u00B7 ${count(n)}건${total > n ? `(전체 ${count(total)}건)` : ''}`,
      otherGroup: '기타',
      spikeGroup: '보도 급증',
      urgentMarker: '[긴급] ',
      whyLine: (why) => `이유: ${why}`,
      rule: (ruleId, urgent, reasons) =>
        `규칙 ${ruleId}${urgent ? ' (긴급)' : ''}${reasons === '' ? '' : `: ${reasons}`}`,
      moreRules: (n) => `외 규칙 ${count(n)}개`,
      digestId: (id) => `요약 ID: ${id}`,
      smsIntro: (audience, part, parts, n) =>
        `${audience}${parts > 1 ? ` (${count(part)}/${count(parts)}통)` : ''}: 새 소식 ${count(n)}건`,
      sms: (intro, headlines, more) =>
        `${intro}${headlines.length > 0 ? `. ${headlines.join('; ')}` : ''}${more > 0 ? ` 외 ${count(more)}건` : ''}`,
      chatTitle: (audience, n, part, parts) =>
        `${audience}: 기사 ${count(n)}건${parts > 1 ? ` (${count(part)}/${count(parts)}통)` : ''}`,
      alsoIn: (n, outlets, more) =>
        `다른 매체 ${count(n)}곳에도 보도${outlets.length === 0 ? '' : `: ${outlets.join(', ')}${more > 0 ? ` 외 ${count(more)}곳` : ''}`}`,
      moreInDigest: (n) => `이 요약에 ${count(n)}건 더 있음`,
      chatSummary: (audience, releaseLocal, n) => `[${audience}] ${releaseLocal} 뉴스 요약: 기사 ${count(n)}건`,
    },
  }) satisfies Messages;
