/**
 * `news-alerts replay` from a real CLI process keeps delivery preferences (issue 10, item 6): an
 * audience in digest mode gets no immediate alert from a replay; its matches are held for its
 * digest, with their ledger entries, and the report says so. (Quiet hours and the release of
 * held matches, which need a pinned clock, are in test/integration/replay-preferences.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleAudiences } from '#sandbox/examples';
import { type CliSandbox, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
beforeAll(async () => {
  sandbox = await startCliSandbox({
    // Its own moto: `deliveries` reads moto's state dump (see startCliSandbox).
    ownMoto: true,
    audiences: exampleAudiences.map((audience) => ({
      item:
        audience.item.audienceId === 'chips-team'
          ? { ...audience.item, deliveryMode: 'digest', digestTimes: ['08:00'] }
          : audience.item,
      subscribers: [],
    })),
  });
});
afterAll(async () => {
  await sandbox?.stop();
});

interface ReplayJson {
  published: number;
  held: number;
  heldForDigest: number;
  audiences: {
    audienceId: string;
    matched: number;
    published: number;
    held: number;
    alreadyDelivered: number;
    alreadyHeld: number;
    /** Copies of a story the audience already has (collapse: story): recorded, neither sent nor held. */
    collapsed: number;
  }[];
}

describe('replay and delivery preferences', () => {
  it('holds the matches of a digest-only audience for its digest instead of alerting it at once', async () => {
    const replay = await sandbox.cli(['--json', 'replay', '--from', '2d']);
    expect(replay.code, replay.stderr).toBe(0);
    const result = replay.json<ReplayJson>();
    const chips = result.audiences.find((row) => row.audienceId === 'chips-team');
    expect(chips?.matched).toBeGreaterThan(0);
    const collapsed = chips?.collapsed ?? 0;
    const held = (chips?.matched ?? 0) - collapsed;
    expect(held).toBeGreaterThan(0);
    expect(chips).toMatchObject({ published: 0, held });
    expect(result.heldForDigest).toBe(held);
    // The other audiences are immediate: the replay alerted them as the run would.
    expect(result.published).toBeGreaterThan(0);

    const delivered = await sandbox.stack.collectDeliveries();
    const immediate = delivered.filter(
      (delivery) =>
        delivery.audienceId === 'chips-team' && (delivery.body.newsAlerts as { kind?: string }).kind !== 'digest',
    );
    expect(immediate).toEqual([]);
    // Held and recorded: the ledger counts them as handled, so the next run holds nothing twice.
    const next = await sandbox.stack.run();
    const again = next.audiences['chips-team'];
    expect(again).toMatchObject({ published: 0, held: 0 });
    expect(again?.alreadyDelivered).toBe(again?.matched);

    // A dry run tells matches waiting for the digest (ALREADY HELD, with the reason) from
    // alerts already delivered: nobody received the held ones yet.
    const dry = await sandbox.cli(['--json', 'replay', '--from', '2d', '--dry-run', '--audience', 'chips-team']);
    expect(dry.code, dry.stderr).toBe(0);
    const [row] = dry.json<ReplayJson>().audiences;
    // Collapsed copies are handled in the ledger too: they count as already delivered.
    expect(row).toMatchObject({
      audienceId: 'chips-team',
      alreadyDelivered: collapsed,
      alreadyHeld: held,
      alreadyHeldBy: { digest: held, 'quiet-hours': 0, budget: 0 },
    });
    const table = await sandbox.cli(['replay', '--from', '2d', '--dry-run', '--audience', 'chips-team']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain('ALREADY HELD');
    expect(table.stdout).toContain(`${held} (digest ${held})`);
  });

  it('subscribes the audit queue of an audience created with the CLI before replaying to it', async () => {
    expect((await sandbox.cli(['audiences', 'create', 'rates-replay'])).code).toBe(0);
    const rules = sandbox.file(
      'rates-replay.yaml',
      'ruleId: rates-replay-all\naudienceId: rates-replay\ncategories: ["002*"]\n',
    );
    expect((await sandbox.cli(['rules', 'put', '--file', rules])).code).toBe(0);
    const replay = await sandbox.cli(['--json', 'replay', '--from', '2d', '--audience', 'rates-replay']);
    expect(replay.code, replay.stderr).toBe(0);
    const published = replay.json<ReplayJson>().published;
    expect(published).toBeGreaterThan(0);
    const shown = await sandbox.cli(['--json', 'deliveries', 'rates-replay']);
    expect(shown.json<{ audiences: { total: number }[] }>().audiences[0]?.total).toBe(published);
  });
});
