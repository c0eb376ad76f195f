import type { WorkItem } from '#core/ports';
/** Helpers shared by the work item tests (example and property). */

/**
 * Code points SQS refuses in a message body: it takes only #x9, #xA, #xD, #x20-#xD7FF,
 * #xE000-#xFFFD and #x10000-#x10FFFF (a lone surrogate is a code point of its own here).
 */
export const refusedBySqs = (text: string): number[] =>
  [...text]
    .map((char) => char.codePointAt(0) ?? 0)
    .filter(
      (c) =>
        !(
          c === 0x9 ||
          c === 0xa ||
          c === 0xd ||
          (c >= 0x20 && c <= 0xd7ff) ||
          (c >= 0xe000 && c <= 0xfffd) ||
          c >= 0x10000
        ),
    );

/** A version-2 body's head, parsed, and the bodies after its first newline. */
export function splitBody(body: string): { head: Record<string, unknown>; tail: string } {
  const newline = body.indexOf('\n');
  if (newline < 0) throw new Error('not a version-2 work item body');
  return { head: JSON.parse(body.slice(0, newline)) as Record<string, unknown>, tail: body.slice(newline + 1) };
}

/**
 * The version-1 body of an item, as the code before version 2 wrote it: the whole item as one
 * JSON document, attributes in this order. Written here from the format's description, so the
 * reader is checked against the format, not against its own writer.
 */
export function legacyBody(item: WorkItem): string {
  return JSON.stringify({
    v: 1,
    dispatchId: item.dispatchId,
    itemId: item.itemId,
    audienceId: item.audienceId,
    queuedAt: item.queuedAt,
    messages: item.messages.map((m) => ({
      key: { articleKey: m.key.articleKey, audienceId: m.key.audienceId },
      topicArn: m.topicArn,
      subject: m.subject,
      body: m.body,
      ruleIds: m.ruleIds,
      ...(m.facts === undefined ? {} : { facts: m.facts }),
    })),
  });
}
