/**
 * Subscriber records as hand edits and earlier releases leave them (functions/aws/
 * dynamo-subscriber-records.ts): whatever a record's attributes hold, `list` reads it without
 * throwing, an `endpointRef` is a digest or absent, and only records holding an HTTPS URL in
 * clear are offered to the migration; replacing one by a reference keeps what it said and never
 * brings back a record removed meanwhile.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DynamoSubscriberRecords, endpointDigest } from '#aws/dynamo-subscriber-records';
import { createTables, tableNamesFor } from '#sandbox/tables';
import { awsClients, uniquePrefix } from '#test/aws';

async function setup() {
  const clients = awsClients();
  const names = tableNamesFor(uniquePrefix());
  await createTables(clients.dynamo, names);
  return {
    clients,
    table: names.state,
    records: new DynamoSubscriberRecords({ documents: clients.documents, tableName: names.state }),
  };
}

const attribute = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 32, maxLength: 32 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }),
);

describe('subscriber records written by hand', () => {
  it('are read without throwing; a reference is a digest or absent; only clear HTTPS URLs are offered to migrate', async () => {
    const { clients, table, records } = await setup();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            protocol: fc.oneof(fc.constantFrom('email', 'sms', 'https', 'sqs', 'slack'), fc.string({ maxLength: 6 })),
            endpoint: attribute,
            endpointRef: attribute,
            shown: attribute,
            raw: attribute,
            addedAt: attribute,
            addedBy: attribute,
          },
          { requiredKeys: ['protocol'] },
        ),
        async (attributes) => {
          n += 1;
          const audienceId = `hand-${n}`;
          await clients.documents.send(
            new PutCommand({
              TableName: table,
              Item: { pk: `subscribers#${audienceId}`, sk: `x#${n}`, audienceId, ...attributes },
            }),
          );
          const listed = await records.list(audienceId);
          expect(listed.length).toBeLessThanOrEqual(1);
          for (const record of listed) {
            expect(record.endpointRef === undefined || /^[0-9a-f]{32}$/.test(record.endpointRef)).toBe(true);
            expect(record.endpoint === undefined || typeof record.endpoint === 'string').toBe(true);
          }
          const offered = (await records.withUrlsInClear()).filter((record) => record.audienceId === audienceId);
          const clearHttps = attributes.protocol === 'https' && typeof attributes.endpoint === 'string';
          expect(offered.length).toBe(clearHttps ? 1 : 0);
          // Moved to a reference, the URL is gone from the table and the record still reads.
          for (const record of offered) {
            expect(await records.replaceEndpointByRef(record, 'https://shown.example/…')).toBe(true);
            expect(await records.list(audienceId)).toEqual([
              expect.objectContaining({
                protocol: 'https',
                endpoint: undefined,
                endpointRef: endpointDigest(record.endpoint),
              }),
            ]);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a record replaced by a reference keeps what it said, under the key remove uses; one removed meanwhile is not brought back', async () => {
    const { clients, table, records } = await setup();
    const url = 'https://hooks.example.com/t/SeCrEt';
    // As an earlier release wrote it, and one written by hand under another sort key.
    const earlier = { audienceId: 'a', protocol: 'https', endpoint: url, raw: true, addedAt: 5, addedBy: 'ops' };
    await clients.documents.send(
      new PutCommand({
        TableName: table,
        Item: { pk: 'subscribers#a', sk: `https#${endpointDigest(url)}`, ...earlier },
      }),
    );
    await clients.documents.send(
      new PutCommand({ TableName: table, Item: { pk: 'subscribers#b', sk: 'by-hand', ...earlier, audienceId: 'b' } }),
    );
    const clear = await records.withUrlsInClear();
    expect(clear.map((record) => record.audienceId).sort()).toEqual(['a', 'b']);
    for (const record of clear)
      expect(await records.replaceEndpointByRef(record, 'https://hooks.example.com/…')).toBe(true);
    for (const audienceId of ['a', 'b']) {
      expect(await records.list(audienceId)).toEqual([
        {
          audienceId,
          protocol: 'https',
          endpoint: undefined,
          endpointRef: endpointDigest(url),
          shown: 'https://hooks.example.com/…',
          raw: true,
          addedAt: 5,
          addedBy: 'ops',
          storedKey: { pk: `subscribers#${audienceId}`, sk: `https#${endpointDigest(url)}` },
        },
      ]);
    }
    expect(await records.withUrlsInClear()).toEqual([]);
    // Already a reference: not replaced again; and removed by the key `subscriptions remove` computes.
    for (const record of clear) expect(await records.replaceEndpointByRef(record, 'x')).toBe(false);
    await records.remove('b', 'https', url);
    expect(await records.list('b')).toEqual([]);
    expect(
      await records.replaceEndpointByRef(clear.find((record) => record.audienceId === 'a') ?? clear[0]!, 'x'),
    ).toBe(false);
    await records.remove('a', 'https', url);
    for (const record of clear) expect(await records.replaceEndpointByRef(record, 'x')).toBe(false);
    expect([...(await records.list('a')), ...(await records.list('b'))]).toEqual([]);
  });

  it('refuses to record an HTTPS URL in clear', async () => {
    const { records } = await setup();
    await expect(
      records.add({ audienceId: 'a', protocol: 'https', endpoint: 'https://x.example/t', addedAt: 1, addedBy: 'ops' }),
    ).rejects.toThrow('an https record keeps endpointRef and shown, not the URL');
    expect(await records.list('a')).toEqual([]);
  });
});
