import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { StoreError } from '../errors.js';
import { mapPool } from '../pool.js';
import { defined } from '../../core/defined.js';

/**
 * Loaded only when an `s3://` store is opened (store.ts imports it dynamically), so that the AWS SDK costs the
 * commands that use a directory store nothing.
 *
 * The bucket side of the S3 store backend (docs/store.md, "S3 backend"): parsing `s3://bucket/prefix`, the
 * client's endpoint and credentials from the environment, and the few operations the store needs, each under
 * the store's key prefix. Conditional writes (`If-None-Match: *`, `If-Match: <etag>`) are what make ref and
 * index updates safe between writers on different hosts: a write whose condition fails raises
 * {@link PreconditionFailed}, never a silent overwrite.
 */

/** A parsed `s3://bucket/prefix` store URL. */
export interface S3Location {
  bucket: string;
  /** Key prefix without leading or trailing `/` (may be empty). */
  prefix: string;
  /** The URL as given, normalised (`s3://bucket/prefix`). */
  url: string;
}

export { isS3Url } from './layout.js';

/**
 * Parses `s3://bucket[/prefix]`.
 *
 * @throws StoreError naming the URL and what is wrong with it.
 */
export function parseS3Url(url: string): S3Location {
  const m = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(url);
  const bucket = m?.[1];
  if (m === null || bucket === undefined) throw new StoreError(`store URL '${url}': expected s3://bucket/prefix`);
  // S3's bucket naming rules (lower case, digits, '.', '-'; 3 to 63 characters).
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new StoreError(`store URL '${url}': bucket '${bucket}' is not a valid bucket name (3-63 characters: lower-case letters, digits, '.', '-')`);
  }
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (prefix.split('/').some((s) => s === '.' || s === '..') || prefix.includes('//')) {
    throw new StoreError(`store URL '${url}': prefix '${prefix}' has an empty, '.' or '..' segment`);
  }
  return { bucket, prefix, url: `s3://${bucket}${prefix ? `/${prefix}` : ''}` };
}

/** Environment variables the S3 backend reads (docs/store.md). */
export const S3_ENV = {
  endpoint: 'GYMFLOW_S3_ENDPOINT',
  region: 'GYMFLOW_S3_REGION',
  accessKey: 'GYMFLOW_S3_ACCESS_KEY',
  secretKey: 'GYMFLOW_S3_SECRET_KEY',
} as const;

/**
 * The S3 client's configuration from the environment: endpoint `$GYMFLOW_S3_ENDPOINT` (else `$AWS_ENDPOINT_URL_S3`,
 * `$AWS_ENDPOINT_URL`, else AWS itself), region `$GYMFLOW_S3_REGION` (else `$AWS_REGION`, else `us-east-1`),
 * credentials `$GYMFLOW_S3_ACCESS_KEY`/`$GYMFLOW_S3_SECRET_KEY` (the names docker-compose.yml gives the object
 * store), else the SDK's default chain (`$AWS_ACCESS_KEY_ID`/`$AWS_SECRET_ACCESS_KEY`, profiles, instance roles).
 * A custom endpoint is addressed path-style (`http://host:port/bucket/key`), which every S3-compatible server
 * accepts.
 *
 * @throws StoreError when only one of the two GYMFLOW_S3 credential variables is set, or the endpoint is no URL.
 */
export function s3ClientConfig(env: NodeJS.ProcessEnv = process.env): S3ClientConfig {
  const endpoint = env[S3_ENV.endpoint] || env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
  const config: S3ClientConfig = {
    region: env[S3_ENV.region] || env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    // Checksums only where S3 requires them: third-party servers differ in the newer trailing checksums, and
    // every object is already checked against its sha256 address when read.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 5,
  };
  if (endpoint !== undefined) {
    try {
      new URL(endpoint);
    } catch {
      throw new StoreError(`$${S3_ENV.endpoint} '${endpoint}' is not a URL (expected e.g. http://127.0.0.1:8333)`);
    }
    config.endpoint = endpoint;
    config.forcePathStyle = true;
  }
  const key = env[S3_ENV.accessKey];
  const secret = env[S3_ENV.secretKey];
  if ((key === undefined || key === '') !== (secret === undefined || secret === '')) {
    throw new StoreError(`set both $${S3_ENV.accessKey} and $${S3_ENV.secretKey}, or neither (then $AWS_ACCESS_KEY_ID/$AWS_SECRET_ACCESS_KEY or the AWS SDK's other sources apply)`);
  }
  if (key && secret) config.credentials = { accessKeyId: key, secretAccessKey: secret };
  return config;
}

/** A conditional write whose condition did not hold (HTTP 412, or 409 from a concurrent conditional write). */
export class PreconditionFailed extends Error {
  constructor(readonly key: string) {
    super(`precondition failed on ${key}`);
  }
}

/** One listed key. */
export interface S3Listed {
  /** Key relative to the store prefix. */
  key: string;
  size: number;
  mtimeMs: number;
}

/** Objects at least this large go up in parts (S3 caps a single PUT at 5 GiB). */
export const MULTIPART_THRESHOLD = 64 * 1024 * 1024;
/** Bytes per part of a multipart upload (S3 allows 10,000 parts: 160 GiB per object). */
export const MULTIPART_PART_BYTES = 16 * 1024 * 1024;
/** Parts uploaded at once; each streams from its file range, so memory stays bounded. */
const PART_CONCURRENCY = 4;

/** The store's bucket and key prefix, with the operations the S3 backend uses. */
export class S3Bucket {
  readonly client: S3Client;

  constructor(
    readonly location: S3Location,
    config: S3ClientConfig = s3ClientConfig(),
  ) {
    this.client = new S3Client(config);
  }

  /** The full key of a store-relative key. */
  key(rel: string): string {
    return this.location.prefix ? `${this.location.prefix}/${rel}` : rel;
  }

  /** `s3://bucket/prefix/rel`, for messages. */
  show(rel: string): string {
    return `${this.location.url}/${rel}`;
  }

  /** Checks the bucket answers; creates it when missing and `create`. */
  async ensureBucket(create: boolean): Promise<void> {
    const Bucket = this.location.bucket;
    try {
      await this.client.send(new HeadBucketCommand({ Bucket }));
      return;
    } catch (err) {
      if (!isNotFound(err)) throw this.wrap(err, `cannot reach bucket '${Bucket}'`);
    }
    if (!create) throw new StoreError(`no artifact store at ${this.location.url}: bucket '${Bucket}' does not exist`);
    try {
      await this.client.send(new CreateBucketCommand({ Bucket }));
    } catch (err) {
      const name = (err as { name?: string }).name;
      if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw this.wrap(err, `cannot create bucket '${Bucket}'`);
    }
  }

  /** The object's bytes and ETag, or `undefined` when absent. */
  async getBytes(rel: string): Promise<{ body: Buffer; etag: string } | undefined> {
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key: this.key(rel) }));
      const body = Buffer.from(await (r.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
      return { body, etag: r.ETag ?? '' };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw this.wrap(err, `cannot read ${this.show(rel)}`);
    }
  }

  /** A stream over the object's bytes and its size, or `undefined` when absent. */
  async getStream(rel: string): Promise<{ body: Readable; size: number } | undefined> {
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key: this.key(rel) }));
      return { body: r.Body as Readable, size: r.ContentLength ?? -1 };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw this.wrap(err, `cannot read ${this.show(rel)}`);
    }
  }

  /** Size and modification time, or `undefined` when absent. */
  async head(rel: string): Promise<{ size: number; mtimeMs: number } | undefined> {
    try {
      const r = await this.client.send(new HeadObjectCommand({ Bucket: this.location.bucket, Key: this.key(rel) }));
      return { size: r.ContentLength ?? 0, mtimeMs: r.LastModified?.getTime() ?? 0 };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw this.wrap(err, `cannot stat ${this.show(rel)}`);
    }
  }

  /**
   * Writes small bytes. `condition`: `{ ifNoneMatch: '*' }` creates only (the key must not exist), `{ ifMatch: etag }`
   * replaces only that version; a failed condition throws {@link PreconditionFailed}.
   */
  async putBytes(rel: string, body: string | Uint8Array, condition: { ifNoneMatch?: '*'; ifMatch?: string } = {}): Promise<void> {
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.location.bucket,
          Key: this.key(rel),
          Body: body,
          ...defined({ IfNoneMatch: condition.ifNoneMatch, IfMatch: condition.ifMatch }),
        }),
      );
    } catch (err) {
      if (isPreconditionFailure(err)) throw new PreconditionFailed(this.show(rel));
      throw this.wrap(err, `cannot write ${this.show(rel)}`);
    }
  }

  /**
   * Uploads a file of `size` bytes, streamed from disk (never read whole): one PUT below
   * {@link MULTIPART_THRESHOLD}, else a multipart upload of {@link MULTIPART_PART_BYTES} parts, a few at once. The
   * object appears whole or not at all (S3 publishes a multipart upload only when it is completed); a failed upload
   * is aborted.
   */
  async putFile(rel: string, file: string, size: number): Promise<void> {
    const Bucket = this.location.bucket;
    const Key = this.key(rel);
    if (size < MULTIPART_THRESHOLD) {
      try {
        await this.client.send(new PutObjectCommand({ Bucket, Key, Body: createReadStream(file), ContentLength: size }));
      } catch (err) {
        throw this.wrap(err, `cannot upload ${file} to ${this.show(rel)}`);
      }
      return;
    }
    let uploadId: string | undefined;
    try {
      uploadId = (await this.client.send(new CreateMultipartUploadCommand({ Bucket, Key }))).UploadId;
      if (uploadId === undefined) throw new Error('the server returned no UploadId');
      const id = uploadId;
      const parts = Array.from({ length: Math.ceil(size / MULTIPART_PART_BYTES) }, (_, i) => i);
      const etags = await mapPool(parts, PART_CONCURRENCY, async (i) => {
        const start = i * MULTIPART_PART_BYTES;
        const end = Math.min(size, start + MULTIPART_PART_BYTES) - 1;
        const r = await this.client.send(
          new UploadPartCommand({ Bucket, Key, UploadId: id, PartNumber: i + 1, Body: createReadStream(file, { start, end }), ContentLength: end - start + 1 }),
        );
        return { PartNumber: i + 1, ETag: r.ETag };
      });
      await this.client.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId: id, MultipartUpload: { Parts: etags } }));
    } catch (err) {
      if (uploadId !== undefined) await this.client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: uploadId })).catch(() => undefined);
      throw this.wrap(err, `cannot upload ${file} to ${this.show(rel)}`);
    }
  }

  /** Every key under the store-relative prefix `rel`, with size and modification time. */
  async list(rel: string): Promise<S3Listed[]> {
    const out: S3Listed[] = [];
    const base = this.key('');
    let token: string | undefined;
    do {
      let r;
      try {
        r = await this.client.send(new ListObjectsV2Command({ Bucket: this.location.bucket, Prefix: this.key(rel), ContinuationToken: token }));
      } catch (err) {
        throw this.wrap(err, `cannot list ${this.show(rel)}`);
      }
      for (const o of r.Contents ?? []) {
        if (o.Key === undefined) continue;
        out.push({ key: o.Key.slice(base.length), size: o.Size ?? 0, mtimeMs: o.LastModified?.getTime() ?? 0 });
      }
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token !== undefined);
    return out;
  }

  /** Whether any key lies under the store-relative prefix `rel`. */
  async any(rel: string): Promise<boolean> {
    try {
      const r = await this.client.send(new ListObjectsV2Command({ Bucket: this.location.bucket, Prefix: this.key(rel), MaxKeys: 1 }));
      return (r.KeyCount ?? r.Contents?.length ?? 0) > 0;
    } catch (err) {
      throw this.wrap(err, `cannot list ${this.show(rel)}`);
    }
  }

  /** Deletes keys (store-relative), 1000 per request; a key already gone is no error. */
  async delete(rels: readonly string[]): Promise<void> {
    for (let i = 0; i < rels.length; i += 1000) {
      const batch = rels.slice(i, i + 1000);
      let r;
      try {
        r = await this.client.send(new DeleteObjectsCommand({ Bucket: this.location.bucket, Delete: { Objects: batch.map((k) => ({ Key: this.key(k) })), Quiet: true } }));
      } catch (err) {
        throw this.wrap(err, `cannot delete ${batch.length} key(s) under ${this.location.url}`);
      }
      const failed = (r.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
      if (failed[0] !== undefined) throw new StoreError(`cannot delete ${this.location.url}/${failed[0].Key ?? '?'}: ${failed[0].Code ?? ''} ${failed[0].Message ?? ''}`);
    }
  }

  /** Aborts multipart uploads under the store prefix started before `beforeMs` (their writer is gone); returns how many. */
  async abortStaleUploads(beforeMs: number): Promise<number> {
    let n = 0;
    let keyMarker: string | undefined;
    let idMarker: string | undefined;
    for (;;) {
      let r;
      try {
        r = await this.client.send(new ListMultipartUploadsCommand({ Bucket: this.location.bucket, Prefix: this.key(''), KeyMarker: keyMarker, UploadIdMarker: idMarker }));
      } catch (err) {
        throw this.wrap(err, `cannot list the multipart uploads of ${this.location.url}`);
      }
      for (const u of r.Uploads ?? []) {
        if (u.Key === undefined || u.UploadId === undefined || (u.Initiated?.getTime() ?? 0) >= beforeMs) continue;
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.location.bucket, Key: u.Key, UploadId: u.UploadId })).catch(() => undefined);
        n++;
      }
      if (!r.IsTruncated) return n;
      keyMarker = r.NextKeyMarker;
      idMarker = r.NextUploadIdMarker;
    }
  }

  /** Closes the client's connections. */
  destroy(): void {
    this.client.destroy();
  }

  private wrap(err: unknown, what: string): StoreError {
    const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
    const status = e.$metadata?.httpStatusCode;
    return new StoreError(`${what}: ${e.name ?? 'error'}${status === undefined ? '' : ` (HTTP ${status})`}: ${e.message ?? String(err)}`, { cause: err });
  }
}

function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

function isNotFound(err: unknown): boolean {
  const name = (err as { name?: string }).name;
  return name === 'NoSuchKey' || name === 'NotFound' || name === 'NoSuchBucket' || statusOf(err) === 404;
}

/** 412, or 409 `ConditionalRequestConflict` (AWS: another conditional write to the key was in flight). */
function isPreconditionFailure(err: unknown): boolean {
  const name = (err as { name?: string }).name;
  return name === 'PreconditionFailed' || name === 'ConditionalRequestConflict' || statusOf(err) === 412 || statusOf(err) === 409;
}
