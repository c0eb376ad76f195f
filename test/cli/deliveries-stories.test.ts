/**
 * `news-alerts deliveries <audienceId> --article <key>` against moto server and the real CLI
 * process: the delivery ledger's answer to "why did I not get this copy". Ledger entries are
 * written with the state store itself (as the delivery pipeline writes them), and the command
 * must say for each key: sent (as a story's lead), held, collapsed into a story with its lead and
 * when the lead went out, a story marker, an update notice, or not in the ledger. `preview` and
 * `replay` count copies of a story the audience already has (a story marker in the ledger with
 * another lead) as collapsed, not as alerts, and a replay records them so. Plus a property
 * test: whatever keys and entries the ledger holds, the explanation never throws and never claims
 * an entry that is not there.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoStateStore } from '#aws/dynamo-state-store';
import { type DeliveryRecord, deliveryId } from '#core/ports';
import { storyIdOf } from '#core/story';
import { exampleAudiences } from '#sandbox/examples';
import { formatInstant } from '../../cli/output.ts';
import { ledgerState } from '../../cli/workbench/ledger-state.ts';
import { type CliSandbox, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
beforeAll(async () => {
  // Its own moto: `deliveries` reads moto's state dump (see startCliSandbox).
  sandbox = await startCliSandbox({ ownMoto: true });
});
afterAll(async () => {
  await sandbox?.stop();
});

interface LedgerJson {
  audienceId: string;
  articles: { articleKey: string; kind: string; status: string; storyId?: string; leadArticleKey?: string }[];
}

describe('deliveries --article (the delivery ledger)', () => {
  it('shows a collapsed copy with its story, its lead and when the lead was sent; markers and notices read as such', async () => {
    const audienceId = exampleAudiences[0]?.item.audienceId as string;
    const state = new DynamoStateStore({
      documents: sandbox.stack.clients.documents,
      tableName: sandbox.descriptor.names.stateTable,
    });
    // Relative to now, never a fixed date: the ledger's TTL is counted from deliveredAt.
    const markedAt = Date.now() - 60 * 60_000;
    const sentAt = markedAt + 1_000;
    const collapsedAt = markedAt + 20 * 60_000;
    const storyId = '9f2c4e1ab03d77e0';
    const base = { audienceId, ruleIds: ['chips'], storyId, status: '', titleHash: 'abc' };
    const entries: DeliveryRecord[] = [
      {
        audienceId,
        articleKey: `story:${storyId}`,
        deliveredAt: markedAt,
        ruleIds: [],
        storyId,
        leadArticleKey: 'id:lead-1',
      },
      { ...base, articleKey: 'id:lead-1', deliveredAt: sentAt, messageId: 'message-1' },
      { ...base, articleKey: 'id:copy-2', deliveredAt: collapsedAt, collapsedInto: storyId },
      {
        audienceId,
        articleKey: `update:${storyId}#status=UPDATED`,
        deliveredAt: collapsedAt,
        ruleIds: ['chips'],
        messageId: 'message-2',
      },
    ];
    await state.recordDelivered(entries);
    // Held for its digest, as a run holds it: the held item and its ledger entry together (a held
    // entry with nothing held reads as released by an older release).
    await state.holdNotifications([
      {
        key: { audienceId, articleKey: 'id:held-3' },
        heldAt: sentAt,
        reason: 'digest',
        ruleIds: ['chips'],
        match: {
          audienceId,
          storyId: 'aaaabbbbccccdddd',
          article: {
            key: 'id:held-3',
            id: 'held-3',
            title: 'Held for the digest',
            summary: '',
            url: 'https://news.example.com/held-3',
            publishedAt: sentAt - 60_000,
            categories: [],
            categoryNames: [],
          },
          rules: [{ ruleId: 'chips', urgent: false, reasons: [{ kind: 'keyword', term: 'chips' }] }],
        },
      },
    ]);

    const keys = [
      'id:copy-2',
      'id:lead-1',
      'id:held-3',
      `story:${storyId}`,
      `update:${storyId}#status=UPDATED`,
      'id:never',
    ];
    const [table, json] = await Promise.all([
      sandbox.cli(['deliveries', audienceId, '--article', keys.join(',')], { env: { COLUMNS: '400' } }),
      sandbox.cli([
        '--json',
        'deliveries',
        audienceId,
        '--article',
        keys[0] as string,
        '--article',
        keys.slice(1).join(','),
      ]),
    ]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain(
      `collapsed into story ${storyId} (lead id:lead-1, sent ${formatInstant(sentAt)}): this copy was not sent`,
    );
    expect(table.stdout).toContain(`sent ${formatInstant(sentAt)} as the lead of story ${storyId}`);
    expect(table.stdout).toContain(`held for its digest since ${formatInstant(sentAt)}`);
    expect(table.stdout).toContain(`story marker: story ${storyId} is carried by id:lead-1`);
    expect(table.stdout).toContain(
      `update notice (status UPDATED) for story ${storyId}: sent ${formatInstant(collapsedAt)}`,
    );
    expect(table.stdout).toContain('not in the ledger');

    expect(json.code, json.stderr).toBe(0);
    const document = json.json<LedgerJson>();
    expect(document.audienceId).toBe(audienceId);
    expect(document.articles.map((entry) => [entry.articleKey, entry.kind])).toEqual([
      ['id:copy-2', 'collapsed'],
      ['id:lead-1', 'sent'],
      ['id:held-3', 'held'],
      [`story:${storyId}`, 'story-marker'],
      [`update:${storyId}#status=UPDATED`, 'update-notice'],
      ['id:never', 'not-in-ledger'],
    ]);
    expect(document.articles[0]).toMatchObject({ storyId, leadArticleKey: 'id:lead-1' });

    // A provider id alone is the article key id:…, as rules explain and articles show take it.
    const byProviderId = await sandbox.cli(['--json', 'deliveries', audienceId, '--article', 'lead-1']);
    expect(byProviderId.code, byProviderId.stderr).toBe(0);
    expect(byProviderId.json<LedgerJson>().articles.map((entry) => [entry.articleKey, entry.kind])).toEqual([
      ['id:lead-1', 'sent'],
    ]);
    expect(byProviderId.stderr).toContain('read "lead-1" as the article key "id:lead-1"');
  });

  it("a copy whose lead is not in the ledger, or never carried the story, says a re-read sends it; one goes with its own lead, not the marker's", async () => {
    const audienceId = exampleAudiences[0]?.item.audienceId as string;
    const state = new DynamoStateStore({
      documents: sandbox.stack.clients.documents,
      tableName: sandbox.descriptor.names.stateTable,
    });
    const at = Date.now() - 5 * 60_000;
    await state.recordDelivered([
      {
        audienceId,
        articleKey: 'story:0123456789abcdef',
        deliveredAt: at,
        ruleIds: [],
        leadArticleKey: 'id:lead-pending',
      },
      // From before collapsedLead: the marker (no younger than the copy) names its lead.
      { audienceId, articleKey: 'id:copy-pending', deliveredAt: at, ruleIds: [], collapsedInto: '0123456789abcdef' },
      // Its own lead, which a later run recorded as a collapsed copy itself.
      {
        audienceId,
        articleKey: 'id:copy-own',
        deliveredAt: at,
        ruleIds: [],
        collapsedInto: '0123456789abcdef',
        collapsedLead: 'id:first-lead',
      },
      {
        audienceId,
        articleKey: 'id:first-lead',
        deliveredAt: at,
        ruleIds: [],
        collapsedInto: '0123456789abcdef',
        collapsedLead: 'id:lead-pending',
      },
    ]);
    const result = await sandbox.cli(['deliveries', audienceId, '--article', 'id:copy-pending,id:copy-own'], {
      env: { COLUMNS: '400' },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      'collapsed into story 0123456789abcdef (lead id:lead-pending, not in the ledger: queued for a publisher still, or it never reached the audience and a run that reads this copy again sends it, and it carries the story)',
    );
    expect(result.stdout).toContain(
      'collapsed into story 0123456789abcdef (lead id:first-lead, itself recorded as a collapsed copy of story 0123456789abcdef, so it never carried the story: a run that reads this copy again sends it, and it carries the story)',
    );
  });

  it('--article needs the audience (exit 2)', async () => {
    const result = await sandbox.cli(['deliveries', '--article', 'id:x']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `news-alerts --sandbox-file ${sandbox.descriptorPath} deliveries <audienceId> --article <articleKey>`,
    );
  });
});

interface PreviewJson {
  notifications: number;
  collapsed: number;
  audiences: { audienceId: string; notifications: number; collapsed: number; collapsedIntoSent: number }[];
  samples: Record<string, { articleKey: string }>;
}

interface ReplayJson {
  wouldCollapse: number;
  collapsed: number;
  wouldPublish: number;
  audiences: { audienceId: string; collapsed: number }[];
}

describe('preview and replay with stories', () => {
  it('count a copy of a story the audience already has as collapsed, and a replay records it so', async () => {
    const audienceId = 'markets-desk';
    const updated = await sandbox.cli(['audiences', 'update', audienceId, '--collapse', 'story']);
    expect(updated.code, updated.stderr).toBe(0);
    const previewArgs = ['--json', 'preview', '--from', '2d', '--audience', audienceId];
    const before = await sandbox.cli(previewArgs);
    expect(before.code, before.stderr).toBe(0);
    const first = before.json<PreviewJson>();
    const row = first.audiences.find((entry) => entry.audienceId === audienceId);
    const sampleKey = first.samples[audienceId]?.articleKey as string;
    expect(row?.notifications).toBeGreaterThan(0);
    expect(row?.collapsedIntoSent).toBe(0);

    // The audience was sent this story before, carried by another outlet's copy: the story marker
    // the pipeline writes before it sends a story's lead. The sample starts its own story in this
    // fresh sandbox, so its story id is the one of a lead.
    const storyId = storyIdOf(sampleKey);
    const state = new DynamoStateStore({
      documents: sandbox.stack.clients.documents,
      tableName: sandbox.descriptor.names.stateTable,
    });
    await state.recordDelivered([
      {
        ...{ audienceId, articleKey: `story:${storyId}` },
        deliveredAt: Date.now() - 60_000,
        ruleIds: [],
        storyId,
        leadArticleKey: 'id:elsewhere-lead',
      },
    ]);
    // A marker alone says the lead was about to go out, not that it did (its publish may have
    // failed): the run would send the copy, so the preview counts it as an alert.
    const markerOnly = await sandbox.cli(previewArgs);
    expect(markerOnly.code, markerOnly.stderr).toBe(0);
    expect(markerOnly.json<PreviewJson>().audiences.find((entry) => entry.audienceId === audienceId)).toMatchObject({
      notifications: row?.notifications,
      collapsed: row?.collapsed,
      collapsedIntoSent: 0,
    });
    // The lead's own entry: now the story reached the audience.
    await state.recordDelivered([
      { audienceId, articleKey: 'id:elsewhere-lead', deliveredAt: Date.now() - 60_000, ruleIds: [], storyId },
    ]);

    const [after, text] = await Promise.all([
      sandbox.cli(previewArgs),
      sandbox.cli(['--output', 'table', ...previewArgs.slice(1)], { env: { COLUMNS: '300' } }),
    ]);
    expect(after.code, after.stderr).toBe(0);
    const second = after.json<PreviewJson>().audiences.find((entry) => entry.audienceId === audienceId);
    expect(second?.notifications).toBe((row?.notifications ?? 0) - 1);
    expect(second?.collapsed).toBe((row?.collapsed ?? 0) + 1);
    // Every copy of that story in the window now collapses into the sent story (the one that was
    // its lead before, and any that had collapsed into it in the window).
    expect(second?.collapsedIntoSent).toBeGreaterThanOrEqual(1);
    expect(text.stdout).toMatch(
      new RegExp(`${audienceId}: \\d+ cop(y|ies) would collapse \\(\\d+ into stories already sent`),
    );

    const dryRun = await sandbox.cli(['--json', 'replay', '--from', '2d', '--audience', audienceId, '--dry-run']);
    expect(dryRun.code, dryRun.stderr).toBe(0);
    // The dry run's story index remembers what it would have filed, so copies on later provider
    // pages collapse as in the real replay below.
    const wouldCollapse = dryRun.json<ReplayJson>().wouldCollapse;
    expect(wouldCollapse).toBe(second?.collapsed);
    expect(dryRun.json<ReplayJson>().wouldPublish + wouldCollapse).toBe(
      (second?.notifications ?? 0) + (second?.collapsed ?? 0),
    );

    const replayed = await sandbox.cli(['--json', 'replay', '--from', '2d', '--audience', audienceId]);
    expect(replayed.code, replayed.stderr).toBe(0);
    const replay = replayed.json<ReplayJson>();
    expect(replay.collapsed).toBe(second?.collapsed);
    expect(replay.audiences.find((entry) => entry.audienceId === audienceId)?.collapsed).toBe(second?.collapsed);

    const why = await sandbox.cli(['deliveries', audienceId, '--article', sampleKey], { env: { COLUMNS: '400' } });
    expect(why.code, why.stderr).toBe(0);
    expect(why.stdout).toContain(`collapsed into story ${storyId} (lead id:elsewhere-lead, sent `);
  });
});

describe('ledgerState', () => {
  const key = fc.oneof(
    fc.string(),
    fc.string().map((text) => `id:${text}`),
    fc.string().map((text) => `story:${text}`),
    fc.tuple(fc.string(), fc.string()).map(([subject, change]) => `update:${subject}#${change}`),
  );
  const entry = fc.record(
    {
      articleKey: key,
      deliveredAt: fc.oneof(fc.integer(), fc.constant(Number.NaN)),
      heldFor: fc.constantFrom('digest' as const, 'quiet-hours' as const, 'budget' as const),
      collapsedInto: fc.string(),
      storyId: fc.string(),
      leadArticleKey: key,
      releasedAt: fc.oneof(fc.integer(), fc.constant(Number.NaN)),
      releasedIn: fc.string(),
      releaseOutcome: fc.constantFrom('sent' as const, 'parked' as const, 'dropped' as const),
      releaseCause: fc.constantFrom('due' as const, 'settings-changed' as const),
    },
    { requiredKeys: ['articleKey', 'deliveredAt'] },
  );

  it('never throws on any keys and entries, and says "not in the ledger" exactly when the key has no entry', () => {
    fc.assert(
      fc.property(key, fc.array(entry, { maxLength: 6 }), (articleKey, stored) => {
        const entries = new Map(
          stored.map((record) => [
            deliveryId({ audienceId: 'a', articleKey: record.articleKey }),
            { ...record, audienceId: 'a', ruleIds: [] },
          ]),
        );
        const state = ledgerState('a', articleKey, entries);
        expect(state.kind === 'not-in-ledger').toBe(!entries.has(deliveryId({ audienceId: 'a', articleKey })));
        expect(state.status.length).toBeGreaterThan(0);
      }),
    );
  });

  it('reads the change of an update notice key in words', () => {
    const notice = (change: string) => {
      const articleKey = `update:s1#${change}`;
      const entries = new Map([
        [deliveryId({ audienceId: 'a', articleKey }), { audienceId: 'a', articleKey, deliveredAt: 0, ruleIds: [] }],
      ]);
      return ledgerState('a', articleKey, entries).status;
    };
    expect(notice('title=1k2j3h')).toContain('(headline changed) for story s1');
    expect(notice('status=UPDATED')).toContain('(status UPDATED) for story s1');
  });
});
