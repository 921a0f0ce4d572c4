import { describe, expect, it } from 'vitest';
import { SchemaError } from '../errors.js';
import { normalisedWeights, parseProfile } from './profile.js';
import { getProfile, listProfiles, registerProfile } from './registry.js';

describe('domain profiles', () => {
  it('ships the built-in domains as valid data', () => {
    const names = listProfiles().map((p) => p.name);
    for (const d of ['coding', 'browser', 'conversation', 'engineering', 'advisory', 'discussion', 'generic', 'household', 'math', 'tool-use']) {
      expect(names).toContain(d);
    }
    const coding = getProfile('coding');
    expect(coding.tools.map((t) => t.name)).toEqual(['file_read', 'file_write', 'shell', 'search', 'git', 'submit']);
    expect(coding.outcome.rule).toBe('tests-pass');
    for (const p of listProfiles()) {
      const sum = Object.values(normalisedWeights(p)).reduce((a, b) => a + b, 0);
      expect(sum).toBeCloseTo(1, 12);
      for (const t of p.terminalTools) expect(p.tools.find((x) => x.name === t)?.category).toBe('submit');
    }
  });

  it('adds a new domain from data alone, with a user-defined judge rubric', () => {
    const legal = registerProfile({
      name: 'legal-review',
      description: 'Review a contract clause.',
      tools: [{ name: 'read_clause', description: 'Read a clause.', parameters: { type: 'object', properties: {} }, category: 'read' }, { name: 'verdict', description: 'Give the verdict.', parameters: { type: 'object', properties: {} }, category: 'submit' }],
      terminalTools: ['verdict'],
      outcome: { rule: 'rubric-judge', description: 'A judge scores the verdict.' },
      rubricWeights: { outcome: 2, citesClause: 1, efficiency: 1 },
      judgeRubrics: [{ name: 'citesClause', description: 'The verdict cites the clause it relies on.' }],
      stepBudget: 5,
    });
    expect(getProfile('legal-review')).toBe(legal);
    expect(normalisedWeights(legal)).toEqual({ outcome: 0.5, citesClause: 0.25, efficiency: 0.25 });
    expect(() => registerProfile(legal)).toThrow(/already exists/);
  });

  it('rejects a malformed profile naming each bad field', () => {
    const bad = {
      name: 'Bad Name',
      description: 'x',
      tools: [{ name: 'go', description: 'go', parameters: {}, category: 'teleport' }, { name: 'go', description: 'again', parameters: {}, category: 'read' }],
      terminalTools: ['finish'],
      outcome: { rule: 'vibes', description: 'x' },
      rubricWeights: { outcome: 0, style: 1 },
      stepBudget: 0,
    };
    try {
      parseProfile(bad, 'profiles/bad.json');
      expect.fail('should throw');
    } catch (err) {
      const issues = (err as SchemaError).issues.join('\n');
      expect(issues).toContain('profiles/bad.json $.name: profile names are kebab-case');
      expect(issues).toContain('profiles/bad.json $.tools[0].category');
      expect(issues).toContain('profiles/bad.json $.outcome.rule');
      expect(issues).toContain('profiles/bad.json $.stepBudget');
    }
    const refined = { ...bad, name: 'bad', tools: [bad.tools[1], { ...bad.tools[1] }], outcome: { rule: 'exact-match', description: 'x' }, stepBudget: 3 };
    const issues = (() => {
      try {
        parseProfile(refined, 'p.json');
        return [];
      } catch (err) {
        return [...(err as SchemaError).issues];
      }
    })();
    expect(issues).toEqual([
      "p.json $.tools[1].name: duplicate tool name 'go'",
      "p.json $.terminalTools[0]: terminal tool 'finish' is not one of the profile's tools (go, go)",
      "p.json $.rubricWeights.style: unknown rubric 'style': define it in judgeRubrics or use one of outcome, redundancy, regression, informationUse, efficiency, goalProgress, toolSelection, parameterCorrectness",
    ]);
  });

  it('rejects a tool schema that is no JSON Schema, which the environment could not compile at its first step', () => {
    const profile = JSON.parse(JSON.stringify(getProfile('math'))) as { name: string; tools: { parameters: unknown }[] };
    profile.name = 'math-typo';
    profile.tools[0]!.parameters = { type: 'objekt', properties: { x: { type: 'strin' } } };
    expect(() => parseProfile(profile, 'm.json')).toThrow(/^invalid domain profile:\nm\.json \$\.tools\[0\]\.parameters: not a valid JSON Schema \(schema is invalid: /);
  });

  it('reads back what `gymflow profiles show` prints', () => {
    for (const p of listProfiles()) expect(parseProfile(JSON.parse(JSON.stringify(p)), `${p.name}.json`)).toEqual(p);
  });

  it('refuses judge rubric names that are taken: a duplicate, a built-in or the learned layer\'s, an object property', () => {
    const base = JSON.parse(JSON.stringify(getProfile('generic'))) as { name: string; judgeRubrics: { name: string; description: string }[] };
    base.name = 'rubric-names';
    const rubric = (name: string): { name: string; description: string } => ({ name, description: `judged as ${name}` });
    base.judgeRubrics = [rubric('grounding'), rubric('grounding'), rubric('learned'), rubric('redundancy'), rubric('constructor'), rubric('goalProgress')];
    let issues: readonly string[] = [];
    try {
      parseProfile(base, 'r.json');
    } catch (err) {
      issues = (err as SchemaError).issues;
    }
    expect(issues).toEqual([
      "r.json $.judgeRubrics[1].name: duplicate judge rubric name 'grounding'",
      "r.json $.judgeRubrics[2].name: 'learned' is a rubric gymflow defines (outcome, redundancy, regression, informationUse, efficiency, learned); give yours another name",
      expect.stringMatching(/^r\.json \$\.judgeRubrics\[3\]\.name: 'redundancy' is a rubric gymflow defines/),
      "r.json $.judgeRubrics[4].name: 'constructor' cannot name a rubric (it is a property every object has)",
    ]); // goalProgress, a built-in judge rubric, may be reworded by a profile
  });
});

