import { createRequire } from 'node:module';
import { Readable } from 'node:stream';

// tar-stream (and streamx under it) loads on first use: listing the sandbox env (`gymflow envs`) packs nothing.
const require = createRequire(import.meta.url);
const tarStream = (): typeof import('tar-stream') => require('tar-stream') as typeof import('tar-stream');

/** One regular file (or directory, or symlink) of a tar archive, content in memory. */
export interface TarEntry {
  /** Path relative to the archive root, without a leading `./`. */
  path: string;
  type: 'file' | 'directory' | 'symlink';
  /** File content (empty for directories and symlinks). */
  content: Buffer;
  /** Unix mode bits (e.g. 0o644). */
  mode: number;
  /** Symlink target. */
  linkname?: string;
}

/**
 * Packs files into a tar archive (in memory). Parent directories are implied; `uid`/`gid` 1000 so files
 * extracted by root still belong to the sandbox's `agent` user.
 *
 * @example
 * ```ts
 * const tar = await packTar([{ path: 'src/a.py', content: 'print(1)\n' }]);
 * ```
 */
export async function packTar(
  files: readonly { path: string; content: string | Buffer; mode?: number }[],
): Promise<Buffer> {
  const p = tarStream().pack();
  const chunks: Buffer[] = [];
  p.on('data', (c: unknown) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve, reject) => {
    p.on('end', () => resolve());
    p.on('error', reject);
  });
  for (const f of files) {
    const content = typeof f.content === 'string' ? Buffer.from(f.content, 'utf8') : f.content;
    await new Promise<void>((resolve, reject) => {
      p.entry({ name: f.path, size: content.length, mode: f.mode ?? 0o644, uid: 1000, gid: 1000, mtime: new Date(0) }, content, (err) => (err ? reject(err) : resolve()));
    });
  }
  p.finalize();
  await done;
  return Buffer.concat(chunks);
}

/** Reads every entry of a tar archive held in memory. Paths lose their leading `./`. */
export async function unpackTar(archive: Buffer): Promise<TarEntry[]> {
  const ex = tarStream().extract();
  const entries: TarEntry[] = [];
  ex.on('entry', (header, stream, next) => {
    const parts: Buffer[] = [];
    stream.on('data', (c: unknown) => parts.push(c as Buffer));
    stream.on('end', () => {
      const path = header.name.replace(/^\.\//, '').replace(/\/$/, '');
      if (path !== '' && path !== '.') {
        const type = header.type === 'directory' ? 'directory' : header.type === 'symlink' ? 'symlink' : 'file';
        const entry: TarEntry = { path, type, content: Buffer.concat(parts), mode: header.mode ?? 0o644 };
        if (header.linkname) entry.linkname = header.linkname;
        entries.push(entry);
      }
      next();
    });
    stream.resume();
  });
  const done = new Promise<void>((resolve, reject) => {
    ex.on('finish', () => resolve());
    ex.on('error', reject);
  });
  Readable.from([archive]).pipe(ex);
  await done;
  return entries;
}
