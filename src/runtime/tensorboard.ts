import { appendFile, mkdir, readFile, truncate } from 'node:fs/promises';
import path from 'node:path';
import { isErrno } from '../core/fs.js';
import { fileSafe } from './workspace.js';

/**
 * The training loop's own TensorBoard curves, one point per iteration (docs/pipeline.md, "Training curves"):
 * held-out success, the rollouts' success and reward, the trainer's last loss, …, written by the `writeLoopCurves`
 * activity beside the trainer's per-step curves (trainer/gymflow_trainer/tensorboard_log.py).
 *
 * The file format is TensorBoard's, written here without TensorFlow: a TFRecord file (each record: its length as
 * a little-endian u64, a masked CRC-32C of those 8 bytes, the data, a masked CRC-32C of the data) of `Event`
 * protocol buffers (tensorflow/core/util/event.proto): `wall_time` (1, double), `step` (2, int64), and one of
 * `file_version` (3, string), `summary` (5: `value` (1) messages of `tag` (1, string) and `simple_value` (2,
 * float)) or `session_log` (7: `status` (1), START = 1).
 *
 * Each iteration appends a `session_log` START at its step, then its scalars. TensorBoard's reader hides every
 * point at or past a START's step that an earlier record gave, so an iteration written again (a retried activity,
 * an iteration run again by `gymflow pipeline continue`) shows its latest numbers once. A write cut short (the
 * worker killed mid-append) leaves a partial record at the end, which the reader would take for the end of the
 * file; the next append cuts the file back to its last whole record first.
 */

/**
 * An experiment's runs under a configured TensorBoard directory (resolved against the working directory):
 * `<dir>/<experiment>`, the name made one directory. Each training iteration is a run in it
 * (`iter-<n>-<command>`, run-dir.ts), and so are the loop's curves ({@link loopCurvesDir}).
 */
export function experimentCurvesDir(configured: string, experiment: string): string {
  return path.join(path.resolve(configured), fileSafe(experiment));
}

/** Where the loop's curves go: `<dir>/<experiment>/loop`. */
export function loopCurvesDir(configured: string, experiment: string): string {
  return path.join(experimentCurvesDir(configured, experiment), 'loop');
}

/** The loop's event file in its directory (one file, appended; "tfevents" in the name makes it TensorBoard's). */
export const LOOP_EVENTS_FILE = 'events.out.tfevents.0.gymflow-loop';

const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32C (Castagnoli) of `bytes`. */
export function crc32c(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = (CRC32C_TABLE[(c ^ b) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** TFRecord's masked CRC: rotated right by 15 bits, plus a constant. */
function maskedCrc(bytes: Uint8Array): number {
  const c = crc32c(bytes);
  return ((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0;
}

/** A protocol-buffer writer for the few field types an Event needs. */
class Proto {
  private readonly parts: Buffer[] = [];

  private varint(value: number): void {
    const out: number[] = [];
    let v = BigInt.asUintN(64, BigInt(value));
    do {
      let byte = Number(v & 0x7fn);
      v >>= 7n;
      if (v > 0n) byte |= 0x80;
      out.push(byte);
    } while (v > 0n);
    this.parts.push(Buffer.from(out));
  }

  private key(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  double(field: number, value: number): this {
    this.key(field, 1);
    const b = Buffer.alloc(8);
    b.writeDoubleLE(value);
    this.parts.push(b);
    return this;
  }

  float(field: number, value: number): this {
    this.key(field, 5);
    const b = Buffer.alloc(4);
    b.writeFloatLE(value);
    this.parts.push(b);
    return this;
  }

  int(field: number, value: number): this {
    this.key(field, 0);
    this.varint(value);
    return this;
  }

  bytes(field: number, value: Uint8Array | string): this {
    const b = typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value);
    this.key(field, 2);
    this.varint(b.length);
    this.parts.push(b);
    return this;
  }

  finish(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** One TFRecord: length, its masked CRC, the data, its masked CRC. */
function record(data: Uint8Array): Buffer {
  const head = Buffer.alloc(12);
  head.writeBigUInt64LE(BigInt(data.length));
  head.writeUInt32LE(maskedCrc(head.subarray(0, 8)), 8);
  const tail = Buffer.alloc(4);
  tail.writeUInt32LE(maskedCrc(data));
  return Buffer.concat([head, data, tail]);
}

function event(wallTime: number, step: number): Proto {
  return new Proto().double(1, wallTime).int(2, step);
}

/**
 * The length of the longest prefix of `file`'s bytes made of whole TFRecords with correct checksums (the whole
 * file when it is intact).
 */
export function wholeRecordsLength(file: Uint8Array): number {
  const buf = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  let at = 0;
  while (at + 12 <= buf.length) {
    const length = buf.readBigUInt64LE(at);
    if (buf.readUInt32LE(at + 8) !== maskedCrc(buf.subarray(at, at + 8))) break;
    const end = at + 12 + Number(length);
    if (length > BigInt(buf.length) || end + 4 > buf.length) break;
    if (buf.readUInt32LE(end) !== maskedCrc(buf.subarray(at + 12, end))) break;
    at = end + 4;
  }
  return at;
}

/**
 * Appends one point per scalar at `step` to the event file `file` (created, with its directory, when missing),
 * after a START that hides whatever the file gave at or past `step` before (see the module documentation).
 * Non-finite values are written as they are (TensorBoard shows NaN).
 */
export async function appendScalars(file: string, step: number, scalars: Readonly<Record<string, number>>, wallTime = Date.now() / 1000): Promise<void> {
  if (!Number.isSafeInteger(step) || step < 0) throw new RangeError(`step must be a non-negative integer, got ${step}`);
  await mkdir(path.dirname(file), { recursive: true });
  let existing: Buffer | undefined;
  try {
    existing = await readFile(file);
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
  }
  const records: Buffer[] = [];
  if (existing === undefined || existing.length === 0) {
    records.push(record(event(wallTime, 0).bytes(3, 'brain.Event:2').finish()));
  } else {
    const whole = wholeRecordsLength(existing);
    if (whole < existing.length) await truncate(file, whole);
  }
  records.push(record(event(wallTime, step).bytes(7, new Proto().int(1, 1).finish()).finish()));
  const summary = new Proto();
  for (const [tag, value] of Object.entries(scalars)) summary.bytes(1, new Proto().bytes(1, tag).float(2, value).finish());
  records.push(record(event(wallTime, step).bytes(5, summary.finish()).finish()));
  await appendFile(file, Buffer.concat(records));
}
