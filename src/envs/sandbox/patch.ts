import { TaskError } from '../../core/errors.js';

/** The files a unified diff touches, by path: new content, or `null` for a deletion. */
export type PatchResult = Map<string, string | null>;

interface Hunk {
  oldStart: number;
  lines: string[];
}

interface FilePatch {
  oldPath: string | null;
  newPath: string | null;
  hunks: Hunk[];
}

function stripPrefix(p: string): string | null {
  const path = p.split('\t')[0] ?? p;
  if (path === '/dev/null') return null;
  return path.replace(/^[ab]\//, '');
}

/** Parses a unified diff (`git diff` or `diff -u` output) into per-file hunks. */
export function parseUnifiedDiff(diff: string): FilePatch[] {
  const lines = diff.split('\n');
  const files: FilePatch[] = [];
  let current: FilePatch | undefined;
  let hunk: Hunk | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.startsWith('--- ') && (lines[i + 1] ?? '').startsWith('+++ ')) {
      current = { oldPath: stripPrefix(line.slice(4)), newPath: stripPrefix((lines[i + 1] as string).slice(4)), hunks: [] };
      files.push(current);
      hunk = undefined;
      i += 1;
      continue;
    }
    const m = /^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@/.exec(line);
    if (m && current) {
      hunk = { oldStart: Number(m[1]), lines: [] };
      current.hunks.push(hunk);
      continue;
    }
    if (hunk && (line.startsWith(' ') || line.startsWith('+') || line.startsWith('-'))) hunk.lines.push(line);
    else if (hunk && line === '' && i < lines.length - 1) hunk.lines.push(' ');
    else if (line.startsWith('\\')) continue;
    else hunk = undefined;
  }
  return files;
}

/**
 * Applies a unified diff to files held in memory (exact context match, searching near the stated line when
 * it moved). Returns only the files the diff touches. Throws a {@link TaskError} naming the file and hunk
 * that do not apply.
 */
export function applyUnifiedDiff(files: Readonly<Record<string, string>>, diff: string, label = 'patch'): PatchResult {
  const out: PatchResult = new Map();
  for (const fp of parseUnifiedDiff(diff)) {
    const target = fp.newPath ?? fp.oldPath;
    if (target === null) continue;
    if (fp.newPath === null) {
      out.set(fp.oldPath as string, null);
      continue;
    }
    const source = fp.oldPath === null ? '' : (out.get(fp.oldPath) ?? files[fp.oldPath]);
    if (source === undefined || source === null) throw new TaskError(`${label}: ${fp.oldPath ?? target} does not exist in the base state`);
    const hadNewline = source.endsWith('\n') || source === '';
    const src = source === '' ? [] : source.replace(/\n$/, '').split('\n');
    const result: string[] = [];
    let pos = 0;
    fp.hunks.forEach((h, hi) => {
      const old = h.lines.filter((l) => !l.startsWith('+')).map((l) => l.slice(1));
      const want = Math.max(0, h.oldStart - 1);
      let at = -1;
      for (let delta = 0; delta <= src.length && at < 0; delta++) {
        for (const cand of delta === 0 ? [want] : [want - delta, want + delta]) {
          if (cand >= pos && cand + old.length <= src.length && old.every((l, k) => src[cand + k] === l)) {
            at = cand;
            break;
          }
        }
      }
      if (at < 0) throw new TaskError(`${label}: hunk ${hi + 1} of ${target} does not apply (context not found near line ${h.oldStart})`);
      result.push(...src.slice(pos, at));
      for (const l of h.lines) if (!l.startsWith('-')) result.push(l.slice(1));
      pos = at + old.length;
    });
    result.push(...src.slice(pos));
    out.set(target, result.length === 0 ? '' : result.join('\n') + (hadNewline ? '\n' : ''));
    if (fp.oldPath !== null && fp.oldPath !== target) out.set(fp.oldPath, null);
  }
  return out;
}
