/**
 * An audience's story settings (`collapse`, `updates`) through the ops CLI, against moto server
 * and the real `news-alerts` process: new audiences collapse stories unless told otherwise (from
 * flags or a file), the flags round-trip through create, update, list, show and export, `--clear`
 * returns to what an item without the attribute means (marked `(default)`), and a bad value is
 * refused with a message naming the attribute and its choices, before anything is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSandbox, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
const audience = (id: string) => sandbox.audience(id);

// One sandbox for the file: every test works on audiences of its own ids.
beforeAll(async () => {
  sandbox = await startCliSandbox();
});
afterAll(async () => {
  await sandbox?.stop();
});

interface ListRow {
  audienceId: string;
  collapse: string;
  collapseFromDefault: boolean;
  updates: string;
  updatesFromDefault: boolean;
}

describe('audiences --collapse and --updates', () => {
  it('a new audience collapses stories by default; the flags set, show, list, update and clear both', async () => {
    const created = await sandbox.cli(['audiences', 'create', 'story-desk']);
    expect(created.code, created.stderr).toBe(0);
    expect(await audience('story-desk')).toMatchObject({ collapse: 'story', updates: 'ignore' });

    const every = await sandbox.cli(['audiences', 'create', 'every-copy', '--collapse', 'none', '--updates', 'notify']);
    expect(every.code, every.stderr).toBe(0);
    expect(await audience('every-copy')).toMatchObject({ collapse: 'none', updates: 'notify' });

    const updated = await sandbox.cli([
      'audiences',
      'update',
      'story-desk',
      '--collapse',
      'none',
      '--updates',
      'notify',
    ]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).toMatch(/collapse.*story.*none/);
    expect(updated.stdout).toMatch(/updates.*ignore.*notify/);
    expect(await audience('story-desk')).toMatchObject({ collapse: 'none', updates: 'notify' });

    const shown = await sandbox.cli(['audiences', 'show', 'story-desk']);
    expect(shown.stdout).toMatch(/collapse\s+none\n/);
    expect(shown.stdout).toMatch(/updates\s+notify\n/);
    const list = await sandbox.cli(['audiences', 'list'], { env: { COLUMNS: '250' } });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain('COLLAPSE');

    const exported = await sandbox.cli(['audiences', 'export', 'story-desk', '--format', 'json']);
    expect(JSON.parse(exported.stdout)).toMatchObject({ audiences: [{ collapse: 'none', updates: 'notify' }] });
  });

  it('an audience written before stories existed reads as collapse none and updates ignore, marked (default)', async () => {
    const created = await sandbox.cli(['audiences', 'create', 'old-desk']);
    expect(created.code, created.stderr).toBe(0);
    // What an item written by an older CLI looks like: neither attribute.
    const cleared = await sandbox.cli(['audiences', 'update', 'old-desk', '--clear', 'collapse,updates']);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(await audience('old-desk')).toMatchObject({ collapse: 'none', updates: 'ignore' });
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    await sandbox.stack.clients.documents.send(
      new UpdateCommand({
        TableName: sandbox.descriptor.names.audiencesTable,
        Key: { audienceId: 'old-desk' },
        UpdateExpression: 'REMOVE #collapse, #updates',
        ExpressionAttributeNames: { '#collapse': 'collapse', '#updates': 'updates' },
      }),
    );
    const [shown, showJson, listJson] = await Promise.all([
      sandbox.cli(['audiences', 'show', 'old-desk']),
      sandbox.cli(['--json', 'audiences', 'show', 'old-desk']),
      sandbox.cli(['--json', 'audiences', 'list']),
    ]);
    expect(shown.stdout).toMatch(/collapse\s+none \(default\)\n/);
    expect(shown.stdout).toMatch(/updates\s+ignore \(default\)\n/);
    expect(showJson.json()).toMatchObject({ collapse: 'none', collapseFromDefault: true, updatesFromDefault: true });
    const row = listJson.json<ListRow[]>().find((entry) => entry.audienceId === 'old-desk');
    expect(row).toMatchObject({ collapse: 'none', collapseFromDefault: true, updates: 'ignore' });
    const fresh = listJson.json<ListRow[]>().find((entry) => entry.audienceId === 'story-desk');
    expect(fresh?.collapseFromDefault).toBe(false);
  });

  it('audiences put gives a new audience collapse story unless the file says, and keeps a stored one', async () => {
    const file = sandbox.file(
      'audiences.yaml',
      ['audiences:', '  - audienceId: put-new', '  - audienceId: put-none', '    collapse: none', ''].join('\n'),
    );
    const put = await sandbox.cli(['audiences', 'put', '--file', file]);
    expect(put.code, put.stderr).toBe(0);
    expect(await audience('put-new')).toMatchObject({ collapse: 'story' });
    expect(await audience('put-none')).toMatchObject({ collapse: 'none' });
    // Replacing an existing audience from a file without the attribute is not "new": no default added.
    const again = sandbox.file(
      'again.yaml',
      ['audiences:', '  - audienceId: put-none', '    name: Again', ''].join('\n'),
    );
    const replaced = await sandbox.cli(['audiences', 'put', '--file', again]);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(await audience('put-none')).toMatchObject({ collapse: 'none', name: 'Again' });
  });

  it.each([
    {
      verb: 'create',
      args: ['create', 'bad-collapse', '--collapse', 'stories'],
      attribute: 'collapse',
      choices: '"story" or "none"',
    },
    {
      verb: 'create',
      args: ['create', 'bad-updates', '--updates', 'always'],
      attribute: 'updates',
      choices: '"ignore" or "notify"',
    },
    {
      verb: 'update',
      args: ['update', 'story-desk', '--collapse', 'yes'],
      attribute: 'collapse',
      choices: '"story" or "none"',
    },
    {
      verb: 'update',
      args: ['update', 'story-desk', '--updates', 'all'],
      attribute: 'updates',
      choices: '"ignore" or "notify"',
    },
  ])(
    '$verb refuses a bad --$attribute, naming the attribute and its choices once',
    async ({ args, attribute, choices }) => {
      const before = await audience('story-desk');
      const result = await sandbox.cli(['audiences', ...args]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`command line: audience "${args[1]}": ${attribute} must be ${choices}`);
      expect(result.stderr).toContain('nothing was');
      expect(await audience('bad-collapse')).toBeUndefined();
      expect(await audience('bad-updates')).toBeUndefined();
      expect(await audience('story-desk')).toEqual(before);
    },
  );
});
