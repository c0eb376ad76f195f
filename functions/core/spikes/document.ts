/**
 * A spike alert's `newsAlerts.spike` as the channels that read the structured document parse it
 * (the Slack relay, the SES email function): the episode the alert is about (render.ts
 * {@link SpikeDocumentPart} writes it). Lenient, as the document's contract asks: anything
 * malformed, dates that do not parse included, reads as absent, and the alert renders as a plain
 * article alert.
 */
import { z } from 'zod';

const isoDate = z.string().refine((value) => !Number.isNaN(Date.parse(value)));

export const SpikeDocumentSchema = z
  .object({
    ruleId: z.string(),
    episodeId: z.string(),
    preset: z.string(),
    since: isoDate,
    openedAt: isoDate,
    bucketMinutes: z.number().positive().default(60),
    observed: z.number().nonnegative(),
    expected: z.number().nonnegative(),
    bucketCount: z.number().nonnegative().default(0),
    bucketExpected: z.number().nonnegative().default(0),
    outletCount: z.number().int().nonnegative().default(0),
    storiesSoFar: z.number().nonnegative().optional(),
    stage: z.enum(['spike', 'escalated']).catch('spike'),
    topStories: z
      .array(
        z.object({
          title: z.string(),
          url: z.string().default(''),
          outlets: z.number().int().nonnegative().default(1),
        }),
      )
      .default([]),
    topOutlets: z.array(z.object({ name: z.string(), stories: z.number().int().nonnegative() })).default([]),
  })
  .optional()
  .catch(undefined);

/** The episode of a spike alert, as read from its document. */
export type SpikeDocument = NonNullable<z.output<typeof SpikeDocumentSchema>>;
