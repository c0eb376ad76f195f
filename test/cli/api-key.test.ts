/**
 * `news-alerts api-key set|status` in a real process against a sandbox: the key goes from stdin
 * into the target's secret, never from argv, and nothing printed contains it.
 */
import { CreateSecretCommand, GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDescriptor } from '../../cli/sandbox-descriptor.ts';
import { type CliSandbox, runCli, startCliSandbox } from './support.ts';

let sandbox: CliSandbox;

beforeAll(async () => {
  sandbox = await startCliSandbox();
});

afterAll(async () => {
  await sandbox?.stop();
});

const storedKey = async (secretId = sandbox.descriptor.names.apiKeySecretId): Promise<string | undefined> =>
  (await sandbox.stack.clients.secrets.send(new GetSecretValueCommand({ SecretId: secretId }))).SecretString;

describe('api-key', () => {
  it('set stores the key read from stdin in the sandbox secret and prints nothing secret; status says it is set', async () => {
    const key = 'k3y-from-stdin-7f2a9c';
    const set = await sandbox.cli(['api-key', 'set'], { input: `${key}\n` });
    expect(set.code, set.stderr).toBe(0);
    expect(await storedKey()).toBe(key);
    expect(set.stdout).toContain(`stored the API key in ${sandbox.descriptor.names.apiKeySecretId}`);
    expect(set.stdout + set.stderr).not.toContain(key);

    const status = await sandbox.cli(['--json', 'api-key', 'status']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.json()).toMatchObject({ secretId: sandbox.descriptor.names.apiKeySecretId, set: true });
    expect(status.stdout + status.stderr).not.toContain(key);
  });

  it('accepts the {"apiKey": "…"} form the run reads too', async () => {
    const value = '{"apiKey": "json-form-key-1"}';
    const set = await sandbox.cli(['--json', 'api-key', 'set'], { input: value });
    expect(set.code, set.stderr).toBe(0);
    expect(set.json()).toMatchObject({ stored: true });
    expect(set.stdout).not.toContain('json-form-key-1');
    expect(await storedKey()).toBe(value);
  });

  it('refuses a key on the command line, empty input and input that is not one key, and changes nothing', async () => {
    const before = await storedKey();
    const onArgv = await sandbox.cli(['api-key', 'set', 'argv-key-123'], { input: 'stdin-key\n' });
    expect(onArgv.code).toBe(2);
    expect(onArgv.stderr).toContain('never from the command line');
    expect(onArgv.stderr).not.toContain('argv-key-123');

    const empty = await sandbox.cli(['api-key', 'set'], { input: '\n' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('no API key on stdin');

    const twoLines = await sandbox.cli(['api-key', 'set'], { input: 'first-half\nsecond-half\n' });
    expect(twoLines.code).toBe(2);
    expect(twoLines.stderr).toContain('pipe only the key');
    expect(twoLines.stderr).not.toContain('first-half');

    // Bytes that are not UTF-8 (a key saved in another encoding) once became U+FFFD in the secret,
    // and every run then failed on a header undici refuses to send.
    const [notUtf8, nonAscii] = await Promise.all([
      sandbox.cli(['api-key', 'set'], { input: Buffer.from('\xff\xfeSECRETBIN', 'latin1') }),
      sandbox.cli(['api-key', 'set'], { input: Buffer.from('caf\u00e9-key-42', 'utf8') }),
    ]);
    expect(notUtf8.code).toBe(2);
    expect(notUtf8.stderr).toContain('the input on stdin is not UTF-8 text');
    expect(nonAscii.code).toBe(2);
    expect(nonAscii.stderr).toContain('space, control or non-ASCII character (character 4)');
    for (const refused of [notUtf8, nonAscii]) expect(refused.stderr).not.toMatch(/SECRETBIN|key-42|\\x|0xFF/i);
    expect(await storedKey()).toBe(before);
  });

  it('status exits 3 for a secret created empty (as the stack creates it) and names the command that fills it', async () => {
    const emptySecret = `${sandbox.prefix}empty-api-key`;
    await sandbox.stack.clients.secrets.send(new CreateSecretCommand({ Name: emptySecret }));
    const path = sandbox.file('empty-secret.json', '');
    writeDescriptor(path, {
      ...sandbox.descriptor,
      names: { ...sandbox.descriptor.names, apiKeySecretId: emptySecret },
    });
    const status = await runCli(['--sandbox-file', path, 'api-key', 'status']);
    expect(status.code).toBe(3);
    expect(status.stderr).toContain(`no API key in ${emptySecret}`);
    expect(status.stderr).toContain('api-key set');

    const set = await runCli(['--sandbox-file', path, 'api-key', 'set'], { input: 'first-key-for-empty' });
    expect(set.code, set.stderr).toBe(0);
    expect(await storedKey(emptySecret)).toBe('first-key-for-empty');
    expect((await runCli(['--sandbox-file', path, 'api-key', 'status'])).code).toBe(0);
  });
});
