/**
 * What `deliveries --article` and `replay --parked` say of notifications SNS refused for good
 * (found by a reviewer):
 * - a parked digest, once `replay --parked` published it: the alerts it carried read as sent in
 *   it, not as parked (their entries kept `releaseOutcome: parked`, so `deliveries` told the
 *   operator to replay what was replayed); before the topic is repaired, the dry run says the
 *   topic is missing instead of counting the digest as sent;
 * - a parked alert: `deliveries --article` says it is parked, not that it was never matched.
 * The clock of each run is `--now`, relative to the real one.
 */
import { DeleteTopicCommand } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSandbox, lastMidnight, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
beforeAll(async () => {
  sandbox = await startCliSandbox();
});
afterAll(async () => {
  await sandbox?.stop();
});

const minute = 60_000;

interface LedgerJson {
  articles: { kind: string; entry: { releasedIn?: string; releaseOutcome?: string } }[];
}

describe('deliveries --article after replay --parked sent the digest that carried the alert', () => {
  it('is kept parked while its topic is missing (the dry run says so), then says sent in that digest, no longer parked', async () => {
    // The last midnight in UTC at least two hours ago: the digest at 00:30 is in the past.
    const midnight = lastMidnight();
    const created = await sandbox.cli([
      'audiences',
      'create',
      'park-desk',
      '--delivery-mode',
      'digest',
      '--digest-times',
      '00:30',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const rules = sandbox.file(
      'park-desk.yaml',
      'ruleId: park-desk-rule\naudienceId: park-desk\nkeywords: ["parkchips"]\n',
    );
    expect((await sandbox.cli(['rules', 'put', '--file', rules])).code).toBe(0);
    sandbox.stack.simulator?.publish({
      articleId: 'park-0001',
      title: 'Parkchips shipments resume',
      publishedAt: midnight + 5 * minute,
      categories: ['002000000'],
      media: 'M001',
    });
    const hold = await sandbox.cli(['run', '--now', new Date(midnight + 10 * minute).toISOString()]);
    expect(hold.code, hold.stderr).toBe(0);

    // The topic is gone when the digest is due: SNS refuses it for good, and it is parked.
    const topicArn = String((await sandbox.audience('park-desk'))?.topicArn);
    await sandbox.stack.clients.sns.send(new DeleteTopicCommand({ TopicArn: topicArn }));
    const due = await sandbox.cli(['run', '--now', new Date(midnight + 35 * minute).toISOString()]);
    expect(due.code).toBe(1);
    const args = ['--json', 'deliveries', 'park-desk', '--article', 'id:park-0001'];
    const parked = (await sandbox.cli(args)).json<LedgerJson>().articles[0];
    expect(parked?.entry).toMatchObject({ releaseOutcome: 'parked' });

    // Before the repair, a dry run says the topic is missing instead of counting it as sent, and
    // the replay keeps it parked.
    for (const dryRun of [['--dry-run'], []]) {
      const early = await sandbox.cli(['--json', 'replay', '--parked', '--audience', 'park-desk', ...dryRun]);
      expect(early.code, early.stderr).toBe(dryRun.length > 0 ? 0 : 1);
      expect(early.json<{ audiences: Record<string, number>[] }>().audiences).toEqual([
        expect.objectContaining({ audienceId: 'park-desk', wouldSend: 0, sent: 0, stillParked: 1, topicMissing: 1 }),
      ]);
      expect(early.stderr).toContain('park-desk: its topic does not exist, so its 1 parked alert(s) stay parked');
      expect(early.stderr).toContain('audiences repair park-desk');
    }
    // The dry run lists what is parked, for a person to review one by one.
    const review = await sandbox.cli(['--json', 'replay', '--parked', '--dry-run', '--audience', 'park-desk']);
    expect(review.json<{ alerts: Record<string, string>[] }>().alerts).toEqual([
      expect.objectContaining({
        audienceId: 'park-desk',
        articleKey: parked?.entry.releasedIn,
        code: expect.any(String),
      }),
    ]);
    const table = await sandbox.cli(['replay', '--parked', '--dry-run', '--audience', 'park-desk'], {
      env: { COLUMNS: '300' },
    });
    expect(table.stdout).toContain('AUDIENCE\tARTICLE\tPARKED AT\tCODE\tSUBJECT');
    expect(table.stdout).toContain(`park-desk\t${parked?.entry.releasedIn}\t`);
    expect((await sandbox.cli(['audiences', 'repair', 'park-desk', '--yes'])).code).toBe(0);
    const replay = await sandbox.cli([
      'replay',
      '--parked',
      '--audience',
      'park-desk',
      '--to-topic-without-subscribers',
    ]);
    expect(replay.code, replay.stderr).toBe(0);
    const sent = (await sandbox.cli(args)).json<LedgerJson>().articles[0];
    expect(sent).toMatchObject({
      kind: 'sent',
      entry: { releaseOutcome: 'sent', releasedIn: parked?.entry.releasedIn },
    });
  });

  it('deliveries --article says an alert SNS refused is parked, not that it was never matched', async () => {
    const created = await sandbox.cli(['audiences', 'create', 'park-alerts']);
    expect(created.code, created.stderr).toBe(0);
    const rules = sandbox.file(
      'park-alerts.yaml',
      'ruleId: park-alerts-rule\naudienceId: park-alerts\nkeywords: ["lonechips"]\n',
    );
    expect((await sandbox.cli(['rules', 'put', '--file', rules])).code).toBe(0);
    const topicArn = String((await sandbox.audience('park-alerts'))?.topicArn);
    await sandbox.stack.clients.sns.send(new DeleteTopicCommand({ TopicArn: topicArn }));
    sandbox.stack.simulator?.publish({
      articleId: 'park-0002',
      title: 'Lonechips plant reopens',
      publishedAt: Date.now() - 5 * minute,
      categories: ['002000000'],
      media: 'M001',
    });
    const run = await sandbox.cli(['run']);
    expect(run.code).toBe(1);
    const args = ['--json', 'deliveries', 'park-alerts', '--article', 'id:park-0002'];
    const [parked] = (await sandbox.cli(args)).json<LedgerJson & { articles: { status: string }[] }>().articles;
    expect(parked).toMatchObject({ kind: 'parked' });
    expect(parked?.status).toMatch(
      /^not sent: SNS refused it for good at .* and it is parked for 'news-alerts replay --parked'$/,
    );

    expect((await sandbox.cli(['audiences', 'repair', 'park-alerts', '--yes'])).code).toBe(0);
    const replay = await sandbox.cli([
      'replay',
      '--parked',
      '--audience',
      'park-alerts',
      '--to-topic-without-subscribers',
    ]);
    expect(replay.code, replay.stderr).toBe(0);
    expect((await sandbox.cli(args)).json<LedgerJson>().articles[0]).toMatchObject({ kind: 'sent' });
  });
});
