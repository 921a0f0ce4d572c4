import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkEnv } from '../src/core/check-env.js';
import { getProfile } from '../src/core/profiles/index.js';
import { listEnvs, make } from '../src/core/registry.js';
import { registerBuiltinEnvs } from '../src/envs/index.js';
import { PACKAGE_ROOT } from '../src/core/package-root.js';
import { requires } from './support/requires.js';

beforeAll(() => registerBuiltinEnvs());

const IN_PROCESS = ['gymflow/text-math-v0', 'gymflow/recall-v0', 'gymflow/tool-use-v0', 'gymflow/tool-use-randomized-v0', 'gymflow/household-v0', 'gymflow/webshop-v0', 'gymflow/conversation-v0', 'gymflow/discussion-v0', 'gymflow/advisory-v0', 'gymflow/engineering-v0'];
// gymflow/tool-use-python-v0 runs in process until its probe episodes call python (a Docker sandbox).
const NEEDS_DOCKER = ['gymflow/sandbox-v0', 'gymflow/tool-use-python-v0'];
// Needs an OpenEnv server (kwargs.url): tests/openenv.test.ts runs checkEnv on it against openenv-core's and gymflow's servers.
const NEEDS_SERVER = ['gymflow/openenv-v0'];
// Made from a question set (kwargs.questions): the tests' HLE-format set, graded by the rule check.
const NEEDS_KWARGS: Record<string, Record<string, unknown>> = {
  'gymflow/qa-v0': { questions: path.join(PACKAGE_ROOT, 'src/envs/qa/__fixtures__/questions.jsonl'), trainQuestions: path.join(PACKAGE_ROOT, 'src/envs/qa/__fixtures__/train.json') },
};
// Needs a SWE-bench instances file (kwargs.instances) and its repositories: tests/swe.test.ts runs checkEnv on it with
// instances it builds from real git repositories (and Docker).
const NEEDS_DATA = ['gymflow/swe-v0'];

describe('every registered environment', () => {
  it('has at least the built-in environments', () => {
    expect(listEnvs().map((s) => s.id)).toEqual(expect.arrayContaining(['gymflow/text-math-v0', 'gymflow/tool-use-v0', 'gymflow/household-v0', 'gymflow/webshop-v0', 'gymflow/sandbox-v0']));
  });

  it('are all covered by this file', () => {
    expect(listEnvs().map((s) => s.id).sort()).toEqual([...IN_PROCESS, ...NEEDS_DOCKER, ...NEEDS_SERVER, ...Object.keys(NEEDS_KWARGS), ...NEEDS_DATA].sort());
  });

  for (const [id, kwargs] of Object.entries(NEEDS_KWARGS)) {
    it(`${id} (with its keyword arguments) passes checkEnv under several seeds and offers its profile's tools`, async () => {
      for (const seed of [0, 1, 2]) {
        const report = await checkEnv(() => make(id, { kwargs }), { seed });
        expect(report.checks.filter((c) => !c.ok)).toEqual([]);
      }
      const env = make(id, { kwargs });
      const byName = (tools: readonly { name: string; category: string }[]): Record<string, string> => Object.fromEntries(tools.map((t) => [t.name, t.category]));
      expect(byName(env.tools)).toEqual(byName(getProfile(env.domain).tools));
      await env.close();
    });
  }

  for (const id of IN_PROCESS) {
    it(`${id} passes checkEnv under several seeds`, async () => {
      for (const seed of [0, 1, 2]) {
        const report = await checkEnv(() => make(id), { seed });
        expect(report.checks.filter((c) => !c.ok)).toEqual([]);
      }
    });

    it(`${id} offers exactly the tools of its domain profile, with the same categories`, async () => {
      const env = make(id);
      const profile = getProfile(env.domain);
      const byName = (tools: readonly { name: string; category: string }[]): Record<string, string> =>
        Object.fromEntries(tools.map((t) => [t.name, t.category]));
      expect(byName(env.tools)).toEqual(byName(profile.tools));
      await env.close();
    });
  }
});

requires.docker().describe('every registered Docker environment', () => {
  for (const id of NEEDS_DOCKER) {
    it(`${id} passes checkEnv`, async () => {
      const report = await checkEnv(() => make(id), { seed: 0 });
      expect(report.checks.filter((c) => !c.ok)).toEqual([]);
    }, 120_000);

    it(`${id} offers exactly the tools of its domain profile, with the same categories`, async () => {
      const env = make(id);
      const byName = (tools: readonly { name: string; category: string }[]): Record<string, string> =>
        Object.fromEntries(tools.map((t) => [t.name, t.category]));
      expect(byName(env.tools)).toEqual(byName(getProfile(env.domain).tools));
      await env.close();
    });
  }
});
