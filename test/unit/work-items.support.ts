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
