/**
 * Writes the JSON Schema of the ops-edited items (docs/schemas/*.schema.json) from the zod schemas
 * the run validates with, so editors and reviewers see exactly what the run accepts.
 * `npx tsx scripts/generate-schemas.ts`; test/unit/schemas.test.ts fails when they are stale.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { AudienceSchema, RuleSchema } from '#core/model';
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

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [name, text] of Object.entries(schemaDocuments())) {
    writeFileSync(join(projectRoot, 'docs', 'schemas', name), text);
    process.stdout.write(`wrote docs/schemas/${name}\n`);
  }
}
