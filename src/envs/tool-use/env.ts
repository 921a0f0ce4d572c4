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
import { countToolTasks, expectedAnswer, getToolTask, listToolTasks, TOOL_USE_DOMAIN, toolTaskInfo, type ToolTask } from './tasks.js';

/** The registered id of this environment. */
export const TOOL_USE_ENV_ID = 'gymflow/tool-use-v0';

/** The registered id of the variant whose numeric facts are redrawn every episode (`randomizeValues`). */
export const TOOL_USE_RANDOMIZED_ENV_ID = 'gymflow/tool-use-randomized-v0';

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

/**
 * `gymflow/tool-use-v0`: questions about a fictional world that need tools — single lookups,
 * multi-hop lookups, lookups followed by arithmetic, and searches that find an entity from a
 * description first (1,527 training and 74 held-out tasks, see `tasks.ts`).
 *
 * Reward (tau-bench-style outcome reward, plus an invalid-call penalty):
 * - `submit` with a correct answer: reward **1**, `success: true`, `score: 1`. Numbers are correct within
 *   `max(0.01, 1e-6·|expected|)`; names after normalisation (see `answer.ts`).
 * - `submit` with a wrong answer: reward **0**, `success: false`, `score: 0`.
 * - Each invalid tool call — unknown tool, params failing the schema, or a calculator input error —
 *   earns **−0.05** on its step (`invalidCallPenalty`) with `info.error` set, until the episode's
 *   penalties reach **0.5** (`maxTotalPenalty`); later invalid calls cost 0. The episode return is
 *   therefore in [−0.5, 1].
 * - `lookup` of an unknown entity or attribute and a search with no hits are valid calls: an
 *   informative observation, reward 0.
 * - `info.score` is the outcome alone (1 or 0), without penalties. A step-limit truncation (wrapper
 *   `MaxSteps`, reason `max_steps`) scores 0.
 */
export class ToolUseEnv extends BaseEnv {
  readonly domain = TOOL_USE_DOMAIN;
  readonly tools = TOOL_USE_TOOLS;
  private readonly options: z.output<typeof ToolUseEnvOptionsSchema>;
  private task: ToolTask | undefined;
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
      // The randomised variant is this class with randomizeValues: name the id the user made.
      const id = (options as { randomizeValues?: unknown }).randomizeValues === true ? TOOL_USE_RANDOMIZED_ENV_ID : TOOL_USE_ENV_ID;
      throw new ConfigError(`${id}: invalid options: ${issues}`);
    }
    this.options = parsed.data;
  }

  protected async onReset(options: { task?: string }): Promise<TimeStep> {
    const task = options.task === undefined ? this.rng.pick(listToolTasks('train')) : getToolTask(options.task);
    this.task = task;
    this.penaltyTotal = 0;
    if (this.options.randomizeValues) {
      // A sub-stream, so the world does not shift the draws that follow.
      this.kb = new KnowledgeBase(randomizeEntities(defaultKnowledgeBase().entities, this.rng.fork()));
      this.index = undefined;
    }
    return this.first(`${task.question}\n\n${TOOL_HINT}`, toolTaskInfo(task));
  }

  protected async onStep(action: Action): Promise<TimeStep> {
    const task = this.task as ToolTask;
    const p = action.params;
    switch (action.tool) {
      case 'lookup':
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
      default: {
        // The validator only lets the four declared tools through: this is `submit`.
        const expected = expectedAnswer(task, this.kb);
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

  /** The tasks of a split, or of both splits when omitted. */
  override listTasks(split?: Split): TaskInfo[] {
    return listToolTasks(split).map(toolTaskInfo);
  }

  /** The number of tasks of a split (or both), without building the bank's questions. */
  override countTasks(split?: Split): number {
    return countToolTasks(split);
  }

  private penalize(error: ActionErrorInfo): TimeStep {
    // Rounded so ten 0.05 penalties sum to exactly 0.5 instead of 0.5000000000000001.
    const room = Math.max(0, this.options.maxTotalPenalty - this.penaltyTotal);
    const penalty = Number(Math.min(this.options.invalidCallPenalty, room).toFixed(12));
    this.penaltyTotal = Number((this.penaltyTotal + penalty).toFixed(12));
    return this.observe(`Error: ${error.message}`, penalty > 0 ? -penalty : 0, { error, penalty });
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
