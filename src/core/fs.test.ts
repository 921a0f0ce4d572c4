import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { atomicWrite, ensureDir, fsyncDir, isErrno, moveInto, pathExists, processAlive, siblingTempPath, touch, writeSynced } from './fs.js';

const fresh = (): string => mkdtempSync(join(tmpdir(), 'gymflow-fs-'));

describe('isErrno', () => {
  it('matches a system error by code and nothing else', async () => {
    const err: unknown = await readFile(join(fresh(), 'missing')).catch((e: unknown) => e);
    expect(isErrno(err, 'ENOENT')).toBe(true);
    expect(isErrno(err, 'EEXIST')).toBe(false);
    for (const other of [undefined, null, 'ENOENT', new Error('ENOENT'), { code: 2 }]) expect(isErrno(other, 'ENOENT')).toBe(false);
  });
});

describe('processAlive', () => {
  it('is true for this process and false for one that has exited', () => {
    expect(processAlive(process.pid)).toBe(true);
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    expect(processAlive(Number(child.stdout))).toBe(false);
  });
});

describe('pathExists and touch', () => {
  it('sees files, directories and dangling links; touch renews the times of what exists', async () => {
    const dir = fresh();
    const file = join(dir, 'f');
    writeFileSync(file, 'x');
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'));
    expect(await pathExists(file)).toBe(true);
    expect(await pathExists(dir)).toBe(true);
    expect(await pathExists(join(dir, 'dangling'))).toBe(true);
    expect(await pathExists(join(dir, 'missing'))).toBe(false);
    await expect(pathExists(join(file, 'under-a-file'))).rejects.toMatchObject({ code: 'ENOTDIR' });

    utimesSync(file, new Date(0), new Date(0));
    expect(await touch(file)).toBe(true);
    expect(statSync(file).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
    expect(await touch(join(dir, 'missing'))).toBe(false);
  });
});

describe('ensureDir and fsyncDir', () => {
  it('creates every missing directory, and syncs an existing one', async () => {
    const dir = fresh();
    await ensureDir(join(dir, 'a', 'b', 'c'));
    expect(statSync(join(dir, 'a', 'b', 'c')).isDirectory()).toBe(true);
    await ensureDir(join(dir, 'a', 'b', 'c'));
    await fsyncDir(join(dir, 'a'));
    await expect(fsyncDir(join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('atomicWrite', () => {
  it('publishes the whole content under the name, creates the directory and leaves no temp file', async () => {
    const dir = fresh();
    const dest = join(dir, 'new', 'record.json');
    await atomicWrite(dest, '{"a":1}\n');
    expect(readFileSync(dest, 'utf8')).toBe('{"a":1}\n');
    expect(readdirSync(join(dir, 'new'))).toEqual(['record.json']);
    // replaces an existing file whole
    await atomicWrite(dest, new Uint8Array([104, 105]));
    expect(readFileSync(dest, 'utf8')).toBe('hi');
    expect(readdirSync(join(dir, 'new'))).toEqual(['record.json']);
  });

  it('writes through a given temp file with the given mode', async () => {
    const dir = fresh();
    mkdirSync(join(dir, 'tmp'));
    await atomicWrite(join(dir, 'out', 'ro'), 'x', { tmp: join(dir, 'tmp', 't1'), mode: 0o444 });
    expect(statSync(join(dir, 'out', 'ro')).mode & 0o777).toBe(0o444);
    expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
  });

  it('names its default temp file beside the target, hidden', () => {
    expect(siblingTempPath('/data/out.jsonl')).toMatch(/^\/data\/\.out\.jsonl\.\d+\.[0-9a-f]{12}\.tmp$/);
    expect(siblingTempPath('/data/out.jsonl')).not.toBe(siblingTempPath('/data/out.jsonl'));
  });
});

describe('writeSynced and moveInto', () => {
  it('refuses to overwrite an existing temp file, and moves into a directory it creates', async () => {
    const dir = fresh();
    const tmp = join(dir, 't');
    await writeSynced(tmp, 'one');
    await expect(writeSynced(tmp, 'two')).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readFileSync(tmp, 'utf8')).toBe('one');
    await moveInto(tmp, join(dir, 'x', 'y', 'dest'));
    expect(readFileSync(join(dir, 'x', 'y', 'dest'), 'utf8')).toBe('one');
    expect(await pathExists(tmp)).toBe(false);
  });
});
