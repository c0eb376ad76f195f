/**
 * An audience's `locale` through the ops CLI, against moto server and the real `news-alerts`
 * process: set with `--locale`, refused with examples when it is no locale, unset with
 * `--clear locale`, shown with the stack default marked `(default)`, and the fallbacks its
 * subscribers get reported by `audiences validate` (and create/put/update) as warnings that leave
 * a valid file valid (exit 0) and appear in `--json` under `warnings`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSandbox, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;
const audience = (id: string) => sandbox.audience(id);

// One sandbox for the file: every test works on audiences of its own ids. Its default locale is
// Korean, so "the stack default" is visibly not the built-in en-US.
beforeAll(async () => {
  sandbox = await startCliSandbox({ environment: { DEFAULT_LOCALE: 'ko-KR' } });
});
afterAll(async () => {
  await sandbox?.stop();
});

interface ListRow {
  audienceId: string;
  locale: string;
  localeFromDefault: boolean;
}

describe('audiences --locale', () => {
  it('sets, shows, lists and clears a locale; an unset one reads as the stack default', async () => {
    const created = await sandbox.cli(['audiences', 'create', 'tokyo-desk', '--locale', 'ja-JP']);
    expect(created.code, created.stderr).toBe(0);
    expect(await audience('tokyo-desk')).toMatchObject({ locale: 'ja-JP' });

    const shown = await sandbox.cli(['audiences', 'show', 'tokyo-desk']);
    expect(shown.stdout).toMatch(/locale\s+ja-JP\n/);
    expect(shown.stdout).not.toContain('(default)');

    const updated = await sandbox.cli(['audiences', 'update', 'tokyo-desk', '--locale', 'en-GB']);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).toMatch(/locale.*ja-JP.*en-GB/);
    expect(await audience('tokyo-desk')).toMatchObject({ locale: 'en-GB' });

    const cleared = await sandbox.cli(['audiences', 'update', 'tokyo-desk', '--clear', 'locale']);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect((await audience('tokyo-desk'))?.locale).toBeUndefined();

    const [showDefault, showJson, list] = await Promise.all([
      sandbox.cli(['audiences', 'show', 'tokyo-desk']),
      sandbox.cli(['--json', 'audiences', 'show', 'tokyo-desk']),
      sandbox.cli(['--json', 'audiences', 'list']),
    ]);
    expect(showDefault.stdout).toMatch(/locale\s+ko-KR \(default\)\n/);
    expect(showJson.json()).toMatchObject({ locale: 'ko-KR', localeFromDefault: true });
    // The stored item stays as stored: `audiences put --file -` reads it back without a locale.
    expect(showJson.json<{ item: Record<string, unknown> }>().item.locale).toBeUndefined();
    const rows = list.json<ListRow[]>();
    expect(rows.find((row) => row.audienceId === 'tokyo-desk')).toMatchObject({
      locale: 'ko-KR',
      localeFromDefault: true,
    });
    expect(rows.find((row) => row.audienceId === 'chips-team')).toMatchObject({
      locale: 'ko-KR',
      localeFromDefault: false,
    });
    const text = await sandbox.cli(['audiences', 'list'], { env: { COLUMNS: '200' } });
    expect(text.stdout).toMatch(/tokyo-desk.*ko-KR \(default\)/);
  });

  it('refuses a value that is no locale, with examples, and writes nothing', async () => {
    const refused = await sandbox.cli(['audiences', 'create', 'bad-locale-desk', '--locale', 'ko_KR']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('locale: must be a BCP 47 locale');
    expect(refused.stderr).toContain('"ko-KR"');
    expect(await audience('bad-locale-desk')).toBeUndefined();

    // update says how many problems, as create and the file commands do.
    const badUpdate = await sandbox.cli(['audiences', 'update', 'markets-desk', '--locale', 'ko_KR']);
    expect(badUpdate.code).toBe(2);
    expect(badUpdate.stderr).toContain('audience markets-desk: 1 problem(s); nothing was written');
  });
});

describe('audiences validate: locale warnings', () => {
  const file = () =>
    sandbox.file(
      'locales.yaml',
      [
        'audiences:',
        '  - audienceId: paris-desk',
        '    locale: fr-FR',
        '  - audienceId: osaka-desk',
        '    locale: ja-JP',
        '    templates:',
        '      locales:',
        '        ko:',
        '          subject: "[속보] {headline}"',
        '  - audienceId: plain-desk',
        '',
      ].join('\n'),
    );

  it('warns what subscribers get and what to add, and the valid file stays valid (exit 0)', async () => {
    const result = await sandbox.cli(['audiences', 'validate', file()]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      'locales.yaml:3: audience "paris-desk": locale fr-FR: no French messages; subscribers get Korean words with French dates (shipped: en, ko, ja)',
    );
    expect(result.stderr).toMatch(
      /locales\.yaml:\d+: audience "osaka-desk": templates\.locales has subject for ko but not for ja-JP: its subscribers get the ko one; add templates\.locales\.ja\.subject/,
    );
    expect(result.stderr).not.toContain('plain-desk');
    expect(result.stderr).toContain('3 audience(s) valid, 2 warning(s)');
  });

  it('puts the warnings in the --json document under "warnings", exit code unchanged', async () => {
    const result = await sandbox.cli(['--json', 'audiences', 'validate', file()]);
    expect(result.code, result.stderr).toBe(0);
    const document = result.json<{ valid: boolean; warnings: string[]; audiences: unknown[] }>();
    expect(document.valid).toBe(true);
    expect(document.audiences).toHaveLength(3);
    expect(document.warnings).toHaveLength(2);
    expect(document.warnings[0]).toMatch(/paris-desk.*no French messages/);
    expect(document.warnings[1]).toMatch(/osaka-desk.*add templates\.locales\.ja\.subject/);

    const clean = await sandbox.cli([
      '--json',
      'audiences',
      'validate',
      sandbox.file('clean.yaml', 'audienceId: seoul-desk\nlocale: ko-KR\n'),
    ]);
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.json()).toMatchObject({ valid: true, warnings: [] });
  });

  it('create and update warn the same way and still write', async () => {
    const created = await sandbox.cli(['--json', 'audiences', 'create', 'lyon-desk', '--locale', 'fr-FR']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain('locale fr-FR: no French messages');
    expect(created.json<{ warnings: string[] }>().warnings).toHaveLength(1);
    expect(await audience('lyon-desk')).toMatchObject({ locale: 'fr-FR' });
    const updated = await sandbox.cli(['audiences', 'update', 'lyon-desk', '--locale', 'de-DE']);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stderr).toContain(
      'locale de-DE: no German messages; subscribers get Korean words with German dates',
    );
  });
});
