/**
 * `news-alerts preview` and `news-alerts replay` end to end: the preview's per-audience counts
 * equal what a real run over the same window delivers (the run happens in this process, the
 * preview in a real CLI process); a replay after an outage delivers exactly the alerts the outage
 * kept back and nothing twice; parked alerts go out once the audience is fixed.
 */

import { CreateTopicCommand, DeleteTopicCommand, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import type { RunSummary } from '#core/alert-run';
import { messagesFor, messagesForLocale } from '#core/messages/catalog';
import { exampleAudiences, exampleRules } from '#sandbox/examples';
import { expectedDeliveries } from '#sandbox/expectations';
import { OUT_OF_SCOPE_MEDIA } from '#sandbox/news-simulator-data';
import { installSnsFaults } from '#test/sns-faults';
import { renderSlackMessage } from '../../functions/slack-relay/blocks.ts';
import { parseAlertMessage } from '../../functions/slack-relay/message.ts';
import { type CliSandbox, countBy, deliveryIdOfBody, drainQueue, startCliSandbox } from './support.ts';

let sandbox: CliSandbox | undefined;

/** A row of replay --parked --json. */
interface ParkedRow {
  audienceId: string;
  wouldSend: number;
  stillParked: number;
  noSubscriber: number;
}
afterEach(async () => {
  await sandbox?.stop();
  sandbox = undefined;
});

/** The instants a first run reads: from the initial lookback minus the late-arrival overlap, to its start. */
function windowOf(current: CliSandbox, summary: RunSummary): { from: string; to: string } {
  const { initialLookbackMs, lateArrivalMs } = current.stack.config.run;
  return {
    from: new Date(summary.startedAt - initialLookbackMs - lateArrivalMs).toISOString(),
    to: new Date(summary.startedAt).toISOString(),
  };
}

interface PreviewJson {
  articles: number;
  notifications: number;
  audiences: {
    audienceId: string;
    notifications: number;
    /** Copies of a story the audience has (collapse: story): matched, recorded, not sent. */
    collapsed: number;
    immediate: number;
    held: Record<string, number>;
    rules: Record<string, number>;
    digests?: {
      releaseAt: string;
      alerts: number;
      reasons: Record<string, number>;
      messages: number;
      subject: string;
      titles: string[];
    }[];
  }[];
  samples: Record<
    string,
    {
      subject: string;
      email: string;
      sms: string;
      slack: string;
      slackMessage: unknown;
      webhook: { newsAlerts: { deliveryId: string; locale?: string } };
    }
  >;
}

interface ReplayJson {
  matched: number;
  alreadyDelivered: number;
  published: number;
  wouldPublish: number;
  /** Copies of a story recorded as collapsed by this replay. */
  collapsed: number;
  audiences: { audienceId: string; matched: number; alreadyDelivered: number; published: number; wouldSend: number }[];
}

/** The cells of the table row that starts with `first`, whatever the table's layout. */
function rowOf(stdout: string, first: string): string[] | undefined {
  return stdout
    .split('\n')
    .map((line) =>
      line
        .split(/[│|\t]|\s{2,}/)
        .map((cell) => cell.trim())
        .filter((cell) => cell !== ''),
    )
    .find((cells) => cells[0] === first);
}

const byAudience = <T extends { audienceId: string }>(rows: readonly T[]) =>
  Object.fromEntries(rows.map((row) => [row.audienceId, row]));

describe('preview', () => {
  it('counts per audience exactly what a real run over the same window delivers, and sends nothing', async () => {
    const current = await startCliSandbox();
    sandbox = current;
    const summary = await current.stack.run();
    expect(summary.status).toBe('completed');
    const delivered = countBy(await current.stack.collectDeliveries(), (delivery) => delivery.audienceId);
    expect(delivered.size).toBe(4);

    const { from, to } = windowOf(current, summary);
    const preview = await current.cli(['--json', 'backtest', '--from', from, '--to', to]);
    expect(preview.code, preview.stderr).toBe(0);
    const result = preview.json<PreviewJson>();
    const counts = Object.fromEntries(result.audiences.map((row) => [row.audienceId, row.notifications]));
    expect(counts).toEqual(Object.fromEntries(delivered));
    expect(result.notifications).toBe(summary.notificationsPublished);
    // The example audiences have no delivery preferences: everything goes out at once.
    for (const row of result.audiences) expect(row.immediate).toBe(row.notifications);
    // One rendered sample per audience, for each channel, in the audience's language.
    for (const audienceId of delivered.keys()) {
      const sample = result.samples[audienceId];
      const locale = exampleAudiences.find((audience) => audience.item.audienceId === audienceId)?.item.locale;
      expect(sample?.subject).toMatch(/^\[/);
      expect(sample?.sms).toMatch(/https:\/\//);
      expect(sample?.email).toContain(messagesForLocale(locale as string | undefined).email.whyHeading);
      expect(sample?.webhook.newsAlerts.deliveryId.startsWith(`${audienceId}|`)).toBe(true);
      // Slack exactly as the relay would post it: its own renderer on the same structured alert.
      expect(sample?.slackMessage).toEqual(renderSlackMessage(parseAlertMessage(JSON.stringify(sample?.webhook))));
      expect(sample?.slack).not.toContain('would refuse');
    }
    // Previewing sent nothing and moved nothing.
    expect(await current.stack.collectDeliveries()).toEqual([]);
    expect((await current.stack.dependencies.state.readWatermark())?.at).toBe(summary.watermarkAfter);

    // The human form: a table and samples per channel.
    const table = await current.cli([
      'preview',
      '--from',
      from,
      '--to',
      to,
      '--audience',
      'quake-oncall',
      '--channel',
      'sms',
    ]);
    expect(table.code).toBe(0);
    // Any table layout (boxed, borderless or TSV): the audience's row shows its ALERTS count.
    expect(rowOf(table.stdout, 'quake-oncall')?.[2]).toBe(String(delivered.get('quake-oncall')));
    // In a pipe the samples are notes on stderr: stdout stays the table.
    expect(table.stderr).toContain('--- sms');
    expect(table.stderr).not.toContain('--- email');
    expect(table.stdout).not.toContain('--- sms');
    expect(table.stdout + table.stderr).not.toContain('markets-desk');
    // --channel slack renders what the relay would post to the channel, as text.
    const slack = await current.cli([
      'preview',
      '--from',
      from,
      '--to',
      to,
      '--audience',
      'chips-team',
      '--channel',
      'slack',
    ]);
    expect(slack.code, slack.stderr).toBe(0);
    expect(slack.stderr).toContain('--- slack');
    expect(slack.stderr).not.toContain('--- email');
    expect(slack.stderr).not.toContain('would refuse');

    // In digest mode the same alerts would be held for the digest: same count, none at once.
    expect((await current.cli(['audiences', 'update', 'markets-desk', '--delivery-mode', 'digest'])).code).toBe(0);
    const digest = await current.cli([
      '--json',
      'preview',
      '--from',
      from,
      '--to',
      to,
      '--audience',
      'markets-desk',
      '--no-samples',
    ]);
    expect(digest.json<PreviewJson>().audiences).toEqual([
      expect.objectContaining({
        audienceId: 'markets-desk',
        notifications: delivered.get('markets-desk'),
        immediate: 0,
        held: { digest: delivered.get('markets-desk'), 'quiet-hours': 0, budget: 0 },
      }),
    ]);
    // ...and shown as the digests they would go out in: each alert in exactly one, released at the
    // audience's digest time after it was published, with the subject its readers would see.
    const [markets] = digest.json<PreviewJson>().audiences;
    const digests = markets?.digests ?? [];
    expect(digests.length).toBeGreaterThan(0);
    expect(digests.reduce((sum, entry) => sum + entry.alerts, 0)).toBe(delivered.get('markets-desk'));
    const releases = digests.map((entry) => Date.parse(entry.releaseAt));
    expect(releases).toEqual([...new Set(releases)].sort((a, b) => a - b));
    for (const entry of digests) {
      expect(entry).toMatchObject({ reasons: { digest: entry.alerts, 'quiet-hours': 0, budget: 0 } });
      expect(entry.messages).toBeGreaterThanOrEqual(1);
      expect(entry.subject).toContain('Markets desk');
      expect(entry.titles.length).toBe(Math.min(3, entry.alerts));
    }
    const [digestTable, digestTsv] = await Promise.all([
      current.cli(['--output', 'table', 'preview', '--from', from, '--to', to, '--audience', 'markets-desk']),
      current.cli(['preview', '--from', from, '--to', to, '--audience', 'markets-desk']),
    ]);
    expect(digestTable.code, digestTable.stderr).toBe(0);
    expect(digestTable.stdout).toContain(`=== markets-desk: ${digests.length} digest(s) instead of single alerts`);
    expect(digestTable.stdout).toContain(`--- ${digests[0]?.releaseAt}`);
    // In a pipe, stdout is the table's header and rows; the digest sections are notes on stderr.
    expect(digestTsv.code, digestTsv.stderr).toBe(0);
    expect(
      digestTsv.stdout
        .trimEnd()
        .split('\n')
        .every((line) => line.split('\t').length > 1),
    ).toBe(true);
    expect(digestTsv.stderr).toContain(`=== markets-desk: ${digests.length} digest(s) instead of single alerts`);
  });

  it('previews a proposed rules file and a disabled rule against what the rules match, and refuses an invalid file', async () => {
    const current = await startCliSandbox();
    sandbox = current;
    const now = Date.now();
    const from = new Date(now - 30 * 3_600_000).toISOString();
    const to = new Date(now).toISOString();
    const proposed = [
      { ruleId: 'partner-elections', audienceId: 'partner-feed', keywords: ['election', 'vote'] },
      { ruleId: 'markets-crypto', audienceId: 'markets-desk', keywords: ['bitcoin', 'crypto'], enabled: false },
    ];
    const file = current.file('proposed.json', JSON.stringify({ rules: proposed }));
    const result = await current.cli([
      '--json',
      'preview',
      '--from',
      from,
      '--to',
      to,
      '--rules-file',
      file,
      '--no-samples',
    ]);
    expect(result.code, result.stderr).toBe(0);

    // Worked out independently: the simulator's articles in the window, matched by the naive matcher.
    const simulator = current.stack.simulator;
    if (!simulator) throw new Error('the sandbox has a simulator');
    const audienceItems = [...current.stack.topics].map(([audienceId, topicArn]) => ({ audienceId, topicArn }));
    const ruleItems = [...exampleRules.filter((rule) => rule.ruleId !== 'partner-elections'), ...proposed];
    const expected = expectedDeliveries({
      articles: simulator.articles(),
      ruleItems,
      audienceItems,
      from: Date.parse(from),
      to: Date.parse(to),
      inScope: (media) => media !== OUT_OF_SCOPE_MEDIA,
    });
    const rows = byAudience(result.json<PreviewJson>().audiences);
    // Every match is an alert or, for an audience that collapses stories, a collapsed copy.
    const previewed = (row: PreviewJson['audiences'][number] | undefined) =>
      (row?.notifications ?? 0) + (row?.collapsed ?? 0);
    for (const [audienceId, keys] of expected) expect(previewed(rows[audienceId]), audienceId).toBe(keys.size);
    expect(rows['markets-desk']?.rules).not.toHaveProperty('markets-crypto');

    // --rule previews the disabled proposal as if enabled ("preview before enabling").
    const single = await current.cli([
      '--json',
      'preview',
      '--from',
      from,
      '--to',
      to,
      '--rules-file',
      file,
      '--rule',
      'markets-crypto',
    ]);
    const enabled = expectedDeliveries({
      articles: simulator.articles(),
      ruleItems: [{ ...proposed[1], enabled: true }],
      audienceItems,
      from: Date.parse(from),
      to: Date.parse(to),
      inScope: (media) => media !== OUT_OF_SCOPE_MEDIA,
    });
    expect(previewed(byAudience(single.json<PreviewJson>().audiences)['markets-desk'])).toBe(
      enabled.get('markets-desk')?.size,
    );

    const invalid = current.file('invalid.yaml', 'ruleId: broken\naudienceId: markets-desk\nkeywords: []\n');
    const [refused, badWindow, unknownAudience] = await Promise.all([
      current.cli(['preview', '--from', from, '--rules-file', invalid]),
      current.cli(['preview', '--from', 'yesterday']),
      current.cli(['preview', '--from', '2h', '--audience', 'nobody']),
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('invalid.yaml:1: rule "broken": categories: the rule has no categories');
    expect(badWindow.code).toBe(2);
    expect(badWindow.stderr).toContain('--from "yesterday"');
    expect(unknownAudience.code).toBe(3);
  });
});

describe('replay', () => {
  it('preview and replay render as the target’s own runs do: audiences without locale in its default locale', async () => {
    const current = await startCliSandbox({ environment: { DEFAULT_LOCALE: 'ko-KR' } });
    sandbox = current;
    const korean = messagesFor('ko').email.whyHeading;
    // markets-desk has no locale; its run-time alerts fail (SNS outage) so the replay sends them.
    const faults = installSnsFaults(current.stack.clients.sns, {
      entryFault: ({ deliveryId }) =>
        deliveryId?.startsWith('markets-desk|') ? { code: 'InternalError', senderFault: false } : undefined,
    });
    const summary = await current.stack.run();
    faults.uninstall();
    // Copies of a story whose lead fails are not recorded (they wait with it, counted as
    // deferred): the replay sends the leads and collapses the copies into them.
    const tally = summary.audiences['markets-desk'];
    expect(summary.notificationsFailed).toBeGreaterThan(0);
    expect(summary.notificationsFailed + summary.notificationsDeferred).toBe(
      (tally?.matched ?? 0) - (tally?.collapsed ?? 0),
    );
    const first = await current.stack.collectDeliveries();
    // The sandbox's own run: partner-feed (no locale) in Korean, chips-team in its own ko-KR.
    const partner = first.filter((delivery) => delivery.audienceId === 'partner-feed');
    expect(partner.length).toBeGreaterThan(0);
    for (const delivery of partner) expect(delivery.body.newsAlerts).toMatchObject({ locale: 'ko-KR' });
    const { from, to } = windowOf(current, summary);

    const preview = await current.cli(['--json', 'preview', '--from', from, '--to', to, '--audience', 'markets-desk']);
    expect(preview.code, preview.stderr).toBe(0);
    const sample = preview.json<PreviewJson>().samples['markets-desk'];
    expect(sample?.email).toContain(korean);
    expect(sample?.email).not.toContain(messagesFor('en').email.whyHeading);
    expect(sample?.webhook.newsAlerts).toMatchObject({ locale: 'ko-KR' });

    const replay = await current.cli(['--json', 'replay', '--from', from, '--to', to, '--audience', 'markets-desk']);
    expect(replay.code, replay.stderr).toBe(0);
    const replayed = await current.stack.collectDeliveries();
    // One alert per story: a copy that led after its lead failed in the run failed too.
    expect(replayed).toHaveLength(replay.json<{ published: number }>().published);
    expect(replayed.length).toBeGreaterThan(0);
    expect(replayed.length).toBeLessThanOrEqual(summary.notificationsFailed);
    for (const delivery of replayed) {
      expect(delivery.audienceId).toBe('markets-desk');
      expect(delivery.body.newsAlerts).toMatchObject({ locale: 'ko-KR' });
    }
  });

  it('after an SNS outage for one audience, delivers exactly the missed alerts, and nothing twice', async () => {
    const current = await startCliSandbox();
    sandbox = current;
    // The outage: every chips-team alert fails, transiently, for the whole run.
    const faults = installSnsFaults(current.stack.clients.sns, {
      entryFault: ({ deliveryId }) =>
        deliveryId?.startsWith('chips-team|') ? { code: 'InternalError', senderFault: false } : undefined,
    });
    const summary = await current.stack.run();
    faults.uninstall();
    expect(summary.status).toBe('incomplete');
    const tally = summary.audiences['chips-team'];
    // The leads failed; their copies wait with them, not recorded (counted as deferred). A copy
    // that led after its lead failed in the run failed too: one alert per story is what is missing.
    const failed = summary.notificationsFailed;
    expect(failed).toBeGreaterThan(0);
    expect(failed + summary.notificationsDeferred).toBe((tally?.matched ?? 0) - (tally?.collapsed ?? 0));
    // Collapsed copies are in the ledger like deliveries: a replay counts them as already delivered.
    const collapsed = summary.notificationsCollapsed;
    const first = await current.stack.collectDeliveries();
    expect(first.some((delivery) => delivery.audienceId === 'chips-team')).toBe(false);
    const { from, to } = windowOf(current, summary);

    // The dry run names what is missing and sends nothing.
    const dryRun = await current.cli(['--json', 'replay', '--from', from, '--to', to, '--dry-run']);
    expect(dryRun.code, dryRun.stderr).toBe(0);
    const planned = dryRun.json<ReplayJson>();
    const missed = planned.wouldPublish;
    expect(missed).toBeGreaterThan(0);
    expect(missed).toBeLessThanOrEqual(failed);
    expect(byAudience(planned.audiences)['chips-team']?.wouldSend).toBe(missed);
    expect(planned.alreadyDelivered).toBe(first.length + collapsed);
    expect(await current.stack.collectDeliveries()).toEqual([]);

    const replay = await current.cli(['--json', 'replay', '--from', from, '--to', to]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.json<ReplayJson>()).toMatchObject({ published: missed, alreadyDelivered: first.length + collapsed });
    // The copies that waited with their leads collapse into them now.
    const replayCollapsed = replay.json<ReplayJson>().collapsed;
    expect(replayCollapsed).toBe(summary.notificationsFailed + summary.notificationsDeferred - missed);
    const second = await current.stack.collectDeliveries();
    expect(second).toHaveLength(missed);
    expect(second.every((delivery) => delivery.audienceId === 'chips-team')).toBe(true);

    // Together: every audience got exactly what its rules match, each alert once.
    const all = [...first, ...second].map((delivery) => `${delivery.audienceId}|${delivery.articleKey}`);
    expect(new Set(all).size).toBe(all.length);
    const simulator = current.stack.simulator;
    if (!simulator) throw new Error('the sandbox has a simulator');
    const expected = expectedDeliveries({
      articles: simulator.articles(),
      ruleItems: exampleRules,
      audienceItems: [...current.stack.topics].map(([audienceId, topicArn]) => ({ audienceId, topicArn })),
      from: Date.parse(from),
      to: Date.parse(to),
      inScope: (media) => media !== OUT_OF_SCOPE_MEDIA,
    });
    const wanted = [...expected].flatMap(([audienceId, keys]) =>
      [...keys].map((articleKey) => ({ audienceId, articleKey })),
    );
    // What was not received must be a copy the ledger records as collapsed into its story.
    const notReceived = wanted.filter((key) => !all.includes(`${key.audienceId}|${key.articleKey}`));
    const ledger = await new DynamoStateStore({
      documents: current.stack.clients.documents,
      tableName: current.descriptor.names.stateTable,
    }).readDeliveries(notReceived);
    for (const key of notReceived) {
      expect(
        ledger.get(`${key.audienceId}|${key.articleKey}`)?.collapsedInto,
        `${key.audienceId}|${key.articleKey}`,
      ).toBeDefined();
    }
    expect(notReceived).toHaveLength(collapsed + replayCollapsed);
    expect(new Set(all)).toEqual(
      new Set(wanted.filter((key) => !notReceived.includes(key)).map((key) => `${key.audienceId}|${key.articleKey}`)),
    );

    // Replaying again, or the next scheduled run, sends nothing.
    const again = await current.cli(['--json', 'replay', '--from', from, '--to', to]);
    expect(again.json<ReplayJson>()).toMatchObject({
      published: 0,
      alreadyDelivered: all.length + collapsed + replayCollapsed,
    });
    const next = await current.stack.run();
    expect(next.status).toBe('completed');
    expect(next.notificationsPublished).toBe(0);
    expect(await current.stack.collectDeliveries()).toEqual([]);

    // The replay is in the run history.
    const runs = (await current.cli(['--json', 'runs', 'list'])).json<{ kind: string; published?: number }[]>();
    expect(runs.filter((run) => run.kind === 'replay').map((run) => run.published)).toEqual([0, missed]);
    // On a terminal of 110 columns it stays a table: the counts a failure is not read from give way.
    const narrow = await current.cli(['--output', 'table', 'runs', 'list'], { env: { COLUMNS: '110' } });
    expect(narrow.stdout.split('\n')[0]).toMatch(/^STARTED\s+KIND\s+STATUS\s+NEW\s+SENT/);
    expect(narrow.stderr).toContain('left out to fit 110 columns');
  });

  /** A sandbox whose partner-feed topic was deleted before a run, which parked its alerts. */
  async function partnerFeedParked() {
    const current = await startCliSandbox();
    sandbox = current;
    await current.stack.clients.sns.send(
      new DeleteTopicCommand({ TopicArn: current.stack.topics.get('partner-feed') }),
    );
    const summary = await current.stack.run();
    expect(summary.status).toBe('completed');
    const parked = await current.stack.dependencies.state.listUndeliverable('partner-feed');
    expect(parked.length).toBe(summary.notificationsParked);
    expect(parked.length).toBeGreaterThan(0);
    return { current, parked, ...current.stack.clients };
  }

  it('keeps parked alerts parked while the repaired topic has no subscriber, and sends them once someone subscribes', async () => {
    const { current, parked, sns, sqs } = await partnerFeedParked();

    // audiences repair makes a new topic; the partner's subscription was made outside the CLI and
    // is not restored, so the topic has nobody (the sandbox's audit queue is no subscriber).
    const repaired = await current.cli(['audiences', 'repair', 'partner-feed', '--yes']);
    expect(repaired.code, repaired.stderr).toBe(0);

    const dryRun = await current.cli(['--json', 'replay', '--parked', '--dry-run', '--audience', 'partner-feed']);
    expect(dryRun.code, dryRun.stderr).toBe(0);
    expect(dryRun.stderr).toContain('partner-feed: its topic has no confirmed subscriber');
    expect(byAudience(dryRun.json<{ audiences: ParkedRow[] }>().audiences)['partner-feed']).toMatchObject({
      wouldSend: 0,
      stillParked: parked.length,
      noSubscriber: parked.length,
    });
    const forced = await current.cli([
      '--json',
      'replay',
      '--parked',
      '--dry-run',
      '--to-topic-without-subscribers',
      '--audience',
      'partner-feed',
    ]);
    expect(byAudience(forced.json<{ audiences: ParkedRow[] }>().audiences)['partner-feed']?.wouldSend).toBe(
      parked.length,
    );

    const refused = await current.cli(['--json', 'replay', '--parked', '--audience', 'partner-feed']);
    expect(refused.code).toBe(1);
    expect(refused.json()).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('no known subscriber on the topic of partner-feed') },
    });
    // The run history says so too: incomplete, with the reason.
    const history = (await current.cli(['--json', 'runs', 'list'])).json<
      { kind: string; status: string; reason?: string }[]
    >();
    expect(history.find((run) => run.kind === 'replay --parked')).toMatchObject({
      status: 'incomplete',
      reason: expect.stringContaining("their audience's topic has no subscriber"),
    });
    // Nothing was sent, nothing counts as delivered: they wait for a subscriber.
    expect(await current.stack.dependencies.state.listUndeliverable('partner-feed')).toHaveLength(parked.length);
    expect((await current.stack.dependencies.state.findDelivered(parked)).size).toBe(0);

    // A window replay over their articles would send them too, to nobody, and record them delivered
    // (then replay --parked would never send them): its dry run warns, the replay is refused.
    const windowDryRun = await current.cli(['replay', '--from', '2d', '--dry-run', '--audience', 'partner-feed']);
    expect(windowDryRun.code, windowDryRun.stderr).toBe(0);
    expect(windowDryRun.stderr).toContain(
      `partner-feed: ${parked.length} parked alert(s), and its topic has no confirmed subscriber`,
    );
    const windowRefused = await current.cli(['replay', '--from', '2d', '--audience', 'partner-feed']);
    expect(windowRefused.code).toBe(2);
    expect(windowRefused.stderr).toContain('would reach nobody and be recorded delivered');
    expect(windowRefused.stderr).toContain('nothing was sent');
    expect(await current.stack.dependencies.state.listUndeliverable('partner-feed')).toHaveLength(parked.length);
    expect((await current.stack.dependencies.state.findDelivered(parked)).size).toBe(0);
    // Not refused by a window that cannot send them: before their articles, or a disabled audience.
    const before = await current.cli(['replay', '--from', '7d', '--to', '6d', '--audience', 'partner-feed']);
    expect(before.code, before.stderr).toBe(0);
    expect(before.stderr).not.toContain('parked alert(s)');
    expect((await current.cli(['audiences', 'update', 'partner-feed', '--disable'])).code).toBe(0);
    const disabled = await current.cli(['replay', '--from', '2d', '--audience', 'partner-feed']);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stderr).not.toContain('parked alert(s)');
    expect((await current.cli(['audiences', 'update', 'partner-feed', '--enable'])).code).toBe(0);
    expect((await current.stack.dependencies.state.findDelivered(parked)).size).toBe(0);

    // Someone subscribes to the new topic: now they go out, each once.
    const audience = await current.audience('partner-feed');
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `${current.prefix}partner-again` }));
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
    await sns.send(
      new SubscribeCommand({
        TopicArn: String(audience?.topicArn),
        Protocol: 'sqs',
        Endpoint: Attributes?.QueueArn,
        Attributes: { RawMessageDelivery: 'true' },
      }),
    );
    const replay = await current.cli(['--json', 'replay', '--parked', '--audience', 'partner-feed']);
    expect(replay.code, replay.stderr).toBe(0);
    const received = (await drainQueue(sqs, String(QueueUrl))).map(deliveryIdOfBody).sort();
    expect(received).toEqual(parked.map((record) => `partner-feed|${record.articleKey}`).sort());
    expect(await current.stack.dependencies.state.listUndeliverable('partner-feed')).toEqual([]);

    // Nothing parked is left: a window replay with the flag replays as any other.
    const windowReplay = await current.cli(['replay', '--from', '1h', '--to-topic-without-subscribers']);
    expect(windowReplay.code, windowReplay.stderr).toBe(0);
    expect(windowReplay.stderr).not.toContain('parked alert(s)');
  });

  it('sends parked alerts once the audience points at a working topic, and keeps them parked until then', async () => {
    const { current, parked, sns, sqs } = await partnerFeedParked();

    // Still broken: nothing is lost, everything stays parked, exit 1.
    const stillBroken = await current.cli(['--json', 'replay', '--parked', '--audience', 'partner-feed']);
    expect(stillBroken.code).toBe(1);
    expect(stillBroken.stderr).toContain('stay parked');
    // One document under --json: the failure with what the replay did (not a result, then a failure).
    expect(stillBroken.json()).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('stay parked') },
      audiences: [expect.objectContaining({ audienceId: 'partner-feed', stillParked: parked.length })],
    });
    expect(await current.stack.dependencies.state.listUndeliverable('partner-feed')).toHaveLength(parked.length);

    // Fix: a new topic (with a queue to see what arrives), and the audience pointed at it.
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: `${current.prefix}partner-fixed` }));
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `${current.prefix}partner-fixed` }));
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
    await sns.send(
      new SubscribeCommand({
        TopicArn,
        Protocol: 'sqs',
        Endpoint: Attributes?.QueueArn,
        Attributes: { RawMessageDelivery: 'true' },
      }),
    );
    const repoint = await current.cli(['audiences', 'update', 'partner-feed', '--topic-arn', String(TopicArn)]);
    expect(repoint.code, repoint.stderr).toBe(0);

    const dryRun = await current.cli(['--json', 'replay', '--parked', '--dry-run']);
    expect(
      byAudience(dryRun.json<{ audiences: { audienceId: string; wouldSend: number }[] }>().audiences)['partner-feed']
        ?.wouldSend,
    ).toBe(parked.length);
    const replay = await current.cli(['--json', 'replay', '--parked']);
    expect(replay.code, replay.stderr).toBe(0);
    expect(
      byAudience(replay.json<{ audiences: { audienceId: string; sent: number }[] }>().audiences)['partner-feed']?.sent,
    ).toBe(parked.length);
    const received = (await drainQueue(sqs, String(QueueUrl))).map(deliveryIdOfBody).sort();
    expect(received).toEqual(parked.map((record) => `partner-feed|${record.articleKey}`).sort());
    expect(await current.stack.dependencies.state.listUndeliverable('partner-feed')).toEqual([]);

    // Nothing is left to send, and the ledger knows them now.
    const again = await current.cli(['--json', 'replay', '--parked']);
    expect(
      byAudience(again.json<{ audiences: { audienceId: string; parked: number }[] }>().audiences)['partner-feed']
        ?.parked,
    ).toBe(0);
    expect((await current.stack.dependencies.state.findDelivered(parked)).size).toBe(parked.length);

    // Each replay --parked that sent (or tried to) is in the run history, newest first; the dry run is not.
    const runs = await current.cli(['--json', 'runs', 'list']);
    const replays = runs
      .json<{ kind: string; status: string; published?: number; parked?: number; reason?: string }[]>()
      .filter((run) => run.kind === 'replay --parked');
    expect(replays).toEqual([
      expect.objectContaining({ status: 'completed', published: 0, parked: 0 }),
      expect.objectContaining({ status: 'completed', published: parked.length, parked: 0 }),
      expect.objectContaining({
        status: 'incomplete',
        published: 0,
        parked: parked.length,
        reason: expect.stringContaining('stay parked'),
      }),
    ]);
    const table = await current.cli(['runs', 'list']);
    expect(table.stdout).toMatch(/\treplay --parked\tcompleted\t/);
  });

  it('a replay the provider stops halfway still records in the ledger every alert it sent', async () => {
    // A long ledger flush delay: only the replay's own flush can write the last records before it
    // exits, as with a process that ends right after the error.
    // Enough articles that full batches are published before the provider fails on page 16.
    const current = await startCliSandbox({
      environment: { NEWS_API_PAGE_SIZE: '25', LEDGER_FLUSH_DELAY_MS: '10000' },
      simulator: { seed: 11, generate: { days: 1, perDay: 1200 } },
    });
    sandbox = current;
    const simulator = current.stack.simulator;
    if (!simulator) throw new Error('the sandbox has a simulator');
    const to = new Date(Date.now()).toISOString();
    const from = new Date(Date.now() - 20 * 60 * 60_000).toISOString();
    simulator.faults.inject({ kind: 'status', status: 503, times: 100, page: 16 });

    const replay = await current.cli(['--json', 'replay', '--from', from, '--to', to]);
    expect(replay.code, `${replay.stdout.slice(0, 600)}\n${replay.stderr.slice(0, 600)}`).toBe(1);
    const sent = (await current.stack.collectDeliveries()).map((delivery) => ({
      audienceId: delivery.audienceId,
      articleKey: delivery.articleKey,
    }));
    expect(sent.length).toBeGreaterThan(0);
    const recorded = await current.stack.dependencies.state.findDelivered(sent);
    expect(sent.filter((key) => !recorded.has(`${key.audienceId}|${key.articleKey}`))).toEqual([]);
    // The run history says why the replay is incomplete, not only that it is.
    const [last] = (await current.cli(['--json', 'runs', 'list', '--limit', '1'])).json<
      { kind: string; status: string; reason?: string }[]
    >();
    expect(last).toMatchObject({ kind: 'replay', status: 'incomplete', reason: expect.stringContaining('503') });
  });
});
