import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkspaceRoot, WorkspacePathError } from './root.js';

describe('WorkspaceRoot: paths confined to the root', () => {
  let base = '';
  let root: WorkspaceRoot;
  const outside = (): string => join(base, 'outside');

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'gymflow-root-'));
    mkdirSync(join(base, 'ws', 'logs', 'deep'), { recursive: true });
    mkdirSync(join(base, 'outside'));
    writeFileSync(join(base, 'ws', 'logs', 'a.jsonl'), '{}\n');
    writeFileSync(join(base, 'outside', 'secret.txt'), 'secret\n');
    symlinkSync(join(base, 'outside', 'secret.txt'), join(base, 'ws', 'link-out.txt'));
    symlinkSync(join(base, 'outside'), join(base, 'ws', 'dir-out'));
    symlinkSync(join(base, 'ws', 'logs', 'a.jsonl'), join(base, 'ws', 'link-in.jsonl'));
    symlinkSync(join(base, 'nowhere'), join(base, 'ws', 'dangling'));
    mkdirSync(join(base, 'ws', 'mixed', 'sub'), { recursive: true });
    writeFileSync(join(base, 'ws', 'mixed', 'ok.jsonl'), '{}\n');
    symlinkSync(join(base, 'outside'), join(base, 'ws', 'mixed', 'sub', 'out'));
    root = await WorkspaceRoot.open(join(base, 'ws'));
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('resolves inputs relative to the root, and absolute ones inside it', async () => {
    expect(await root.input('logs/a.jsonl', 'path')).toBe(join(base, 'ws', 'logs', 'a.jsonl'));
    expect(await root.input(join(base, 'ws', 'logs'), 'path')).toBe(join(base, 'ws', 'logs'));
    expect(await root.input('logs/deep/../a.jsonl', 'path')).toBe(join(base, 'ws', 'logs', 'a.jsonl'));
    // A link that stays inside is fine.
    expect(await root.input('link-in.jsonl', 'path')).toBe(join(base, 'ws', 'link-in.jsonl'));
    expect(root.show(join(base, 'ws', 'logs', 'a.jsonl'))).toBe(join('logs', 'a.jsonl'));
  });

  it('refuses .., absolute paths outside, and links out, naming the field', async () => {
    await expect(root.input('../outside/secret.txt', 'path')).rejects.toThrow(/^path: \.\.\/outside\/secret\.txt is outside the workspace root/);
    await expect(root.input(join(outside(), 'secret.txt'), 'file')).rejects.toThrow(WorkspacePathError);
    await expect(root.input(join(outside(), 'secret.txt'), 'file')).rejects.toThrow(/^file: .* is outside the workspace root/);
    await expect(root.input('link-out.txt', 'path')).rejects.toThrow(/path: link-out\.txt is outside the workspace root .*a link resolves to .*outside\/secret\.txt/);
    await expect(root.input('dir-out/secret.txt', 'path')).rejects.toThrow(/outside the workspace root/);
    await expect(root.input('dangling', 'path')).rejects.toThrow(/path: dangling is a link to nothing/);
    await expect(root.input('logs/missing.jsonl', 'path')).rejects.toThrow(/path: logs\/missing\.jsonl: no such file or directory/);
    await expect(root.input('', 'path')).rejects.toThrow(/path: empty path/);
  });

  it('checks outputs: the directory must be inside, and an existing link must resolve inside', async () => {
    expect(await root.output('logs/new.jsonl', 'out')).toBe(join(base, 'ws', 'logs', 'new.jsonl'));
    await expect(root.output('../escape.jsonl', 'out')).rejects.toThrow(/^out: \.\.\/escape\.jsonl is outside the workspace root/);
    await expect(root.output('dir-out/new.txt', 'out')).rejects.toThrow(/out: dir-out\/new\.txt is outside the workspace root .*a link resolves to/);
    await expect(root.output('link-out.txt', 'out')).rejects.toThrow(/out: link-out\.txt is outside the workspace root/);
    await expect(root.output('dangling', 'out')).rejects.toThrow(/refusing to write through it/);
    await expect(root.output('no/such/dir/x.jsonl', 'out')).rejects.toThrow(/out: no\/such\/dir\/x\.jsonl: its directory no\/such\/dir does not exist/);
  });

  it('walks a directory input and refuses one whose files lead out by a link', async () => {
    expect(await root.inputTree('logs', 'path')).toBe(join(base, 'ws', 'logs'));
    await expect(root.inputTree('mixed', 'path')).rejects.toThrow(/^path \(in mixed\): mixed\/sub\/out\/secret\.txt is outside the workspace root .*a link resolves to/);
    await expect(root.inputTree('.', 'path')).rejects.toThrow(/^path: (dangling|dir-out|link-out).* \(in \.\)|^path \(in \.\): /);
  });

  it('takes a name that is no file as a name, but no path outside', async () => {
    expect(await root.inputOrName('my-dataset', 'in[0]')).toBe('my-dataset');
    expect(await root.inputOrName('logs/a.jsonl', 'in[0]')).toBe(join(base, 'ws', 'logs', 'a.jsonl'));
    await expect(root.inputOrName('/etc/passwd', 'in[1]')).rejects.toThrow(/^in\[1\]: \/etc\/passwd is outside the workspace root/);
  });

  it('opens only an existing directory as the root', async () => {
    await expect(WorkspaceRoot.open(join(base, 'nope'))).rejects.toThrow(/--root .*nope: no such directory/);
    await expect(WorkspaceRoot.open(join(base, 'ws', 'logs', 'a.jsonl'))).rejects.toThrow(/not a directory/);
  });
});
