/**
 * A spike alert's `newsAlerts.spike` as the channels that read the structured document parse it
 * (the Slack relay, the SES email function): the episode the alert is about (render.ts
 * {@link SpikeDocumentPart} writes it). Lenient, as the document's contract asks: anything
 * malformed, dates that do not parse included, reads as absent, and the alert renders as a plain
 * article alert.
 */
import * as z from 'zod/mini';

const isoDate = z.string().check(z.refine((value) => !Number.isNaN(Date.parse(value))));
const count = () => z.number().check(z.nonnegative());
const wholeCount = () => z.number().check(z.int(), z.nonnegative());

export const SpikeDocumentSchema = z.catch(
  z.optional(
    z.object({
      ruleId: z.string(),
      episodeId: z.string(),
      preset: z.string(),
      since: isoDate,
      openedAt: isoDate,
      bucketMinutes: z._default(z.number().check(z.positive()), 60),
      observed: count(),
      expected: count(),
      bucketCount: z._default(count(), 0),
      bucketExpected: z._default(count(), 0),
      outletCount: z._default(wholeCount(), 0),
      storiesSoFar: z.optional(count()),
      expectedSoFar: z.optional(count()),
      stage: z.catch(z.enum(['spike', 'escalated']), 'spike'),
      topStories: z._default(
        z.array(
          z.object({
            title: z.string(),
            url: z._default(z.string(), ''),
            outlets: z._default(wholeCount(), 1),
          }),
        ),
        [],
      ),
      topOutlets: z._default(z.array(z.object({ name: z.string(), stories: wholeCount() })), []),
    }),
  ),
  undefined,
);

/** The episode of a spike alert, as read from its document. */
export type SpikeDocument = NonNullable<z.output<typeof SpikeDocumentSchema>>;
