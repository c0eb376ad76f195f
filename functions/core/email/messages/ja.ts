/** Japanese words of the email channel (see catalog.ts). */
import type { EmailWords } from './catalog.ts';

export const ja: EmailWords = {
  language: 'ja',
  languageName: '日本語',
  mail: {
    why: (audience) => `このアドレスが${audience}に登録されているため、このメールをお送りしています。`,
    manage: 'メール設定',
    unsubscribe: (audience) => `${audience}の配信を停止`,
    readArticle: '記事を読む',
    summary: 'まとめてお届けする理由',
    footer:
      '受け取る記事を変えるには、配信グループ {audienceId} のルール(上記のルールID)の変更を管理者に依頼してください。',
  },
  confirm: {
    subject: (audience) => `${audience}の登録を確認してください`,
    heading: (audience) => `${audience}の登録確認`,
    body: (audience) =>
      `このアドレスに${audience}のニュース通知を送るよう依頼がありました。確認されるまで何も送りません。`,
    button: '登録を確認する',
    ignore: '心当たりがない場合は、このメールを無視してください。今後ご連絡することはありません。',
  },
  dailyDigest: {
    subject: (audience, articles) => `[${audience}] 本日のまとめ: ${articles}`,
    heading: (audience, articles) => `${audience}: 本日のまとめ（${articles}）`,
    intro: '1日1回の配信を選択されました。前回以降の記事をまとめてお届けします。',
  },
  page: {
    title: 'メール設定',
    languageLabel: '言語',
    addressLine: (masked) => `${masked}の設定`,
    listHeading: '登録中のリスト',
    thisList: 'このリスト',
    state: {
      confirmed: '通知をすぐに受け取る',
      digest: '1日1回のまとめ',
      paused: (until) => `${until}まで一時停止中`,
      pending: '登録確認待ち',
      unsubscribed: '配信停止済み',
    },
    suppressed:
      'このアドレスには何も送っていません。メールが不達になったか、迷惑メールとして報告されました。送信者に解除を依頼してください。',
    manageHeading: (audience) => `${audience}の設定`,
    pendingNote:
      '確認メールのリンクを開くと、この通知の配信が始まります。確認後は、ここで配信の頻度を選んだり、一時停止したりできます。',
    frequencyLegend: '受け取り方',
    immediate: '通知をすぐに受け取る',
    digest: (time, zone) => `1日1回まとめて受け取る（${zone}時間の${time}ごろ）`,
    save: '保存',
    pauseLegend: '通知の一時停止',
    pauseDays: '日数',
    pauseButton: '一時停止',
    resumeButton: '今すぐ再開',
    unsubscribeHeading: '配信停止',
    unsubscribeThis: (audience) => `${audience}の配信を停止`,
    unsubscribeAll: 'すべてのリストの配信を停止',
    notices: {
      unsubscribed: (audience) => `${audience}の配信を停止しました。`,
      unsubscribedAll: 'すべてのリストの配信を停止しました。',
      paused: (until) => `${until}まで通知を停止します。`,
      resumed: '通知を再開しました。',
      immediate: '今後は通知をすぐにお送りします。',
      digest: '今後は1日1回まとめてお送りします。',
      confirmed: (audience) => `${audience}の登録を確認しました。`,
      nothingChanged: 'すでにその設定です。変更はありません。',
    },
    refused: {
      unsubscribed: 'このリストの配信は停止済みです。再開するには送信者に追加を依頼してください。',
      notConfirmed: '先に登録を確認してください（確認メールをご覧ください）。',
      badDays: (max) => `1から${max}までの日数を選んでください。`,
      badPreference: '受け取り方を選んでください：通知をすぐに受け取るか、1日1回まとめて受け取るか。',
    },
    oneClickHeading: (audience) => `${audience}の配信を停止しますか？`,
    oneClickBody: 'このアドレスにこのリストの通知をお送りしなくなります。',
    oneClickButton: '配信を停止',
    oneClickDone: '配信を停止しました。',
    confirmHeading: (audience) => `${audience}の登録確認`,
    confirmBody: '確認すると通知が始まります。',
    confirmButton: '登録を確認する',
    invalidTitle: 'このリンクは無効です',
    invalidBody:
      'リンクの有効期限が切れたか、変更されたか、登録されていないアドレスのリンクです。最近のメールのリンクを開いてください。何も変更されていません。',
    tooMany: 'リクエストが多すぎます。しばらくしてからもう一度お試しください。',
    manageLink: 'すべての設定',
  },
};
