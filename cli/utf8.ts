/**
 * Text from a file or stdin, refused when its bytes are not UTF-8. Node's `readFileSync(path,
 * 'utf8')` turns such bytes into U+FFFD without a word: a rule keyword saved in Latin-1 ("caf\xe9")
 * was stored as "caf�", could never match, and the original text was gone. Decoding is the
 * platform's own (TextDecoder, fatal); only finding where the first bad byte is, for the message,
 * is done here, with the same decoder.
 */
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { UsageError } from './errors.ts';

/** How messages name an input given as a path: `stdin` for `-`, the path otherwise. */
export const inputName = (path: string): string => (path === '-' ? 'stdin' : path);

/** What a command's input is called in its messages: the file given (`stdin` for `-`), or `otherwise` from flags. */
export const sourceName = (file: string | undefined, otherwise: string): string =>
  file === undefined ? otherwise : inputName(file);

/** At most how many bytes {@link readUtf8File} reads, and what to tell the user beyond that. */
export interface ReadLimit {
  readonly bytes: number;
  /** What to do instead (`split the series …`), after the limit in the message. */
  readonly advice: string;
}

/**
 * What {@link readUtf8File} reads when its caller names no limit of its own: far more than any
 * rules file, mapping or article the CLI takes, so only a runaway writer (`yes | … --file -`) or the
 * wrong file meets it, instead of filling memory.
 */
export const DEFAULT_READ_LIMIT: ReadLimit = {
  bytes: 100_000_000,
  advice: 'is it the right file? Split what it holds over several files if it is',
};

/** The input is larger than its {@link ReadLimit}: found while reading, the rest left unread. */
class TooLargeError extends Error {
  constructor() {
    super('larger than the limit');
    this.name = 'TooLargeError';
  }
}

/**
 * The text of the file at `path`, or of stdin for `-`. `option`, when given, leads each message
 * (`--response-mapping: cannot read …`). At most `limit`'s bytes are read ({@link DEFAULT_READ_LIMIT}
 * unless given; a file and stdin alike, however much more there is): the input is refused as
 * soon as it is found to be larger, not after it has all been held in memory.
 * @throws UsageError when it cannot be read, is larger than `limit`, or is not UTF-8 (see
 *   {@link utf8Text})
 */
export function readUtf8File(path: string, option?: string, limit: ReadLimit = DEFAULT_READ_LIMIT): string {
  const lead = option === undefined ? '' : `${option}: `;
  let bytes: Buffer;
  try {
    bytes = path === '-' ? readStdin(limit.bytes) : readFile(path, limit.bytes);
  } catch (error) {
    if (error instanceof TooLargeError) {
      throw new UsageError(
        `${lead}${inputName(path)} is larger than ${limit.bytes.toLocaleString('en-US')} bytes, the most read at once; ${limit.advice}`,
      );
    }
    throw new UsageError(`${lead}cannot read ${inputName(path)}: ${(error as Error).message}`, [], { cause: error });
  }
  return utf8Text(bytes, inputName(path), lead);
}

/** A file's bytes, at most `maxBytes` of them (a pipe or device is read until then too). */
function readFile(path: string, maxBytes: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    // A regular file says its size: refused without reading a byte.
    if (fstatSync(fd).size > maxBytes) throw new TooLargeError();
    return readAll(fd, maxBytes);
  } finally {
    closeSync(fd);
  }
}

/** How long the read of stdin waits before it tries again when nothing has been written yet. */
const STDIN_POLL_MS = 5;

/**
 * All of stdin, however slowly the command before the pipe writes it. `readFileSync(0)` throws
 * EAGAIN when stdin is a pipe that Node made non-blocking (it does once anything touches
 * `process.stdin`, nodejs/node#35997) and the writer has not written yet: `news-alerts rules delete
 * x | news-alerts rules put --file -` then failed after the delete, and the only copy of the deleted
 * rule went with the failed read. Written here because neither Node nor a library offers a
 * synchronous read that waits: each EAGAIN waits a few milliseconds (Atomics.wait, which sleeps
 * instead of spinning) and reads again, until end of input.
 */
function readStdin(maxBytes?: number): Buffer {
  return readAll(0, maxBytes);
}

/** Sleeps {@link STDIN_POLL_MS} (Atomics.wait sleeps instead of spinning): a descriptor said EAGAIN. */
function pauseBriefly(): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, STDIN_POLL_MS);
}

/**
 * Writes all of `text` to descriptor `fd`, however slowly its reader takes it. `writeSync` writes
 * what fits and says how much: into a non-blocking pipe (Node makes its own stdio descriptors so)
 * a full pipe takes part, or throws EAGAIN, and the rest would be lost without a word.
 */
export function writeAllSync(fd: number, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  for (let offset = 0; offset < bytes.length; ) {
    try {
      offset += writeSync(fd, bytes, offset);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      pauseBriefly();
    }
  }
}

/** Every byte of `fd` until end of input; {@link TooLargeError} once more than `maxBytes` came. */
function readAll(fd: number, maxBytes = Number.POSITIVE_INFINITY): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  const buffer = Buffer.alloc(64 * 1024);
  for (;;) {
    let read: number;
    try {
      read = readSync(fd, buffer, 0, buffer.length, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        pauseBriefly();
        continue;
      }
      // Windows reports the end of a pipe as an error.
      if (code === 'EOF') break;
      throw error;
    }
    if (read === 0) break;
    total += read;
    if (total > maxBytes) throw new TooLargeError();
    chunks.push(Buffer.from(buffer.subarray(0, read)));
  }
  return Buffer.concat(chunks);
}

/**
 * `bytes` as text (a leading byte-order mark dropped).
 * @throws UsageError naming `where` (after `lead`), the line and column of the first byte that is
 *   not UTF-8, and that byte, when the bytes are not UTF-8
 */
export function utf8Text(bytes: Uint8Array, where: string, lead = ''): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    const offset = firstInvalidByte(bytes);
    let line = 1;
    // Columns count from after a byte-order mark, as editors and the YAML and JSON errors do.
    const bom = offset >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
    let lineStart = bom ? 3 : 0;
    for (let i = lineStart; i < offset; i++) {
      if (bytes[i] === 0x0a) {
        line++;
        lineStart = i + 1;
      }
    }
    const column =
      [...new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes.subarray(lineStart, offset))].length + 1;
    const byte = (bytes[offset] ?? 0).toString(16).toUpperCase().padStart(2, '0');
    throw new UsageError(`${lead}${where} is not UTF-8 text; nothing was read from it`, [
      {
        message: `byte 0x${byte} (column ${column}) is not UTF-8: save the file as UTF-8 and try again`,
        file: where,
        line,
      },
    ]);
  }
}

/** Whether a streaming decoder accepts the first `length` bytes (an unfinished character is fine). */
function acceptsPrefix(bytes: Uint8Array, length: number): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes.subarray(0, length), {
      stream: true,
    });
  } catch {
    return undefined;
  }
}

/**
 * Offset of the first byte of the first sequence that is not UTF-8 in `bytes`, which are known
 * not to be: the shortest prefix a streaming decoder refuses (refusal only grows with the prefix)
 * ends inside that sequence, and the text decoded before it says where the sequence began.
 */
function firstInvalidByte(bytes: Uint8Array): number {
  const whole = acceptsPrefix(bytes, bytes.length);
  // Every byte but an unfinished last character is fine: that character is the culprit.
  if (whole !== undefined) return Buffer.byteLength(whole);
  let accepted = 0; // acceptsPrefix(accepted) holds
  let refused = bytes.length; // acceptsPrefix(refused) fails
  while (refused - accepted > 1) {
    const middle = (accepted + refused) >>> 1;
    if (acceptsPrefix(bytes, middle) === undefined) refused = middle;
    else accepted = middle;
  }
  return Buffer.byteLength(acceptsPrefix(bytes, accepted) ?? '');
}
