import { z } from 'zod';
import { BaseEnv } from '../../core/base-env.js';
import { ConfigError } from '../../core/errors.js';
import type { Action, ActionErrorInfo, Split, TaskInfo, TimeStep, ToolSpec } from '../../core/types.js';
import { checkAnswer, formatExpected } from './answer.js';
import { calculate, CalculatorError, formatNumber } from './calculator.js';
import { WORLD_DOCUMENTS, worldDocuments, type WorldDocument } from './documents.js';
import { defaultKnowledgeBase, KnowledgeBase } from './knowledge-base.js';
import { randomizeEntities } from './randomize.js';
import { SearchIndex } from './search-index.js';
import { extendedLookup } from './extended-lookup.js';
import { PythonLimitsSchema, PythonRunner, type PythonLimits } from './python-runner.js';
import { pythonCallError, pythonObservation, pythonToolSpec } from './python-tool.js';
import { bankTaskInfo, countBankTasks, expectedBankAnswer, getBankTask, listBankTasks, TOOL_USE_PYTHON_DOMAIN, type AnyToolTask } from './task-bank.js';
import { listToolTasks, TOOL_USE_DOMAIN, toolTaskInfo, type ToolTask } from './tasks.js';

/** The registered id of this environment. */
export const TOOL_USE_ENV_ID = 'gymflow/tool-use-v0';

/** The registered id of the variant whose numeric facts are redrawn every episode (`randomizeValues`). */
export const TOOL_USE_RANDOMIZED_ENV_ID = 'gymflow/tool-use-randomized-v0';

/** The registered id of the variant with the `python` tool and the python task kinds (`python: true`). */
export const TOOL_USE_PYTHON_ENV_ID = 'gymflow/tool-use-python-v0';

/** Step limit applied by `make`. The expert needs at most 6 steps. */
export const TOOL_USE_MAX_STEPS = 20;

/** Default number of search results. */
export const DEFAULT_SEARCH_K = 3;

/** The tools of `gymflow/tool-use-v0`. */
export const TOOL_USE_TOOLS: readonly ToolSpec[] = [
  {
    name: 'lookup',
    description:
      'Read one attribute of an entity (city, company, product or person) from the knowledge base, e.g. {"entity": "Velmora", "attribute": "population"}. Unknown names get suggestions.',
    category: 'read',
    parameters: {
      type: 'object',
      properties: {
        entity: { type: 'string', minLength: 1, description: 'Exact entity name, e.g. "Velmora".' },
        attribute: { type: 'string', minLength: 1, description: 'Attribute name, e.g. "population", "founded", "price".' },
      },
      required: ['entity', 'attribute'],
      additionalProperties: false,
    },
  },
  {
    name: 'search',
    description: 'Full-text search (BM25) over the document collection; returns the top results with ids, titles and snippets.',
    category: 'search',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, description: 'Keywords, e.g. "blue glassworks river port".' },
        k: { type: 'integer', minimum: 1, maximum: 10, description: `Number of results (default ${DEFAULT_SEARCH_K}).` },
      },
      required: ['query'],
      additionalProperties: false,
    },
  },
  {
    name: 'calculator',
    description:
      'Evaluate an arithmetic expression: + - * / ^ % (remainder), parentheses, decimals, sqrt, abs, round(x[, digits]), floor, ceil, min, max.',
    category: 'execute',
    parameters: {
      type: 'object',
      properties: { expression: { type: 'string', description: 'e.g. "round(42.5 * 3 * (1 - 15/100), 2)"' } },
      required: ['expression'],
      additionalProperties: false,
    },
  },
  {
    name: 'submit',
    description: 'Submit the final answer and end the episode.',
    category: 'submit',
    parameters: {
      type: 'object',
      properties: { answer: { type: 'string', description: 'The final answer: a number or a name.' } },
      required: ['answer'],
      additionalProperties: false,
    },
  },
];

/** Keyword arguments of the environment (validated at construction). */
export const ToolUseEnvOptionsSchema = z
  .object({
    /** Reward subtracted for each invalid tool call. */
    invalidCallPenalty: z.number().min(0).max(1).default(0.05),
    /** The most an episode's invalid calls can cost in total (the floor of the penalty sum). */
    maxTotalPenalty: z.number().min(0).max(1).default(0.5),
    /**
     * Domain randomisation: every episode redraws the world's numeric facts (years, amounts, prices) from
     * its seed (`randomize.ts`), so answers cannot be recalled from a memorised world, only read from the
     * tools. For training data; evaluate on the fixed world (`gymflow/tool-use-v0`).
     */
    randomizeValues: z.boolean().default(false),
    /**
     * The `python` tool and the python task kinds (`gymflow/tool-use-python-v0`): `true` for the default limits,
     * or the limits ({@link PythonLimitsSchema}: `timeoutS`, `memoryMiB`, `outputCapBytes`, `image`, `pidsLimit`).
     * The code runs in a Docker sandbox, started on the first `python` call.
     */
    python: z.union([z.boolean(), PythonLimitsSchema]).default(false),
  })
  .strict();

/** Options accepted by {@link ToolUseEnv}. */
export type ToolUseEnvOptions = z.input<typeof ToolUseEnvOptionsSchema>;

let sharedIndex: SearchIndex<WorldDocument> | undefined;

function defaultSearchIndex(): SearchIndex<WorldDocument> {
  sharedIndex ??= new SearchIndex(WORLD_DOCUMENTS);
  return sharedIndex;
}

const TOOL_HINT =
  'Tools: lookup(entity, attribute) reads the knowledge base; search(query) finds documents when you do not know a name; ' +
  'calculator(expression) does arithmetic; submit(answer) ends the episode with your final answer.';

const PYTHON_TOOL_HINT =
  'Tools: lookup(entity, attribute) reads the knowledge base, or a whole table (entity "cities", "companies", "products" or "people", ' +
  'attribute a comma-separated list of columns); search(query) finds documents when you do not know a name; ' +
  'calculator(expression) does arithmetic; python(code) runs Python; submit(answer) ends the episode with your final answer.';

/** The `lookup` tool of `gymflow/tool-use-python-v0`: tables and dates too (`extended-lookup.ts`). */
const PYTHON_LOOKUP_TOOL: ToolSpec = {
  name: 'lookup',
  description:
    'Read one attribute of an entity (city, company, product or person) from the knowledge base, e.g. {"entity": "Velmora", "attribute": "population"}; ' +
    'dates are birth_date, founding_date and launch_date (YYYY-MM-DD). Or read a table: a collection ("cities", "companies", "products", "people") with ' +
    'the columns wanted, e.g. {"entity": "cities", "attribute": "region, population"} ("all" for every column). Unknown names get suggestions.',
  category: 'read',
  parameters: {
    type: 'object',
    properties: {
      entity: { type: 'string', minLength: 1, description: 'Exact entity name, e.g. "Velmora", or a collection: "cities", "companies", "products", "people".' },
      attribute: { type: 'string', minLength: 1, description: 'Attribute name, e.g. "population", "founded", "birth_date"; for a collection, columns such as "region, population".' },
    },
    required: ['entity', 'attribute'],
    additionalProperties: false,
  },
};

/** The tools of `gymflow/tool-use-python-v0`: lookup (with tables and dates), search, calculator, python, submit. */
export function toolUsePythonTools(limits: PythonLimits = PythonLimitsSchema.parse({})): readonly ToolSpec[] {
  const [, search, calculator, submit] = TOOL_USE_TOOLS as [ToolSpec, ToolSpec, ToolSpec, ToolSpec];
  return [PYTHON_LOOKUP_TOOL, search, calculator, pythonToolSpec(limits), submit];
}

/**
 * `gymflow/tool-use-v0`: questions about a fictional world that need tools — single lookups,
 * multi-hop lookups, lookups followed by arithmetic, and searches that find an entity from a
 * description first (1,527 training and 74 held-out tasks, see `tasks.ts`). With `python` it is
 * `gymflow/tool-use-python-v0`: a fifth tool, `python` (code run in a Docker sandbox, `python-runner.ts`), a
 * `lookup` that also reads tables and dates, and the python task kinds after the same base tasks
 * (`python-tasks.ts`).
 *
 * Reward (tau-bench-style outcome reward, plus an invalid-call penalty):
 * - `submit` with a correct answer: reward **1**, `success: true`, `score: 1`. Numbers are correct within
 *   `max(0.01, 1e-6·|expected|)`; names after normalisation (see `answer.ts`).
 * - `submit` with a wrong answer: reward **0**, `success: false`, `score: 0`.
 * - Each invalid tool call — unknown tool, params failing the schema, a calculator input error, or python code
 *   that raises, runs out of time or kills its interpreter — earns **−0.05** on its step (`invalidCallPenalty`)
 *   with `info.error` set, until the episode's penalties reach **0.5** (`maxTotalPenalty`); later invalid calls
 *   cost 0. The episode return is therefore in [−0.5, 1]. A `python` call that cannot run because no sandbox
 *   can be started (no Docker engine) is an error observation (`tool_unavailable`) without a penalty.
 * - `lookup` of an unknown entity or attribute and a search with no hits are valid calls: an
 *   informative observation, reward 0.
 * - `info.score` is the outcome alone (1 or 0), without penalties. A step-limit truncation (wrapper
 *   `MaxSteps`, reason `max_steps`) scores 0.
 */
export class ToolUseEnv extends BaseEnv {
  readonly domain: string;
  readonly tools: readonly ToolSpec[];
  private readonly options: z.output<typeof ToolUseEnvOptionsSchema>;
  /** The python tool's limits in the python variant, else undefined. */
  private readonly pythonLimits: PythonLimits | undefined;
  /** The python tool's sandbox, made on the first `python` call. */
  private runner: PythonRunner | undefined;
  private task: AnyToolTask | undefined;
  private penaltyTotal = 0;
  /** This episode's world: the bundled one, or a randomised copy (`randomizeValues`). */
  private kb: KnowledgeBase = defaultKnowledgeBase();
  /** The search index of a randomised world, built on its first search. */
  private index: SearchIndex<WorldDocument> | undefined;

  /** Throws a `ConfigError` when `options` fail {@link ToolUseEnvOptionsSchema}. */
  constructor(options: ToolUseEnvOptions | Record<string, unknown> = {}) {
    super();
    const parsed = ToolUseEnvOptionsSchema.safeParse(options);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(options)'}: ${i.message}`).join('; ');
      // The variants are this class with an option set: name the id the user made.
      const given = options as { randomizeValues?: unknown; python?: unknown };
      const id = given.python !== undefined && given.python !== false ? TOOL_USE_PYTHON_ENV_ID : given.randomizeValues === true ? TOOL_USE_RANDOMIZED_ENV_ID : TOOL_USE_ENV_ID;
      throw new ConfigError(`${id}: invalid options: ${issues}`);
    }
    this.options = parsed.data;
    const python = parsed.data.python;
    this.pythonLimits = python === false ? undefined : python === true ? PythonLimitsSchema.parse({}) : python;
    this.domain = this.pythonLimits ? TOOL_USE_PYTHON_DOMAIN : TOOL_USE_DOMAIN;
    this.tools = this.pythonLimits ? toolUsePythonTools(this.pythonLimits) : TOOL_USE_TOOLS;
  }

  protected async onReset(options: { task?: string }): Promise<TimeStep> {
    const python = this.pythonLimits !== undefined;
    const task = options.task === undefined ? this.rng.pick(listBankTasks(python, 'train')) : getBankTask(options.task, python);
    this.task = task;
    this.penaltyTotal = 0;
    if (this.options.randomizeValues) {
      // A sub-stream, so the world does not shift the draws that follow.
      this.kb = new KnowledgeBase(randomizeEntities(defaultKnowledgeBase().entities, this.rng.fork()));
      this.index = undefined;
    }
    // The next python call runs in a fresh interpreter in emptied work areas (prepared now if the sandbox runs).
    this.runner?.newEpisode();
    const info = python ? bankTaskInfo(task, this.domain) : toolTaskInfo(task as ToolTask);
    return this.first(`${task.question}\n\n${python ? PYTHON_TOOL_HINT : TOOL_HINT}`, info);
  }

  protected async onStep(action: Action): Promise<TimeStep> {
    const task = this.task as AnyToolTask;
    const p = action.params;
    switch (action.tool) {
      case 'lookup':
        if (this.pythonLimits) return this.observe(extendedLookup(this.kb, String(p.entity), String(p.attribute)));
        return this.observe(this.kb.lookup(String(p.entity), String(p.attribute)).text);
      case 'search':
        return this.observe(this.search(String(p.query), typeof p.k === 'number' ? p.k : DEFAULT_SEARCH_K));
      case 'calculator':
        try {
          return this.observe(`Result: ${formatNumber(calculate(String(p.expression)))}`);
        } catch (err) {
          if (!(err instanceof CalculatorError)) throw err;
          return this.penalize({ code: 'tool_failed', message: err.message });
        }
      case 'python':
        return this.python(String(p.code));
      default: {
        // The validator only lets the declared tools through: this is `submit`.
        const expected = expectedBankAnswer(task, this.kb);
        const correct = checkAnswer(String(p.answer), expected);
        return this.end(
          correct ? 'Correct.' : 'Incorrect.',
          correct ? 1 : 0,
          { success: correct, score: correct ? 1 : 0, reason: 'submitted' },
          { expected: formatExpected(expected), invalidCallPenalty: this.penaltyTotal },
        );
      }
    }
  }

  protected override onInvalidAction(_action: Action, error: ActionErrorInfo): TimeStep {
    return this.penalize(error);
  }

  protected override async onClose(): Promise<void> {
    await this.runner?.close();
  }

  /** The tasks of a split, or of both splits when omitted. */
  override listTasks(split?: Split): TaskInfo[] {
    if (this.pythonLimits) return listBankTasks(true, split).map((t) => bankTaskInfo(t, this.domain));
    return listToolTasks(split).map(toolTaskInfo);
  }

  /** The number of tasks of a split (or both), without building the bank's questions. */
  override countTasks(split?: Split): number {
    return countBankTasks(this.pythonLimits !== undefined, split);
  }

  private async python(code: string): Promise<TimeStep> {
    const limits = this.pythonLimits as PythonLimits;
    if (!this.runner) {
      this.runner = new PythonRunner(limits);
      this.runner.newEpisode();
    }
    const result = await this.runner.run(code);
    const observation = pythonObservation(result, limits);
    const info = { python: { status: result.status, restarted: result.restarted } };
    const error = pythonCallError(result, limits);
    if (error === undefined) return this.observe(observation, 0, info);
    // No sandbox (no Docker engine): not the agent's fault, no penalty.
    if (error.code === 'tool_unavailable') return this.observe(observation, 0, { ...info, error, penalty: 0 });
    return this.penalize(error, observation, info);
  }

  private penalize(error: ActionErrorInfo, observation = `Error: ${error.message}`, info: Record<string, unknown> = {}): TimeStep {
    // Rounded so ten 0.05 penalties sum to exactly 0.5 instead of 0.5000000000000001.
    const room = Math.max(0, this.options.maxTotalPenalty - this.penaltyTotal);
    const penalty = Number(Math.min(this.options.invalidCallPenalty, room).toFixed(12));
    this.penaltyTotal = Number((this.penaltyTotal + penalty).toFixed(12));
    return this.observe(observation, penalty > 0 ? -penalty : 0, { ...info, error, penalty });
  }

  private search(query: string, k: number): string {
    let index = defaultSearchIndex();
    if (this.options.randomizeValues) {
      this.index ??= new SearchIndex(worldDocuments(this.kb.entities));
      index = this.index;
    }
    const hits = index.search(query, k);
    if (hits.length === 0) return `No documents match "${query}". Try other keywords.`;
    const lines = hits.map((h, i) => `${i + 1}. [${h.doc.id}] ${h.doc.title} (${h.doc.tag}) — ${h.snippet}`);
    return `Top ${hits.length} results for "${query}":\n${lines.join('\n')}`;
  }
}
