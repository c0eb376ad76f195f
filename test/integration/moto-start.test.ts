/**
 * How sandbox/moto.ts starts moto server (for the tests, `npm start`, the sandbox and the bench).
 * It used to pick a free port, close it and start moto on it: on a busy machine another process
 * could take the port in between, and moto died with "Address already in use" (or, worse, the
 * other process answered in its place). Now moto binds port 0 itself and reports the port it got.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DeleteTableCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateTopicCommand, PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { CreateQueueCommand, DeleteQueueCommand, ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { localAwsConfig, type MotoServer, motoState, startMoto } from '#sandbox/moto';

const started: MotoServer[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((moto) => moto.stop()));
  for (const server of servers.splice(0)) server.close();
});

async function queueNames(endpoint: string): Promise<string[]> {
  const sqs = new SQSClient(localAwsConfig(endpoint));
  try {
    const { QueueUrls = [] } = await sqs.send(new ListQueuesCommand({}));
    return QueueUrls.map((url) => url.slice(url.lastIndexOf('/') + 1));
  } finally {
    sqs.destroy();
  }
}

describe('starting moto server', () => {
  it('serves on the port it bound itself: two started at once each get their own', async () => {
    const [one, two] = await Promise.all([startMoto(), startMoto()]);
    started.push(one, two);
    expect(one.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(one.endpoint).not.toBe(two.endpoint);
    const sqs = new SQSClient(localAwsConfig(one.endpoint));
    try {
      await sqs.send(new CreateQueueCommand({ QueueName: 'only-in-one' }));
    } finally {
      sqs.destroy();
    }
    expect(await queueNames(one.endpoint)).toEqual(['only-in-one']);
    expect(await queueNames(two.endpoint)).toEqual([]);
  });

  it('on a fixed port another server holds, fails saying so instead of handing out that server', async () => {
    // Someone else's server on the port, answering like moto would.
    const impostor = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
    servers.push(impostor);
    impostor.listen(0, '127.0.0.1');
    await once(impostor, 'listening');
    const { port } = impostor.address() as AddressInfo;

    const start = startMoto({ port });
    start.then((moto) => started.push(moto)).catch(() => undefined);
    await expect(start).rejects.toThrow(/moto server exited with code 1 before it was ready:[\s\S]*in use/i);
  });
});

describe("moto's state dump", () => {
  // moto walks its backends to build /moto-api/data.json while other requests change them; a
  // change mid-walk answered 500 with an HTML page, and a test reading sent email failed with
  // "Unexpected token '<'" (CI, on a shared moto). Measured: about 1 dump in 25 under this load.
  // moto-server.py builds the dump again in-process (4.), and motoState retries what still fails.
  it('is read whole while other clients create and delete tables, queues and topics', async () => {
    const moto = await startMoto();
    started.push(moto);
    const config = localAwsConfig(moto.endpoint);
    const [dynamo, sqs, sns] = [new DynamoDBClient(config), new SQSClient(config), new SNSClient(config)];
    // A bounded churn: moto's dump lists every instance ever made, deleted ones too, so writers that
    // ran until the reads ended made each dump slower than the last; on a loaded machine the test
    // took 163 s of its 180 s timeout. Reads go on while the writers write (150 at least).
    const rounds = 15;
    let writing = true;
    const writer = async (w: number) => {
      for (let i = 0; i < rounds && writing; i++) {
        const name = `churn-${w}-${i}`;
        const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name }));
        const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: name }));
        await sns.send(new PublishCommand({ TopicArn, Message: name }));
        await dynamo.send(
          new CreateTableCommand({
            TableName: name,
            KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
            AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
            BillingMode: 'PAY_PER_REQUEST',
          }),
        );
        await dynamo.send(new PutItemCommand({ TableName: name, Item: { pk: { S: name } } }));
        await dynamo.send(new DeleteTableCommand({ TableName: name }));
        await sqs.send(new DeleteQueueCommand({ QueueUrl }));
      }
    };
    let written = false;
    const writers = Promise.all([0, 1, 2, 3].map(writer)).finally(() => {
      written = true;
    });
    try {
      for (let read = 0; read < 150 || !written; read++) {
        expect(await motoState(moto.endpoint)).toBeTypeOf('object');
      }
    } finally {
      writing = false;
      await writers;
      for (const client of [dynamo, sqs, sns]) client.destroy();
    }
  });
});
