import type { Action } from '../../core/types.js';
import type { ExecResult, Sandbox } from '../../sandbox/index.js';
import { WORK_DIR } from '../../sandbox/index.js';

/** What one tool call produced: the observation plus facts for `info`. */
export interface ToolOutcome {
  observation: string;
  exitCode: number;
  truncated: boolean;
  durationMs: number;
  /** The call was refused before running (path outside /work, forbidden git option). */
  refused?: boolean;
  timedOut?: boolean;
  replaced?: boolean;
}

/** Exit status the path guard uses for "outside the work directory". */
const REFUSED = 90;
const NOT_FOUND = 91;

/**
 * Resolves `$1` with `realpath -m` inside the container (so `..` and symlinks are followed there, where
 * they live) and refuses anything outside /work. Fixed text: arguments reach it only as argv (`"$1"`).
 */
const GUARD = `
p=$(realpath -m -- "$1") || exit ${REFUSED}
case "$p" in ${WORK_DIR}|${WORK_DIR}/*) ;; *) printf 'refused: %s resolves to %s, outside the work directory ${WORK_DIR}\\n' "$1" "$p"; exit ${REFUSED} ;; esac
`;

const READ_SCRIPT = `${GUARD}
[ -d "$p" ] && { printf 'is a directory, not a file: %s (list it with the shell tool: ls)\\n' "$1"; exit ${NOT_FOUND}; }
[ -f "$p" ] || { printf 'no such file: %s\\n' "$1"; exit ${NOT_FOUND}; }
if [ -n "$2" ]; then exec sed -n "$2,$3p" -- "$p"; fi
exec cat -- "$p"
`;

const WRITE_SCRIPT = `${GUARD}
[ -d "$p" ] && { printf 'is a directory: %s\\n' "$1"; exit ${NOT_FOUND}; }
mkdir -p -- "$(dirname -- "$p")" && cat > "$p"
`;

const SEARCH_SCRIPT = `${GUARD}
pattern="$2"; glob="$3"
if [ -n "$glob" ]; then exec grep -rnI -E --exclude-dir=.git --include="$glob" -e "$pattern" -- "$p"; fi
exec grep -rnI -E --exclude-dir=.git -e "$pattern" -- "$p"
`;

function outcome(r: ExecResult, observation: string, extra: Partial<ToolOutcome> = {}): ToolOutcome {
  const o: ToolOutcome = { observation, exitCode: r.exitCode, truncated: r.truncated, durationMs: r.durationMs, ...extra };
  if (r.timedOut) o.timedOut = true;
  if (r.replaced) o.replaced = true;
  return o;
}

function status(r: ExecResult, timeoutS: number, memoryMiB: number): string {
  if (r.timedOut) return `[killed: time limit of ${timeoutS}s exceeded]`;
  if (r.exitCode === 137) return `[killed (exit 137): out of memory (limit ${memoryMiB} MiB) or killed]`;
  return `[exit code ${r.exitCode}]`;
}

/** `file_read`: a file in /work, optionally lines `start_line`..`end_line` (1-based, inclusive). */
export async function fileRead(sb: Sandbox, path: string, start?: number, end?: number): Promise<ToolOutcome> {
  if (start !== undefined && end !== undefined && start > end) {
    return { observation: `Error: start_line ${start} is after end_line ${end}`, exitCode: 2, truncated: false, durationMs: 0, refused: true };
  }
  const range = start === undefined && end === undefined ? ['', ''] : [String(start ?? 1), end === undefined ? '$' : String(end)];
  const r = await sb.exec(['sh', '-c', READ_SCRIPT, 'file_read', path, ...range]);
  if (r.exitCode === REFUSED) return outcome(r, `Error: ${r.output.trim()}`, { refused: true });
  if (r.exitCode !== 0) return outcome(r, `Error: ${r.output.trim() || `cannot read ${path}`}`);
  return outcome(r, r.output === '' ? '(empty)' : r.output);
}

/** `file_write`: replaces a whole file in /work (parent directories created); content goes in on stdin. */
export async function fileWrite(sb: Sandbox, path: string, content: string): Promise<ToolOutcome> {
  const r = await sb.exec(['sh', '-c', WRITE_SCRIPT, 'file_write', path], { stdin: Buffer.from(content, 'utf8') });
  if (r.exitCode === REFUSED) return outcome(r, `Error: ${r.output.trim()}`, { refused: true });
  if (r.exitCode !== 0) return outcome(r, `Error: cannot write ${path}: ${r.output.trim()}`);
  return outcome(r, `Wrote ${Buffer.byteLength(content, 'utf8')} bytes to ${path}.`);
}

/** `shell`: `bash -c command` in /work with a time limit. */
export async function shellTool(sb: Sandbox, command: string, timeoutS: number): Promise<ToolOutcome> {
  const r = await sb.exec(['bash', '-c', command], { timeoutS });
  return outcome(r, `${r.output}${r.output === '' || r.output.endsWith('\n') ? '' : '\n'}${status(r, timeoutS, sb.config.memoryMiB)}`);
}

/** `search`: `grep -rnIE` for `pattern` under `path` (default /work), optionally only files matching `glob`. */
export async function searchTool(sb: Sandbox, pattern: string, path = '.', glob = ''): Promise<ToolOutcome> {
  const r = await sb.exec(['sh', '-c', SEARCH_SCRIPT, 'search', path, pattern, glob]);
  if (r.exitCode === REFUSED) return outcome(r, `Error: ${r.output.trim()}`, { refused: true });
  if (r.exitCode === 1 && r.output === '') return outcome(r, 'No matches.');
  if (r.exitCode > 1) return outcome(r, `Error: ${r.output.trim()}`);
  // Paths relative to /work read better and do not leak the layout.
  return outcome(r, r.output.split(`${WORK_DIR}/`).join(''));
}

/** git subcommands the `git` tool allows. */
export const GIT_SUBCOMMANDS = ['status', 'diff', 'log', 'add', 'commit', 'checkout'] as const;

/** Options that would write outside the work dir, run programs or change configuration. */
const FORBIDDEN_GIT_OPTION = /^(--output|--exec|--upload-pack|--receive-pack|--ext-diff|--textconv|-c$|--config|--git-dir|--work-tree|--exec-path|-o$|--orphan|-b$|-B$|--detach)/;

/**
 * `git <subcommand> args…` without a shell (argv only). `checkout` restores files only: arguments before
 * `--` may name one commit; without `--` every argument is a path.
 */
export async function gitTool(sb: Sandbox, subcommand: (typeof GIT_SUBCOMMANDS)[number], args: readonly string[]): Promise<ToolOutcome> {
  const bad = args.find((a) => FORBIDDEN_GIT_OPTION.test(a));
  if (bad !== undefined) {
    return { observation: `Error: git option '${bad}' is not allowed`, exitCode: 2, truncated: false, durationMs: 0, refused: true };
  }
  let argv = [...args];
  if (subcommand === 'checkout') {
    const sep = argv.indexOf('--');
    if (sep < 0) argv = ['--', ...argv];
    else if (sep > 1 || (sep === 1 && (argv[0] as string).startsWith('-'))) {
      return { observation: 'Error: git checkout restores files only: use [<commit>] -- <paths>', exitCode: 2, truncated: false, durationMs: 0, refused: true };
    }
  }
  const r = await sb.exec(['git', '--no-pager', subcommand, ...argv]);
  const text = r.output === '' ? (r.exitCode === 0 ? '(no output)\n' : '') : r.output;
  return outcome(r, `${text}${text.endsWith('\n') ? '' : '\n'}[exit code ${r.exitCode}]`);
}

/** Time limits of the `shell` tool. */
export interface ShellLimits {
  /** When the call names none. */
  shellTimeoutS: number;
  /** The most a call may ask for. */
  maxShellTimeoutS: number;
}

/**
 * Runs one schema-valid non-terminal coding tool call (`file_read`, `file_write`, `shell`, `search`, `git`)
 * in a sandbox. `submit` is the environment's business (it needs the task).
 */
export async function dispatchTool(sb: Sandbox, action: Action, limits: ShellLimits): Promise<ToolOutcome> {
  const p = action.params;
  switch (action.tool) {
    case 'file_read':
      return fileRead(sb, p.path as string, p.start_line as number | undefined, p.end_line as number | undefined);
    case 'file_write':
      return fileWrite(sb, p.path as string, p.content as string);
    case 'shell':
      return shellTool(sb, p.command as string, Math.min((p.timeout_s as number | undefined) ?? limits.shellTimeoutS, limits.maxShellTimeoutS));
    case 'search':
      return searchTool(sb, p.pattern as string, (p.path as string | undefined) ?? '.', (p.glob as string | undefined) ?? '');
    case 'git':
      return gitTool(sb, p.subcommand as (typeof GIT_SUBCOMMANDS)[number], (p.args as string[] | undefined) ?? []);
    default:
      return { observation: `Error: unknown tool '${action.tool}'`, exitCode: 2, truncated: false, durationMs: 0, refused: true };
  }
}

/**
 * The step `info` of a {@link dispatchTool} outcome, as the coding environments report it: exit code,
 * truncation and duration always; `error` (code `tool_failed`) when the call was refused, `timedOut` and
 * `sandboxReplaced` when they happened.
 */
export function toolStepInfo(o: ToolOutcome): Record<string, unknown> {
  const info: Record<string, unknown> = { exitCode: o.exitCode, truncated: o.truncated, durationMs: Math.round(o.durationMs) };
  if (o.refused) info.error = { code: 'tool_failed', message: o.observation };
  if (o.timedOut) info.timedOut = true;
  if (o.replaced) info.sandboxReplaced = true;
  return info;
}
