/**
 * `news-alerts deliveries <audienceId> --article <key>` after the audience's settings changed
 * while an alert was held (issue 30, item 8), end to end with the real CLI process against moto
 * server and the simulator: quiet hours 22:00-07:00 hold an alert just after midnight in Seoul;
 * `audiences update --quiet-hours 23:00-00:00` at 00:23; the next `run` sends it in a digest, and
 * the ledger's answer changes from "held" to "sent <time> in digest …", saying the settings
 * changed. The clock of each run is `--now`, relative to the real one (never a fixed date).
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldItemKey } from '#aws/dynamo-holds';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { formatInstant } from '../../cli/output.ts';
import { type CliSandbox, lastMidnight, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
beforeAll(async () => {
  sandbox = await startCliSandbox();
});
afterAll(async () => {
  await sandbox?.stop();
});

const minute = 60_000;

/** The last midnight in Seoul (UTC+9, no DST) at least two hours ago. */
const lastSeoulMidnight = (): number => lastMidnight(9 * 3_600_000);

interface LedgerJson {
  articles: {
    articleKey: string;
    kind: string;
    status: string;
    entry: { deliveredAt: number; releasedAt?: number; releasedIn?: string; releaseCause?: string };
  }[];
}

/** What `deliveries seoul-chips --article id:quiet-0001` prints, as a table and as JSON. */
async function explain() {
  const args = ['deliveries', 'seoul-chips', '--article', 'id:quiet-0001'];
  const [table, json] = await Promise.all([
    sandbox.cli(args, { env: { COLUMNS: '400' } }),
    sandbox.cli(['--json', ...args]),
  ]);
  expect(table.code, table.stderr).toBe(0);
  expect(json.code, json.stderr).toBe(0);
  const [article] = json.json<LedgerJson>().articles;
  expect(article?.articleKey).toBe('id:quiet-0001');
  return { ...(article as NonNullable<typeof article>), text: table.stdout };
}

describe('deliveries --article after the settings released a held alert', () => {
  it('says it was sent, when and in which digest, and that the settings changed', async () => {
    const midnight = lastSeoulMidnight();
    const created = await sandbox.cli([
      'audiences',
      'create',
      'seoul-chips',
      '--time-zone',
      'Asia/Seoul',
      '--quiet-hours',
      '22:00-07:00',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const rules = sandbox.file(
      'seoul-chips.yaml',
      'ruleId: seoul-chips-night\naudienceId: seoul-chips\nkeywords: ["nightchips"]\n',
    );
    const put = await sandbox.cli(['rules', 'put', '--file', rules]);
    expect(put.code, put.stderr).toBe(0);
    sandbox.stack.simulator?.publish({
      articleId: 'quiet-0001',
      title: 'Nightchips exports rise after midnight',
      publishedAt: midnight + 5 * minute,
      categories: ['002000000'],
      media: 'M001',
    });

    // `--now` starts the run's clock there; it runs on from that instant while the run works.
    const holdAt = midnight + 10 * minute;
    const hold = await sandbox.cli(['--json', 'run', '--now', new Date(holdAt).toISOString()]);
    expect(hold.code, hold.stderr).toBe(0);
    expect(
      hold.json<{ summary: { audiences: Record<string, { held: number }> } }>().summary.audiences['seoul-chips'],
    ).toMatchObject({ held: 1 });
    const held = await explain();
    const heldAt = held.entry.deliveredAt;
    expect(heldAt).toBeGreaterThanOrEqual(holdAt);
    expect(heldAt).toBeLessThan(holdAt + 5 * minute);
    expect(held).toMatchObject({ kind: 'held' });
    expect(held.text).toContain(`held for the end of its quiet hours since ${formatInstant(heldAt)}`);

    // 00:23 in Seoul: the quiet hours become 23:00-00:00; the next run is outside them.
    const updated = await sandbox.cli(['audiences', 'update', 'seoul-chips', '--quiet-hours', '23:00-00:00']);
    expect(updated.code, updated.stderr).toBe(0);
    const releaseAt = midnight + 25 * minute;
    const release = await sandbox.cli(['--json', 'run', '--now', new Date(releaseAt).toISOString()]);
    expect(release.code, release.stderr).toBe(0);
    expect(release.json<{ summary: { digestsSent: number } }>().summary.digestsSent).toBeGreaterThanOrEqual(1);

    const sent = await explain();
    expect(sent).toMatchObject({ kind: 'sent', entry: { releaseCause: 'settings-changed', releaseOutcome: 'sent' } });
    const { releasedAt = 0, releasedIn = '' } = sent.entry;
    expect(releasedAt).toBeGreaterThanOrEqual(releaseAt);
    expect(releasedAt).toBeLessThan(releaseAt + 5 * minute);
    expect(releasedIn).toMatch(/^digest:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(releasedIn.slice('digest:'.length))).toBeGreaterThanOrEqual(releaseAt);
    expect(sent.text).toContain(
      `sent ${formatInstant(releasedAt)} in digest ${releasedIn} (held for the end of its quiet hours from ${formatInstant(heldAt)}; released then because the audience's settings changed)`,
    );
    expect(sent.text).not.toContain('held for the end of its quiet hours since');
  });
});

describe('deliveries after an upgrade', () => {
  it('an entry an older release left saying held, with nothing held for it, reads as released, outcome not recorded', async () => {
    // Releases before the ledger recorded release outcomes deleted the held item and left its
    // entry as it was: `deliveries` said "held" for 14 days and more, and `--sent` counted it held.
    const created = await sandbox.cli(['audiences', 'create', 'old-desk', '--time-zone', 'UTC']);
    expect(created.code, created.stderr).toBe(0);
    const now = Date.now();
    const key = { audienceId: 'old-desk', articleKey: 'id:old-0001' };
    const state = new DynamoStateStore({
      documents: sandbox.stack.clients.documents,
      tableName: sandbox.descriptor.names.stateTable,
    });
    await state.holdNotifications([
      {
        key,
        heldAt: now - 30 * minute,
        reason: 'quiet-hours',
        ruleIds: ['old-rule'],
        match: {
          audienceId: 'old-desk',
          article: {
            key: key.articleKey,
            id: 'old-0001',
            title: 'Held by an older release',
            summary: '',
            url: 'https://news.example.com/old-0001',
            publishedAt: now - 40 * minute,
            categories: [],
            categoryNames: [],
          },
          rules: [{ ruleId: 'old-rule', urgent: false, reasons: [{ kind: 'keyword', term: 'old' }] }],
        },
      },
    ]);
    const read = async () => {
      const result = await sandbox.cli(['--json', 'deliveries', 'old-desk', '--article', 'id:old-0001']);
      expect(result.code, result.stderr).toBe(0);
      return result.json<LedgerJson>().articles[0];
    };
    // Still held: it says so.
    expect(await read()).toMatchObject({ kind: 'held' });
    // The older release's digest went out: its held item is gone, its ledger entry unmarked.
    await sandbox.stack.clients.documents.send(
      new DeleteCommand({ TableName: sandbox.descriptor.names.stateTable, Key: heldItemKey(key) }),
    );
    const released = await read();
    expect(released).toMatchObject({ kind: 'released-unrecorded' });
    expect(released?.status).toContain('no longer held, and the ledger does not say what became of it');
    const sent = await sandbox.cli(['--json', 'deliveries', 'old-desk', '--sent', '--since', '2h']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.json<{ kinds: Record<string, number> }>().kinds).toEqual({ unknown: 1 });
  });
});
