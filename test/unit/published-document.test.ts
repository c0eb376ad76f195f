/**
 * The structured body's published contract (functions/core/published-document.ts and the JSON
 * Schema generated from it, docs/schemas/structured-body.schema.json): every rendered sample of
 * every kind parses with the strict schemas (a field the renderers add without describing it
 * fails here), and validates against the JSON Schema file with a JSON Schema validator, as a
 * consumer would use it. The property test of ko/ja rendering (messages-rendering.property.test.ts)
 * holds generated alerts, update notices and digests to the same schemas.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { AlertDocumentSchema, DigestDocumentSchema, PublishedDocumentSchema } from '#core/published-document';
import { projectRoot } from '../../sandbox/python-env.mjs';

const samplesDirectory = join(projectRoot, 'docs', 'samples');
const samples = readdirSync(samplesDirectory, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => ({
    name: entry.name,
    document: JSON.parse(readFileSync(join(samplesDirectory, entry.name, 'webhook.json'), 'utf8')) as unknown,
  }));

const jsonSchema = JSON.parse(
  readFileSync(join(projectRoot, 'docs', 'schemas', 'structured-body.schema.json'), 'utf8'),
) as object;

/** The validator a consumer would use: draft 2020-12, every `format` it knows checked. */
function consumerValidator() {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (value: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value),
  });
  return ajv.compile(jsonSchema);
}

describe('the published structured body', () => {
  it('has a sample of every kind: alert, update notice, spike alert, spike update, digest', () => {
    const kinds = new Set(
      samples.map(({ document }) => {
        const { metadata, newsAlerts } = document as {
          metadata: { eventType: string };
          newsAlerts: { update?: unknown };
        };
        return `${metadata.eventType}${newsAlerts.update === undefined ? '' : ' update'}`;
      }),
    );
    expect([...kinds].sort()).toEqual([
      'news-alerts.article-matched',
      'news-alerts.article-matched update',
      'news-alerts.digest',
      'news-alerts.spike-detected',
      'news-alerts.spike-detected update',
    ]);
  });

  it.each(samples.map((sample) => [sample.name, sample.document] as const))(
    'docs/samples/%s/webhook.json is what the strict schemas describe, field for field',
    (_name, document) => {
      const result = PublishedDocumentSchema.safeParse(document);
      expect(result.success ? [] : result.error.issues).toEqual([]);
    },
  );

  it.each(samples.map((sample) => [sample.name, sample.document] as const))(
    'docs/samples/%s/webhook.json validates against docs/schemas/structured-body.schema.json',
    (_name, document) => {
      const validate = consumerValidator();
      expect(validate(document) ? [] : validate.errors).toEqual([]);
    },
  );

  it('refuses a field the schemas do not describe, and the published file lets consumers meet new ones', () => {
    const alert = samples.find((sample) => sample.name === 'alert-ascii')?.document as {
      newsAlerts: Record<string, unknown>;
    };
    const withExtra = { ...alert, newsAlerts: { ...alert.newsAlerts, somethingNew: 1 } };
    expect(AlertDocumentSchema.safeParse(withExtra).success).toBe(false);
    expect(consumerValidator()(withExtra)).toBe(true);
    const digest = samples.find((sample) => sample.name === 'digest-morning')?.document as {
      newsAlerts: Record<string, unknown>;
    };
    expect(DigestDocumentSchema.safeParse(digest).success).toBe(true);
    const noKind = { ...digest, newsAlerts: { ...digest.newsAlerts, kind: undefined } };
    expect(consumerValidator()(JSON.parse(JSON.stringify(noKind)))).toBe(false);
  });
});
