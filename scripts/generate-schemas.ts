/**
 * Writes the JSON Schema of the ops-edited items (docs/schemas/*.schema.json) from the zod schemas
 * the run validates with, so editors and reviewers see exactly what the run accepts, and of the
 * structured body the alert function publishes (functions/core/published-document.ts), for people
 * writing a webhook, SQS or Lambda consumer.
 * `npx tsx scripts/generate-schemas.ts`; test/unit/schemas.test.ts fails when they are stale.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { AudienceSchema, RuleSchema } from '#core/model';
import { PublishedDocumentSchema } from '#core/published-document';
import { projectRoot } from '../sandbox/python-env.mjs';

/** The documents to write, by file name under docs/schemas. */
export function schemaDocuments(): Record<string, string> {
  const render = (schema: z.core.$ZodType, id: string, title: string, description: string) =>
    `${JSON.stringify(
      {
        ...z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }),
        $id: `https://github.com/news-alerts/news-alerts/docs/schemas/${id}`,
        title,
        description,
      },
      null,
      2,
    )}\n`;
  return {
    'structured-body.schema.json': `${JSON.stringify(
      {
        ...openObjects(z.toJSONSchema(PublishedDocumentSchema, { io: 'output' })),
        $id: 'https://github.com/news-alerts/news-alerts/docs/schemas/structured-body.schema.json',
        title: 'news-alerts structured body',
        description:
          'The JSON document HTTPS, SQS, Lambda, email-json and Firehose subscribers receive (the `default` of the SNS message): an article alert or update notice, a spike alert, or a digest (`newsAlerts.kind: "digest"`). Objects may gain fields: ignore the ones you do not know. `newsAlerts.schemaVersion` changes only on breaking changes. De-duplicate on `newsAlerts.deliveryId`: delivery is at least once. See docs/delivery.md and the samples in docs/samples.',
      },
      null,
      2,
    )}\n`,
    'rule.schema.json': render(
      RuleSchema,
      'rule.schema.json',
      'news-alerts rule item',
      'One item of the rules table (partition key ruleId). Lists may also be saved as DynamoDB string sets.',
    ),
    'audience.schema.json': render(
      AudienceSchema,
      'audience.schema.json',
      'news-alerts audience item',
      'One item of the audiences table (partition key audienceId).',
    ),
  };
}

/**
 * The schema with every object open to fields it does not list: the publisher's schemas are strict
 * so the tests catch a field added without a description, but a consumer validating against a
 * document that forbids new fields would break on the next one added.
 */
function openObjects(schema: unknown): Record<string, unknown> {
  const open = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(open);
    if (typeof node !== 'object' || node === null) return node;
    return Object.fromEntries(
      Object.entries(node)
        .filter(([key, value]) => !(key === 'additionalProperties' && value === false))
        .map(([key, value]) => [key, open(value)]),
    );
  };
  return open(schema) as Record<string, unknown>;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [name, text] of Object.entries(schemaDocuments())) {
    writeFileSync(join(projectRoot, 'docs', 'schemas', name), text);
    process.stdout.write(`wrote docs/schemas/${name}\n`);
  }
}
