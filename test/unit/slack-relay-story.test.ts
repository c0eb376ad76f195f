/**
 * The Slack relay and stories (issue 13): an update notice's `newsAlerts.update` is shown as the
 * same mark and first line the email has; a digest entry's `alsoIn` as its "also in N outlets"
 * line; both parsed leniently (a malformed field reads as absent, the message still renders), and
 * provider text in them escaped and within Slack's limits.
 */
import { describe, expect, it } from 'vitest';
import { planDigest, toHeldNotification } from '#core/digest';
import { type Article, AudienceSchema } from '#core/model';
import { updateNoticeKey } from '#core/ports';
import { renderUpdateNotice } from '#core/render';
import { HEADER_MAX, renderSlackMessage, SECTION_MAX } from '../../functions/slack-relay/blocks.ts';
import { parseAlertMessage } from '../../functions/slack-relay/message.ts';

const audience = AudienceSchema.parse({
  audienceId: 'desk',
  name: 'Desk',
  topicArn: 'arn:aws:sns:us-east-1:123456789012:desk',
  timeZone: 'Asia/Tokyo',
  locale: 'ja-JP',
});
const published = Date.parse('2026-03-14T13:30:00Z');
const item: Article = {
  key: 'id:1',
  title: '半導体輸出が3カ月連続で増加'.repeat(12),
  summary: '',
  url: 'https://news.example.jp/a/1',
  publishedAt: published,
  categories: [],
  categoryNames: [],
  mediaName: '共同通信',
};
const match = { audienceId: 'desk', article: item, rules: [{ ruleId: 'chips', urgent: false, reasons: [] }] };

/** The structured body of an update notice, as the relay receives it. */
function updateDocument(): Record<string, unknown> & { newsAlerts: Record<string, unknown> } {
  const message = renderUpdateNotice(
    match,
    audience,
    { kind: 'status', status: 'DELETED', previousStatus: 'PUBLISHED' },
    updateNoticeKey('desk', 'id:1', 'status=DELETED'),
  );
  return JSON.parse((JSON.parse(message.body) as { default: string }).default);
}

const render = (document: unknown) => renderSlackMessage(parseAlertMessage(JSON.stringify(document)));

describe('Slack: update notices', () => {
  it('marks the header and says what changed first, within the header limit', () => {
    const slack = render(updateDocument());
    const [header, change] = slack.blocks;
    expect(header?.type === 'header' && header.text.text.startsWith('📰 【更新】半導体')).toBe(true);
    expect(header?.type === 'header' && header.text.text.length).toBeLessThanOrEqual(HEADER_MAX);
    expect(change).toEqual({
      type: 'section',
      text: { type: 'mrkdwn', text: '*更新: 配信元がこの記事を取り消しました*' },
    });
    expect(slack.text.startsWith('📰 【更新】')).toBe(true);
  });

  it('renders a notice whose update field is malformed as a plain alert, not a failure', () => {
    const document = updateDocument();
    document.newsAlerts.update = { change: 'colour', status: 42 };
    const slack = render(document);
    expect(JSON.stringify(slack)).not.toContain('【更新】');
    expect(slack.blocks[0]?.type).toBe('header');
  });
});

describe('Slack: also in N outlets', () => {
  const releaseAt = published + 3_600_000;
  const digestDocument = () => {
    const held = toHeldNotification({ ...match, storyId: 's-1' }, 'digest', published);
    const stories = new Map([
      [
        's-1',
        {
          storyId: 's-1',
          leadArticleKey: 'id:1',
          firstSeenAt: published,
          outlets: ['共同通信', '<!here> 速報', 'x'.repeat(500), '時事'],
          outletCount: 40,
          articleCount: 60,
        },
      ],
    ]);
    const [message] = planDigest([held], audience, releaseAt, { stories }).messages;
    return JSON.parse((JSON.parse(message?.body ?? '{}') as { default: string }).default) as {
      newsAlerts: { digest: { groups: { entries: Record<string, unknown>[] }[] } };
    };
  };

  it('lists up to three names escaped and cut, then how many more, in the digest’s language', () => {
    const slack = render(digestDocument());
    const text = slack.blocks.map((block) => (block.type === 'section' ? block.text.text : '')).join('\n');
    const line = text.split('\n').find((candidate) => candidate.includes('媒体でも報道')) ?? '';
    expect(line).toMatch(/^ {4}ほか39媒体でも報道: &lt;!here&gt; 速報、x+…、時事ほか36媒体$/u);
    expect(line.length).toBeLessThan(300);
    expect(text).not.toContain('<!here>');
    for (const block of slack.blocks)
      if (block.type === 'section') expect(block.text.text.length).toBeLessThanOrEqual(SECTION_MAX);
  });

  it('renders an entry whose alsoIn is malformed without the line', () => {
    const document = digestDocument();
    const entry = document.newsAlerts.digest.groups[0]?.entries[0] as Record<string, unknown>;
    entry.alsoIn = { count: -3, outlets: 'all of them' };
    const slack = render(document);
    expect(JSON.stringify(slack)).not.toContain('媒体でも報道');
  });
});
