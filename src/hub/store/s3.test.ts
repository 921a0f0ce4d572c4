import { describe, expect, it } from 'vitest';
import { isS3Url, parseS3Url, s3ClientConfig } from './s3.js';

describe('s3:// store URLs and client configuration', () => {
  it('parses bucket and prefix, and names what is wrong with a bad URL', () => {
    expect(isS3Url('s3://b/x')).toBe(true);
    expect(isS3Url('/data/store')).toBe(false);
    expect(parseS3Url('s3://gymflow/runs/exp1/')).toEqual({ bucket: 'gymflow', prefix: 'runs/exp1', url: 's3://gymflow/runs/exp1' });
    expect(parseS3Url('s3://gymflow')).toEqual({ bucket: 'gymflow', prefix: '', url: 's3://gymflow' });
    expect(() => parseS3Url('s3://Bad_Bucket/x')).toThrow("store URL 's3://Bad_Bucket/x': bucket 'Bad_Bucket' is not a valid bucket name");
    expect(() => parseS3Url('s3:///x')).toThrow("store URL 's3:///x': expected s3://bucket/prefix");
    expect(() => parseS3Url('s3://bucket/a/../b')).toThrow(/prefix 'a\/..\/b' has an empty, '.' or '..' segment/);
  });

  it('reads endpoint, region and credentials from GYMFLOW_S3_* first, then AWS_*', async () => {
    const c = s3ClientConfig({ GYMFLOW_S3_ENDPOINT: 'http://127.0.0.1:8333', GYMFLOW_S3_ACCESS_KEY: 'k', GYMFLOW_S3_SECRET_KEY: 's', AWS_REGION: 'eu-west-1' });
    expect(c).toMatchObject({ endpoint: 'http://127.0.0.1:8333', forcePathStyle: true, region: 'eu-west-1', credentials: { accessKeyId: 'k', secretAccessKey: 's' } });
    const aws = s3ClientConfig({ AWS_ENDPOINT_URL: 'http://minio:9000' });
    expect(aws).toMatchObject({ endpoint: 'http://minio:9000', region: 'us-east-1' });
    expect(aws.credentials).toBeUndefined();
    expect(s3ClientConfig({}).endpoint).toBeUndefined();
    expect(() => s3ClientConfig({ GYMFLOW_S3_ACCESS_KEY: 'k' })).toThrow('set both $GYMFLOW_S3_ACCESS_KEY and $GYMFLOW_S3_SECRET_KEY, or neither');
    expect(() => s3ClientConfig({ GYMFLOW_S3_ENDPOINT: 'localhost 8333' })).toThrow("$GYMFLOW_S3_ENDPOINT 'localhost 8333' is not a URL");
  });
});
