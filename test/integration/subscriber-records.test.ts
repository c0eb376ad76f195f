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
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a record replaced by a reference keeps what it said; one removed meanwhile is not brought back', async () => {
    const { records } = await setup();
    const url = 'https://hooks.example.com/t/SeCrEt';
    const record = {
      audienceId: 'a',
      protocol: 'https' as const,
      endpoint: url,
      raw: true,
      addedAt: 5,
      addedBy: 'ops',
    };
    await records.add(record);
    expect(await records.replaceEndpointByRef(record, 'https://hooks.example.com/…')).toBe(true);
    expect(await records.list('a')).toEqual([
      {
        audienceId: 'a',
        protocol: 'https',
        endpoint: undefined,
        endpointRef: endpointDigest(url),
        shown: 'https://hooks.example.com/…',
        raw: true,
        addedAt: 5,
        addedBy: 'ops',
      },
    ]);
    // Already a reference: not replaced again.
    expect(await records.replaceEndpointByRef(record, 'x')).toBe(false);
    await records.remove('a', 'https', url);
    expect(await records.list('a')).toEqual([]);
    expect(await records.replaceEndpointByRef(record, 'x')).toBe(false);
    expect(await records.list('a')).toEqual([]);
  });
});
