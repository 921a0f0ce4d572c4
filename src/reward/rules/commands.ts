/**
 * What the rules need to know about an `execute` action: whether it is read-only (so it changes no
 * state and invalidates no earlier read), and which git invocations in it can discard work.
 *
 * Shell parsing here is deliberately shallow — split on `;`, `&`, `|` and newlines, words on whitespace,
 * no quote handling — and errs towards "not read-only": a command it cannot vouch for is assumed to
 * change state, which can only make the redundancy rule miss a repeat, never invent one.
 */

/** One `git` invocation: its subcommand and the words after it. */
export interface GitInvocation {
  readonly subcommand: string;
  readonly args: readonly string[];
}

/** What an execute action does, as far as the rules can tell. Shared between calls: do not mutate. */
export interface CommandInfo {
  /** Every segment runs a known read-only program without output redirection. */
  readonly readOnly: boolean;
  /** The git invocations in the command (empty when none). */
  readonly git: readonly GitInvocation[];
}

/** Programs that only read (given no `>` redirection; `sed`/`find` are checked for their writing flags). */
const READ_ONLY_PROGRAMS = new Set([
  'cat', 'head', 'tail', 'less', 'more', 'ls', 'll', 'tree', 'pwd', 'cd', 'echo', 'printf', 'grep', 'egrep', 'fgrep',
  'rg', 'ag', 'find', 'wc', 'diff', 'stat', 'file', 'which', 'type', 'du', 'df', 'nl', 'cut', 'uniq', 'sed', 'true',
  'realpath', 'basename', 'dirname', 'date', 'whoami', 'env', 'printenv',
]);

/** git subcommands that only read. */
const READ_ONLY_GIT = new Set(['status', 'diff', 'log', 'show', 'blame', 'grep', 'rev-parse', 'ls-files', 'describe']);

const NO_COMMAND: CommandInfo = { readOnly: false, git: [] };

/** Redirections that write nothing the rules care about. */
const HARMLESS_REDIRECTS = ['2>&1', '>/dev/null', '> /dev/null', '2>/dev/null', '&>/dev/null'];

function segmentReadOnly(words: readonly string[]): boolean {
  const program = words[0];
  if (program === undefined) return true;
  if (program === 'git') return READ_ONLY_GIT.has(words[1] ?? '');
  if (!READ_ONLY_PROGRAMS.has(program)) return false;
  if (program === 'sed') return !words.some((w) => w.startsWith('-i') || w === '--in-place');
  if (program === 'find') return !words.some((w) => w === '-delete' || w === '-exec' || w === '-execdir' || w === '-fprint');
  return true;
}

/**
 * Analyses a shell command line.
 *
 * @example
 * ```ts
 * analyseShell('cd repo && cat a.py | head -5'); // { readOnly: true, git: [] }
 * analyseShell('git checkout -- a.py');          // { readOnly: false, git: [{ subcommand: 'checkout', args: ['--', 'a.py'] }] }
 * ```
 */
export function analyseShell(command: string): CommandInfo {
  const cached = shellCache.get(command);
  if (cached !== undefined) return cached;
  const info = analyseShellUncached(command);
  // Agents repeat commands (`pytest -q`, `git status`); a bounded cache turns repeats into one lookup.
  if (shellCache.size >= SHELL_CACHE_LIMIT) shellCache.clear();
  shellCache.set(command, info);
  return info;
}

const SHELL_CACHE_LIMIT = 4096;
const shellCache = new Map<string, CommandInfo>();

function analyseShellUncached(command: string): CommandInfo {
  let stripped = command;
  for (const r of HARMLESS_REDIRECTS) if (stripped.includes(r)) stripped = stripped.split(r).join(' ');
  let readOnly = !stripped.includes('>');
  const git: GitInvocation[] = [];
  for (const segment of stripped.split(/[;&|\n]+/)) {
    const words = segment.trim().split(/\s+/).filter((w) => w !== '');
    // `FOO=1 cmd` and `sudo cmd` run cmd.
    while (words.length > 0 && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0] ?? '') || words[0] === 'sudo')) words.shift();
    if (words[0] === 'git') {
      // `git -C dir sub …`: skip global options and their values.
      let k = 1;
      while (k < words.length && (words[k] ?? '').startsWith('-')) k += words[k] === '-C' || words[k] === '-c' ? 2 : 1;
      const sub = words[k];
      if (sub !== undefined) git.push({ subcommand: sub, args: words.slice(k + 1) });
      if (readOnly && !READ_ONLY_GIT.has(sub ?? '')) readOnly = false;
      continue;
    }
    if (readOnly && !segmentReadOnly(words)) readOnly = false;
  }
  return { readOnly, git };
}

/**
 * Analyses an execute action's params: a shell `command`/`cmd` (string, or array of words), or a
 * dedicated git tool (`{ subcommand, args }`, as the coding profile's `git`). Anything else is opaque:
 * not read-only, no git.
 */
export function analyseCommand(tool: string, params: Record<string, unknown>): CommandInfo {
  const sub = params['subcommand'];
  if (typeof sub === 'string' && (tool === 'git' || tool.endsWith('_git') || tool.startsWith('git_'))) {
    const raw = params['args'];
    const args = Array.isArray(raw) ? raw.filter((a): a is string => typeof a === 'string') : typeof raw === 'string' ? raw.split(/\s+/).filter((w) => w !== '') : [];
    return { readOnly: READ_ONLY_GIT.has(sub), git: [{ subcommand: sub, args }] };
  }
  const cmd = params['command'] ?? params['cmd'];
  if (typeof cmd === 'string') return analyseShell(cmd);
  if (Array.isArray(cmd) && cmd.every((w) => typeof w === 'string')) return analyseShell(cmd.join(' '));
  return NO_COMMAND;
}

/** How a git invocation can discard the agent's uncommitted work. */
export type GitDiscard =
  /** Discards the named paths (`checkout -- a.py`, `restore a.py`, `checkout HEAD a.py`). */
  | { kind: 'paths'; paths: string[] }
  /** Discards every uncommitted change (`reset --hard`, `checkout .`, `restore .`, `stash`, `clean`). */
  | { kind: 'all' }
  /** Records the work (`commit`): later discards cannot reach what it committed. */
  | { kind: 'commit' }
  | { kind: 'none' };

/** Classifies a git invocation for the regression rule. */
export function gitDiscard(g: GitInvocation): GitDiscard {
  const { subcommand, args } = g;
  switch (subcommand) {
    case 'commit':
      return { kind: 'commit' };
    case 'reset':
      return args.includes('--hard') ? { kind: 'all' } : { kind: 'none' };
    case 'stash': {
      const action = args[0];
      return action === undefined || action === 'push' || action === 'save' || action.startsWith('-') ? { kind: 'all' } : { kind: 'none' };
    }
    case 'clean':
      return args.some((a) => /^-[a-zA-Z]*f/.test(a)) ? { kind: 'all' } : { kind: 'none' };
    case 'checkout':
    case 'restore': {
      if (subcommand === 'restore' && args.includes('--staged') && !args.includes('--worktree')) return { kind: 'none' };
      const dash = args.indexOf('--');
      const candidates = (dash >= 0 ? args.slice(dash + 1) : args).filter((a) => !a.startsWith('-'));
      if (candidates.some((a) => a === '.' || a === ':/' || a === '*')) return { kind: 'all' };
      return candidates.length > 0 ? { kind: 'paths', paths: candidates.map(normalisePath) } : { kind: 'none' };
    }
    default:
      return { kind: 'none' };
  }
}

/** Strips a leading `./` (repeatedly) so `./a.py` and `a.py` name the same file. */
export function normalisePath(p: string): string {
  let s = p;
  while (s.startsWith('./')) s = s.slice(2);
  return s;
}
