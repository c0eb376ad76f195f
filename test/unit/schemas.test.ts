import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RULE_LIMITS } from '#core/model';
import { projectRoot } from '../../sandbox/python-env.mjs';
import { schemaDocuments } from '../../scripts/generate-schemas.ts';

describe('docs/schemas', () => {
  it('matches the schemas the run validates with (regenerate: npx tsx scripts/generate-schemas.ts)', () => {
    for (const [name, text] of Object.entries(schemaDocuments())) {
      expect(readFileSync(join(projectRoot, 'docs', 'schemas', name), 'utf8'), name).toBe(text);
    }
  });

  it('describes the rule attributes ops write and refuses unknown ones', () => {
    const rule = JSON.parse(schemaDocuments()['rule.schema.json'] ?? '{}') as {
      properties: Record<string, unknown>;
      required: string[];
      additionalProperties: boolean;
    };
    expect(Object.keys(rule.properties)).toEqual(
      expect.arrayContaining(['ruleId', 'audienceId', 'keywords', 'categories']),
    );
    expect(rule.required).toEqual(expect.arrayContaining(['ruleId', 'audienceId']));
    expect(rule.additionalProperties).toBe(false);
  });

  it('documents the query attribute with its syntax and the limits the parser enforces', () => {
    const rule = JSON.parse(schemaDocuments()['rule.schema.json'] ?? '{}') as {
      properties: Record<string, { type?: string; description?: string; maxLength?: number }>;
    };
    const query = rule.properties.query;
    expect(query).toMatchObject({ type: 'string', maxLength: RULE_LIMITS.queryLength });
    for (const part of ['"exact phrase"', 'NEAR/n', 'title:', 'semicond*', 'matchAll']) {
      expect(query?.description).toContain(part);
    }
    expect(query?.description).toContain(
      `Limits: ${RULE_LIMITS.queryLength} characters, ${RULE_LIMITS.queryDepth} levels of parentheses and NOT, ${RULE_LIMITS.queryTerms} terms.`,
    );
  });
});
