import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';

/**
 * Bounded-memory hashing and copying of files for the artifact store. Checkpoints are many GB, so
 * nothing here holds more than one chunk of a file at a time: memory is `STREAM_CHUNK_BYTES` per file
 * in flight, whatever the file's size.
 */

/** Bytes read per step when hashing or copying a file (one buffer per file in flight). */
export const STREAM_CHUNK_BYTES = 1024 * 1024;

/** The content address and length of bytes that were streamed. */
export interface StreamedObject {
  /** `sha256:<hex>` of the bytes. */
  ref: string;
  /** Number of bytes. */
  size: number;
}

/**
 * Reads `src` to its end from offset 0, hashing every byte with sha256 and (when `dest` is given)
 * appending it to `dest`. One buffer of `chunkBytes` is reused throughout.
 *
 * @example
 * ```ts
 * const src = await open('model.safetensors', 'r');
 * const dst = await open(tmp, 'wx', 0o444);
 * const { ref, size } = await hashCopy(src, dst); // ref = sha256 of what was written to tmp
 * ```
 */
export async function hashCopy(src: FileHandle, dest?: FileHandle, chunkBytes = STREAM_CHUNK_BYTES): Promise<StreamedObject> {
  const hash = createHash('sha256');
  const buf = Buffer.allocUnsafe(chunkBytes);
  let size = 0;
  for (;;) {
    // Explicit positions: the hash must cover the file from its first byte whatever the handle's offset.
    const { bytesRead } = await src.read(buf, 0, buf.byteLength, size);
    if (bytesRead === 0) break;
    const chunk = buf.subarray(0, bytesRead);
    hash.update(chunk);
    if (dest) {
      let off = 0;
      while (off < bytesRead) off += (await dest.write(chunk, off, bytesRead - off)).bytesWritten;
    }
    size += bytesRead;
  }
  return { ref: `sha256:${hash.digest('hex')}`, size };
}

/** The sha256 ref and size of a file, read in bounded chunks. */
export async function hashFile(file: string, chunkBytes = STREAM_CHUNK_BYTES): Promise<StreamedObject> {
  const fh = await open(file, 'r');
  try {
    return await hashCopy(fh, undefined, chunkBytes);
  } finally {
    await fh.close();
  }
}
