/**
 * SWE-bench instances made from small real git repositories, for the tests and the bench: two upstream
 * repositories with real histories (`acme/calc`, pytest, versions 1.0 and 2.0; `acme/words`, unittest read by the
 * django parser, version 0.1), bare clones of them in a repos directory, an instances JSONL whose gold patch and
 * test patch are diffs between real commits, and a spec table. Commit dates are fixed, so the same content gives
 * the same commit ids on every run; `nonce` goes into the environment layers' specs, so a run can force fresh
 * images (and prune exactly its own).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** One instance line as SWE-bench stores it. */
export interface FixtureInstance {
  instance_id: string;
  repo: string;
  base_commit: string;
  patch: string;
  test_patch: string;
  FAIL_TO_PASS: string;
  PASS_TO_PASS: string;
  version: string;
  environment_setup_commit: string;
  problem_statement: string;
  hints_text: string;
  created_at: string;
}

/** What {@link buildSweFixture} made. */
export interface SweFixture {
  dir: string;
  /** The bare repositories (`acme__calc.git`, `acme__words.git`). */
  reposDir: string;
  instancesFile: string;
  specsFile: string;
  instances: FixtureInstance[];
  /** Patches that are not gold, by name (for predictions). */
  patches: { breaksPassToPass: Record<string, string>; doesNotApply: Record<string, string> };
}

class Repo {
  private tick = 0;
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    this.git('init', '-q', '-b', 'main');
  }
  git(...args: string[]): string {
    const date = `2024-01-01T00:${String(Math.floor(this.tick / 60)).padStart(2, '0')}:${String(this.tick % 60).padStart(2, '0')}Z`;
    return execFileSync('git', ['-c', 'user.name=Upstream Dev', '-c', 'user.email=dev@acme.invalid', '-c', 'commit.gpgsign=false', ...args], {
      cwd: this.dir,
      encoding: 'utf8',
      env: { ...process.env, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_SYSTEM: '/dev/null' },
    });
  }
  /** Writes files (path → content) and commits them; returns the commit id. */
  commit(message: string, files: Record<string, string>): string {
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(this.dir, path)), { recursive: true });
      writeFileSync(join(this.dir, path), content);
    }
    this.tick += 1;
    this.git('add', '-A');
    this.git('commit', '-q', '-m', message);
    return this.git('rev-parse', 'HEAD').trim();
  }
  /** The diff from `base` of a change made on a branch that is deleted afterwards (not in the repository's history). */
  sideDiff(base: string, files: Record<string, string>, ...paths: string[]): string {
    this.git('checkout', '-q', '-b', 'side', base);
    const side = this.commit('side change', files);
    this.git('checkout', '-q', 'main');
    this.git('branch', '-q', '-D', 'side');
    return this.diff(base, side, ...paths);
  }
  diff(from: string, to: string, ...paths: string[]): string {
    return this.git('diff', '--no-color', '--no-ext-diff', from, to, '--', ...paths);
  }
}

const OPS_V1 = `def add(a, b):
    return a + b


def sub(a, b):
    return a - b
`;
const TEST_OPS_V1 = `import pytest

from calc import ops


@pytest.mark.parametrize("a,b,want", [(1, 2, 3), (-1, 1, 0)])
def test_add(a, b, want):
    assert ops.add(a, b) == want


def test_sub():
    assert ops.sub(5, 3) == 2
`;
const DIV_BUGGY = `

def div(a, b):
    return a // b
`;
const DIV_FIXED = `

def div(a, b):
    return a / b
`;
const TEST_DIV = `

@pytest.mark.parametrize("a,b,want", [(7, 2, 3.5), (1, 4, 0.25)])
def test_div(a, b, want):
    assert ops.div(a, b) == want
`;
const PARSER = `

class Parser:
    """Reads integers and sums of integers ("1+2+3")."""

    def parse(self, text):
        return sum(int(part) for part in text.split("+"))
`;
const TEST_PARSE = `import pytest

from calc import ops


@pytest.fixture
def parser():
    return ops.Parser()


def test_parse_int(parser):
    assert parser.parse("42") == 42


def test_parse_sum(parser):
    assert parser.parse("1+2+3") == 6
`;
const CLAMP_BUGGY = `

def clamp(x, lo, hi):
    return min(lo, max(x, hi))
`;
const CLAMP_FIXED = `

def clamp(x, lo, hi):
    return max(lo, min(x, hi))
`;
const TEST_CLAMP = `from calc import ops


def test_clamp_inside():
    assert ops.clamp(5, 0, 10) == 5


def test_clamp_low():
    assert ops.clamp(-3, 0, 10) == 0


def test_clamp_high():
    assert ops.clamp(12, 0, 10) == 10
`;
const NUMFMT = `def thousands(n):
    return f"{n:,}"
`;
const FMT_BUGGY = `import numfmt


def money(x):
    return "$" + numfmt.thousands(x)
`;
const FMT_FIXED = `import numfmt


def money(x):
    sign = "-" if x < 0 else ""
    return sign + "$" + numfmt.thousands(abs(x))
`;
const TEST_FMT = `from calc import fmt


def test_money_positive():
    assert fmt.money(1234567) == "$1,234,567"
`;
const TEST_FMT_NEG = `

def test_money_negative():
    assert fmt.money(-1500) == "-$1,500"
`;

const WORDS_V1 = `def count(text):
    return len(text.split())
`;
const TEST_WORDS_V1 = `import unittest

from words import core


class WordsTest(unittest.TestCase):
    def test_count(self):
        self.assertEqual(core.count("to be or not"), 4)
`;
const TITLE_BUGGY = `

def title_case(text):
    return text.title()
`;
const TITLE_FIXED = `

def title_case(text):
    return " ".join(w[:1].upper() + w[1:] for w in text.split())
`;
const TEST_TITLE = `
    def test_title_case(self):
        self.assertEqual(core.title_case("it's a dog's life"), "It's A Dog's Life")
`;
const INITIALS_BUGGY = `

def initials(text):
    return "".join(w[0] for w in text.split(" "))
`;
const INITIALS_FIXED = `

def initials(text):
    return "".join(w[0].upper() for w in text.split())
`;
const TEST_INITIALS = `
    def test_initials(self):
        self.assertEqual(core.initials("ada  lovelace"), "AL")
`;

/** The unittest id Python 3.11 prints (and SWE-bench's django parser keys on). */
const ut = (name: string): string => `${name} (tests.test_words.WordsTest.${name})`;

/**
 * Builds the repositories, their bare clones, the instances file and the spec table under `dir`.
 *
 * @param nonce written into every environment layer's spec (fresh images for each distinct nonce)
 */
export function buildSweFixture(dir: string, nonce: string): SweFixture {
  const upstream = join(dir, 'upstream');
  const calc = new Repo(join(upstream, 'calc'));
  const c1 = calc.commit('initial: add and sub', { 'calc/__init__.py': '', 'calc/ops.py': OPS_V1, 'tests/test_ops.py': TEST_OPS_V1, 'setup.cfg': '[tool:pytest]\n# configured\n', 'README.md': '# calc\n' });
  void c1;
  const c2 = calc.commit('add div', { 'calc/ops.py': OPS_V1 + DIV_BUGGY });
  const c3 = calc.commit('div: true division (#1)', { 'calc/ops.py': OPS_V1 + DIV_FIXED, 'tests/test_ops.py': TEST_OPS_V1 + TEST_DIV });
  const c4 = calc.commit('add Parser (#2)', { 'calc/ops.py': OPS_V1 + DIV_FIXED + PARSER, 'tests/test_parse.py': TEST_PARSE });
  const c5 = calc.commit('add clamp', { 'calc/ops.py': OPS_V1 + DIV_FIXED + PARSER + CLAMP_BUGGY });
  const c6 = calc.commit('clamp: bounds the right way round (#4)', { 'calc/ops.py': OPS_V1 + DIV_FIXED + PARSER + CLAMP_FIXED, 'tests/test_clamp.py': TEST_CLAMP });
  // Version 2.0: money formatting through a dependency the environment provides (vendored at the setup commit).
  const c7 = calc.commit('2.0: money formatting with numfmt', { 'vendor/numfmt.py': NUMFMT, 'calc/fmt.py': FMT_BUGGY, 'tests/test_fmt.py': TEST_FMT, 'README.md': '# calc 2.0\n' });
  const c8 = calc.commit('fmt: sign before the currency symbol (#3)', { 'calc/fmt.py': FMT_FIXED, 'tests/test_fmt.py': TEST_FMT + TEST_FMT_NEG });

  const words = new Repo(join(upstream, 'words'));
  const w1 = words.commit('initial: count', { 'words/__init__.py': '', 'words/core.py': WORDS_V1, 'tests/__init__.py': '', 'tests/test_words.py': TEST_WORDS_V1 });
  const w2 = words.commit('add title_case', { 'words/core.py': WORDS_V1 + TITLE_BUGGY });
  const w3 = words.commit('title_case: keep apostrophes (#7)', { 'words/core.py': WORDS_V1 + TITLE_FIXED, 'tests/test_words.py': TEST_WORDS_V1 + TEST_TITLE });
  const w4 = words.commit('add initials', { 'words/core.py': WORDS_V1 + TITLE_FIXED + INITIALS_BUGGY });
  const w5 = words.commit('initials: any spacing, capitals (#9)', { 'words/core.py': WORDS_V1 + TITLE_FIXED + INITIALS_FIXED, 'tests/test_words.py': TEST_WORDS_V1 + TEST_TITLE + TEST_INITIALS });

  // Not gold: fixes that make the FAIL_TO_PASS tests pass but break a PASS_TO_PASS one (calc-4: the lower bound is
  // dropped; calc-1: add multiplies), made on branches deleted before the clones.
  const breaks4 = calc.sideDiff(c5, { 'calc/ops.py': OPS_V1 + DIV_FIXED + PARSER + CLAMP_FIXED.replace('max(lo, min(x, hi))', 'min(x, hi)') }, 'calc');
  const breaks1 = calc.sideDiff(c2, { 'calc/ops.py': OPS_V1.replace('return a + b', 'return a * b') + DIV_FIXED }, 'calc');

  const reposDir = join(dir, 'repos');
  mkdirSync(reposDir, { recursive: true });
  execFileSync('git', ['clone', '-q', '--bare', calc.dir, join(reposDir, 'acme__calc.git')]);
  execFileSync('git', ['clone', '-q', '--bare', words.dir, join(reposDir, 'acme__words.git')]);

  const ops = 'tests/test_ops.py';
  const p2pCalc1 = [`${ops}::test_add[1-2-3]`, `${ops}::test_add[-1-1-0]`, `${ops}::test_sub`];
  const f2pDiv = [`${ops}::test_div[7-2-3.5]`, `${ops}::test_div[1-4-0.25]`];
  const instances: FixtureInstance[] = [
    {
      instance_id: 'acme__calc-1',
      repo: 'acme/calc',
      base_commit: c2,
      patch: calc.diff(c2, c3, 'calc'),
      test_patch: calc.diff(c2, c3, 'tests'),
      FAIL_TO_PASS: JSON.stringify(f2pDiv),
      PASS_TO_PASS: JSON.stringify(p2pCalc1),
      version: '1.0',
      environment_setup_commit: c1,
      problem_statement: 'ops.div(7, 2) returns 3 instead of 3.5: division should be true division.',
      hints_text: 'Look at the operator in div.',
      created_at: '2024-01-01T00:00:02Z',
    },
    {
      instance_id: 'acme__calc-2',
      repo: 'acme/calc',
      base_commit: c3,
      patch: calc.diff(c3, c4, 'calc'),
      test_patch: calc.diff(c3, c4, 'tests'),
      FAIL_TO_PASS: JSON.stringify(['tests/test_parse.py::test_parse_int', 'tests/test_parse.py::test_parse_sum']),
      // The test patch only adds tests/test_parse.py, so only its tests run: there is nothing to keep passing.
      PASS_TO_PASS: JSON.stringify([]),
      version: '1.0',
      environment_setup_commit: c1,
      problem_statement: 'Add ops.Parser, whose parse(text) reads an integer ("42") or a sum of integers ("1+2+3").',
      hints_text: '',
      created_at: '2024-01-01T00:00:03Z',
    },
    {
      instance_id: 'acme__calc-3',
      repo: 'acme/calc',
      base_commit: c7,
      patch: calc.diff(c7, c8, 'calc'),
      test_patch: calc.diff(c7, c8, 'tests'),
      FAIL_TO_PASS: JSON.stringify(['tests/test_fmt.py::test_money_negative']),
      PASS_TO_PASS: JSON.stringify(['tests/test_fmt.py::test_money_positive']),
      version: '2.0',
      environment_setup_commit: c7,
      problem_statement: 'fmt.money(-1500) gives "$-1,500"; it should be "-$1,500".',
      hints_text: '',
      created_at: '2024-01-01T00:00:07Z',
    },
    {
      instance_id: 'acme__calc-4',
      repo: 'acme/calc',
      base_commit: c5,
      patch: calc.diff(c5, c6, 'calc'),
      test_patch: calc.diff(c5, c6, 'tests'),
      // clamp(-3, 0, 10) is right even with the bug: that test passes before and after (PASS_TO_PASS).
      FAIL_TO_PASS: JSON.stringify(['tests/test_clamp.py::test_clamp_inside', 'tests/test_clamp.py::test_clamp_high']),
      PASS_TO_PASS: JSON.stringify(['tests/test_clamp.py::test_clamp_low']),
      version: '1.0',
      environment_setup_commit: c1,
      problem_statement: 'ops.clamp(5, 0, 10) returns 0: clamp should keep x between lo and hi.',
      hints_text: '',
      created_at: '2024-01-01T00:00:05Z',
    },
    {
      instance_id: 'acme__words-1',
      repo: 'acme/words',
      base_commit: w2,
      patch: words.diff(w2, w3, 'words'),
      test_patch: words.diff(w2, w3, 'tests'),
      FAIL_TO_PASS: JSON.stringify([ut('test_title_case')]),
      PASS_TO_PASS: JSON.stringify([ut('test_count')]),
      version: '0.1',
      environment_setup_commit: w1,
      problem_statement: 'title_case("it\'s a dog\'s life") gives "It\'S A Dog\'S Life": the letter after an apostrophe must stay small.',
      hints_text: '',
      created_at: '2024-01-01T00:00:02Z',
    },
    {
      instance_id: 'acme__words-2',
      repo: 'acme/words',
      base_commit: w4,
      patch: words.diff(w4, w5, 'words'),
      test_patch: words.diff(w4, w5, 'tests'),
      FAIL_TO_PASS: JSON.stringify([ut('test_initials')]),
      PASS_TO_PASS: JSON.stringify([ut('test_count'), ut('test_title_case')]),
      version: '0.1',
      environment_setup_commit: w1,
      problem_statement: 'initials("ada  lovelace") raises IndexError with two spaces between the words, and the initials should be capitals ("AL").',
      hints_text: '',
      created_at: '2024-01-01T00:00:04Z',
    },
  ];
  const instancesFile = join(dir, 'instances.jsonl');
  writeFileSync(instancesFile, instances.map((i) => JSON.stringify(i)).join('\n') + '\n');

  const purelib = `"$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"`;
  const specs = {
    'acme/calc': {
      '1.0': {
        python: '3.11',
        env_setup: [`echo ${nonce} > /opt/gymflow-fixture-nonce`],
        // A pre_install that changes a tracked file: the image commits it as its setup commit, so the agent's
        // diff does not show it.
        pre_install: ["sed -i 's/^# configured$/# configured for the tests/' setup.cfg"],
      },
      '2.0': {
        python: '3.11',
        // The dependency comes from the repository at its environment_setup_commit, into the environment layer.
        env_setup: [`echo ${nonce} > /opt/gymflow-fixture-nonce`, 'install -D -m 644 vendor/numfmt.py /opt/deps/numfmt.py', `mkdir -p ${purelib} && echo /opt/deps > ${purelib}/gymflow-deps.pth`],
        install: `echo /work > ${purelib}/calc.pth`,
        test_cmd: 'python3 -m pytest -rA -p no:cacheprovider',
      },
    },
    'acme/words': {
      '0.1': {
        python: '3.11',
        env_setup: [`echo ${nonce} > /opt/gymflow-fixture-nonce`],
        test_cmd: 'python3 -m unittest -v',
        log_parser: 'django',
      },
    },
  };
  const specsFile = join(dir, 'specs.json');
  writeFileSync(specsFile, JSON.stringify(specs, null, 2));

  // Written against a file the base commit does not have (neither `git apply` nor `patch --fuzz=5` can place it).
  const doesNotApply = ['diff --git a/calc/parse.py b/calc/parse.py', '--- a/calc/parse.py', '+++ b/calc/parse.py', '@@ -1,2 +1,3 @@', ' class Parser:', '-    pass', '+    def parse(self, text):', '+        return int(text)'].join('\n') + '\n';
  return { dir, reposDir, instancesFile, specsFile, instances, patches: { breaksPassToPass: { 'acme__calc-4': breaks4, 'acme__calc-1': breaks1 }, doesNotApply: { 'acme__calc-2': doesNotApply } } };
}
