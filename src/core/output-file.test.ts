import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, OutputExistsError } from './errors.js';
import { AtomicFile, assertNotAnInput, checkNewOutput, writeFileAtomically } from './output-file.js';

describe('AtomicFile', () => {
  it('shows nothing under the target until commit, then the whole text, and creates the directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-out-'));
    const target = join(dir, 'new', 'deeper', 'out.jsonl');
    const file = await AtomicFile.open(target);
    await file.write('a\n');
    await file.write('b'.repeat(2 << 20));
    expect(readdirSync(join(dir, 'new', 'deeper'))).toEqual([expect.stringMatching(/^\.out\.jsonl\.\d+\.[0-9a-f]+\.tmp$/)]);
    await file.commit();
    expect(readFileSync(target, 'utf8')).toBe(`a\n${'b'.repeat(2 << 20)}`);
    expect(readdirSync(join(dir, 'new', 'deeper'))).toEqual(['out.jsonl']);
  });

  it('writes every piece in order, whole, however the pieces fall across its chunks: multi-byte text, bytes, large pieces', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-out-'));
    const target = join(dir, 'mixed.txt');
    const file = await AtomicFile.open(target);
    const pieces: (string | Uint8Array)[] = [];
    // Lines of ASCII, 2-, 3- and 4-byte characters and a lone surrogate, sized to end at every offset of a chunk.
    for (let i = 0; i < 3000; i++) pieces.push(`${i} ${'aé€😀'.repeat(i % 97)}${i % 500 === 0 ? '\ud800' : ''}\n`);
    pieces.splice(1000, 0, new TextEncoder().encode('raw bytes\n'), 'x'.repeat(1 << 20), 'é'.repeat(3 << 20), '\n');
    for (const p of pieces) await file.write(p);
    await file.commit();
    const expected = Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
    expect(readFileSync(target).equals(expected)).toBe(true);
  });

  it('keeps an existing target on abort and leaves no temporary file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-out-'));
    const target = join(dir, 'kept.jsonl');
    writeFileSync(target, 'earlier work\n');
    const file = await AtomicFile.open(target);
    await file.write('half of the new');
    await file.abort();
    expect(readFileSync(target, 'utf8')).toBe('earlier work\n');
    expect(readdirSync(dir)).toEqual(['kept.jsonl']);
  });

  it('names the target, not a temporary file, when it cannot be written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-out-'));
    mkdirSync(join(dir, 'adir'));
    writeFileSync(join(dir, 'afile'), '');
    await expect(writeFileAtomically(join(dir, 'adir'), 'x')).rejects.toThrow(new ConfigError(`cannot write ${join(dir, 'adir')}: is a directory`));
    await expect(writeFileAtomically(join(dir, 'afile', 'x.json'), 'x')).rejects.toThrow(/^cannot write .*afile\/x\.json: /);
    expect(readdirSync(dir).sort()).toEqual(['adir', 'afile']);
    expect(readdirSync(join(dir, 'adir'))).toEqual([]);
  });
});

describe('assertNotAnInput', () => {
  it('refuses an output that is an input, through a link too, and allows stdout and other files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-out-'));
    const log = join(dir, 'log.jsonl');
    writeFileSync(log, '{}\n');
    symlinkSync(log, join(dir, 'link.jsonl'));
    await expect(assertNotAnInput(log, [join(dir, 'other'), log])).rejects.toThrow(`-o ${log}: is the input ${log}; writing it would replace what is being read`);
    await expect(assertNotAnInput(join(dir, 'link.jsonl'), [log])).rejects.toThrow(/is the input/);
    await expect(assertNotAnInput(join(dir, '.', 'log.jsonl'), [log], '--out')).rejects.toThrow(/^--out /);
    await expect(assertNotAnInput('-', [log])).resolves.toBeUndefined();
    await expect(assertNotAnInput(join(dir, 'new.jsonl'), [log, dir])).resolves.toBeUndefined();
  });
});

describe('AtomicFile with replace: false', () => {
  it('keeps a file another process wrote since the check, and says where this output went instead', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-out-'));
    const target = join(dir, 'runs.jsonl');
    const mine = await AtomicFile.open(target, { replace: false });
    await mine.write('this run\n');
    writeFileSync(target, 'the other run\n'); // two runs given the same -o
    const err = await mine.commit().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(OutputExistsError);
    const kept = /this output is in (\S+)$/.exec((err as Error).message)?.[1] as string;
    expect((err as Error).message).toMatch(new RegExp(`^output ${target} was written by another process while this command ran; it is left as it is`));
    expect(readFileSync(target, 'utf8')).toBe('the other run\n');
    expect(readFileSync(kept, 'utf8')).toBe('this run\n');
    expect(readdirSync(dir).sort()).toEqual([basename(kept), 'runs.jsonl'].sort()); // no temporary file left
  });

  it('creates a new file, replaces an empty one, and (by default) replaces anything', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-out-'));
    await writeFileAtomically(join(dir, 'new.json'), 'a', { replace: false });
    writeFileSync(join(dir, 'empty.json'), '');
    await writeFileAtomically(join(dir, 'empty.json'), 'b', { replace: false });
    writeFileSync(join(dir, 'full.json'), 'old');
    await writeFileAtomically(join(dir, 'full.json'), 'c');
    expect(['new.json', 'empty.json', 'full.json'].map((f) => readFileSync(join(dir, f), 'utf8'))).toEqual(['a', 'b', 'c']);
    expect(readdirSync(dir).sort()).toEqual(['empty.json', 'full.json', 'new.json']);
  });
});

describe('checkNewOutput', () => {
  it('refuses to replace a file with content unless forced, naming it and --force; an absent or empty file and stdout pass', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-out-'));
    const kept = join(dir, 'results.jsonl');
    writeFileSync(kept, 'hours of episodes\n');
    await expect(checkNewOutput(kept)).rejects.toThrow(new OutputExistsError(`output ${kept} already exists (pass --force to replace it, or choose another path)`));
    await expect(checkNewOutput(kept)).rejects.toBeInstanceOf(ConfigError); // CONFIG_ERROR: never retried
    expect(readFileSync(kept, 'utf8')).toBe('hours of episodes\n');
    await expect(checkNewOutput(kept, { force: true })).resolves.toBeUndefined();
    writeFileSync(join(dir, 'empty.jsonl'), ''); // e.g. made by mktemp: nothing to lose
    await expect(checkNewOutput(join(dir, 'empty.jsonl'))).resolves.toBeUndefined();
    await expect(checkNewOutput(join(dir, 'new', 'x.jsonl'))).resolves.toBeUndefined();
    await expect(checkNewOutput('-', { stdout: true })).resolves.toBeUndefined();
  });

  it('refuses - for an output that cannot go to stdout, which would otherwise become a file named -', async () => {
    await expect(checkNewOutput('-')).rejects.toThrow("output '-': this output cannot go to stdout; give a file path");
    await expect(writeFileAtomically('-', 'x')).rejects.toThrow("cannot write '-' as a file");
  });

  it('keeps the path checks whatever --force, and never replaces a device', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-out-'));
    mkdirSync(join(dir, 'adir'));
    writeFileSync(join(dir, 'afile'), '');
    await expect(checkNewOutput(join(dir, 'adir'), { force: true })).rejects.toThrow(`cannot write ${join(dir, 'adir')}: is a directory`);
    await expect(checkNewOutput(join(dir, 'afile', 'x.json'), { force: true })).rejects.toThrow(/afile is a file, not a directory/);
    await expect(checkNewOutput('/dev/null', { force: true })).rejects.toThrow('output /dev/null is not a regular file or a directory; it is never replaced');
  });

  it('treats any directory as an existing directory output, even an empty one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-out-'));
    await expect(checkNewOutput(dir, { directory: true })).rejects.toThrow(`output ${dir} already exists (pass --force`);
    await expect(checkNewOutput(dir, { directory: true, force: true })).resolves.toBeUndefined();
    await expect(checkNewOutput(join(dir, 'data'), { directory: true })).resolves.toBeUndefined();
    writeFileSync(join(dir, 'afile'), 'x');
    await expect(checkNewOutput(join(dir, 'afile', 'data'), { directory: true })).rejects.toThrow(/afile is a file, not a directory/);
  });
});
