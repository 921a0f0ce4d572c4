import { ConfigError } from '../core/errors.js';
import { isRegistered, register } from '../core/registry.js';
import { ADVISORY_ENV_ID, ADVISORY_MAX_STEPS, AdvisoryEnv } from './advisory/env.js';
import { AdvisoryExpert } from './advisory/expert.js';
import { CONVERSATION_ENV_ID, CONVERSATION_MAX_STEPS, RetailEnv } from './retail/env.js';
import { ENGINEERING_ENV_ID, ENGINEERING_MAX_STEPS, EngineeringEnv } from './engineering/env.js';
import { EngineeringExpert } from './engineering/expert.js';
import { RetailExpert } from './retail/expert.js';
import { DISCUSSION_ENV_ID, DISCUSSION_MAX_STEPS, DiscussionEnv } from './discussion/env.js';
import { DiscussionExpert } from './discussion/expert.js';
import { HOUSEHOLD_ENV_ID, HOUSEHOLD_MAX_STEPS, HouseholdEnv } from './household/env.js';
import { HouseholdExpert } from './household/expert.js';
import { HouseholdPlanner } from './household/planner.js';
import { registerOpenEnvEnvs } from './openenv/register.js';
import { QA_ENV_ID, QA_MAX_STEPS, QA_TOOLS, QaEnv } from './qa/env.js';
import { RECALL_ENV_ID, RECALL_MAX_STEPS, RecallEnv } from './recall/env.js';
import { RecallExpert, RecallWordsDemonstrator } from './recall/expert.js';
import { registerSandboxEnv } from './sandbox/register.js';
import { registerSweEnv } from './swe/register.js';
import { TEXT_MATH_ENV_ID, TEXT_MATH_MAX_STEPS, TextMathEnv } from './text-math/env.js';
import { TextMathExpert } from './text-math/expert.js';
import { TOOL_USE_ENV_ID, TOOL_USE_MAX_STEPS, TOOL_USE_PYTHON_ENV_ID, TOOL_USE_RANDOMIZED_ENV_ID, ToolUseEnv } from './tool-use/env.js';
import { TOOL_USE_PYTHON_DOMAIN } from './tool-use/task-bank.js';
import { ToolUseExpert } from './tool-use/expert.js';
import { WEBSHOP_ENV_ID, WEBSHOP_MAX_STEPS, WebshopEnv } from './webshop/env.js';
import { WebshopExpert } from './webshop/expert.js';

/**
 * The ids of the in-process environments {@link registerBuiltinEnvs} registers, each with an expert. It also registers
 * `gymflow/sandbox-v0`, the OpenEnv client and `gymflow/qa-v0` (a question set's environment: no expert knows its answers).
 */
export const BUILTIN_ENV_IDS = [TEXT_MATH_ENV_ID, TOOL_USE_ENV_ID, TOOL_USE_RANDOMIZED_ENV_ID, TOOL_USE_PYTHON_ENV_ID, HOUSEHOLD_ENV_ID, WEBSHOP_ENV_ID, CONVERSATION_ENV_ID, DISCUSSION_ENV_ID, ADVISORY_ENV_ID, ENGINEERING_ENV_ID, RECALL_ENV_ID] as const;

/**
 * Registers gymflow's built-in environments with their expert agents (`gymflow/sandbox-v0` and `gymflow/swe-v0`
 * included: they need a Docker engine only from their first `reset`), and the OpenEnv client (`gymflow/openenv-v0`, one
 * `openenv/NAME-v0` per entry of `GYMFLOW_OPENENV`: see src/envs/openenv/register.ts). Idempotent: calling it again
 * (from several entry points, or in every test file) leaves the registry as it was.
 *
 * @example
 * ```ts
 * registerBuiltinEnvs();
 * const env = make('gymflow/text-math-v0');
 * await env.reset({ seed: 1 });
 * ```
 */
export function registerBuiltinEnvs(): void {
  if (!isRegistered(TEXT_MATH_ENV_ID)) {
    register(TEXT_MATH_ENV_ID, (kwargs) => {
      const unknown = Object.keys(kwargs);
      if (unknown.length > 0) throw new ConfigError(`${TEXT_MATH_ENV_ID}: takes no options, got ${unknown.map((k) => `'${k}'`).join(', ')}`);
      return new TextMathEnv();
    }, {
      domain: 'math',
      description: 'Procedurally generated arithmetic and word problems (4 levels) with exact answers; think, then submit.',
      maxEpisodeSteps: TEXT_MATH_MAX_STEPS,
      agents: { expert: () => new TextMathExpert() },
    });
  }
  if (!isRegistered(RECALL_ENV_ID)) {
    register(RECALL_ENV_ID, (kwargs) => {
      const unknown = Object.keys(kwargs);
      if (unknown.length > 0) throw new ConfigError(`${RECALL_ENV_ID}: takes no options, got ${unknown.map((k) => `'${k}'`).join(', ')}`);
      return new RecallEnv();
    }, {
      domain: 'recall',
      description: 'Associative recall in one tool call: four name=number pairs, submit the asked name\'s number (4,000 train, 400 held-out tasks). The CPU-sized RL setting.',
      maxEpisodeSteps: RECALL_MAX_STEPS,
      // `flawed`: the expert with 60% of its answers written as words (scored 0), the SFT data that leaves RL headroom.
      agents: { expert: () => new RecallExpert(), flawed: () => new RecallWordsDemonstrator() },
    });
  }
  if (!isRegistered(TOOL_USE_ENV_ID)) {
    register(TOOL_USE_ENV_ID, (kwargs) => new ToolUseEnv(kwargs), {
      domain: 'tool-use',
      description:
        'Questions about a fictional world answered with lookup, search and calculator tools: single and multi-hop lookups, arithmetic, search-then-lookup.',
      maxEpisodeSteps: TOOL_USE_MAX_STEPS,
      agents: { expert: () => new ToolUseExpert() },
    });
  }
  if (!isRegistered(TOOL_USE_RANDOMIZED_ENV_ID)) {
    // The same tasks, tools and expert; each episode's numeric facts are redrawn (training data that cannot
    // be memorised). Evaluate on `gymflow/tool-use-v0`.
    register(TOOL_USE_RANDOMIZED_ENV_ID, (kwargs) => new ToolUseEnv({ randomizeValues: true, ...kwargs }), {
      domain: 'tool-use',
      description: 'gymflow/tool-use-v0 with its numeric facts redrawn every episode (domain randomisation for training data).',
      maxEpisodeSteps: TOOL_USE_MAX_STEPS,
      agents: { expert: () => new ToolUseExpert() },
    });
  }
  if (!isRegistered(TOOL_USE_PYTHON_ENV_ID)) {
    // The four tools of the Nano-SkyRL design (lookup, search, calculator, python) and the kinds that need python,
    // after the same base tasks. Needs a Docker engine only from its first `python` call.
    register(TOOL_USE_PYTHON_ENV_ID, (kwargs) => new ToolUseEnv({ python: true, ...kwargs }), {
      domain: TOOL_USE_PYTHON_DOMAIN,
      description:
        'gymflow/tool-use-v0 with a python tool (code run in a Docker sandbox) and tasks that need it: aggregating and ranking tables, date arithmetic, string manipulation.',
      maxEpisodeSteps: TOOL_USE_MAX_STEPS,
      agents: { expert: () => new ToolUseExpert() },
    });
  }
  if (!isRegistered(HOUSEHOLD_ENV_ID)) {
    register(HOUSEHOLD_ENV_ID, (kwargs) => new HouseholdEnv(kwargs), {
      domain: 'household',
      description:
        'A lite ALFWorld: generated houses of rooms, receptacles and objects; pick and place, examine in light, clean/heat/cool then place, pick two and place.',
      maxEpisodeSteps: HOUSEHOLD_MAX_STEPS,
      // The expert searches for objects as an agent must; the planner knows where they start (shorter episodes).
      agents: { expert: () => new HouseholdExpert(), planner: () => new HouseholdPlanner() },
    });
  }
  if (!isRegistered(WEBSHOP_ENV_ID)) {
    register(WEBSHOP_ENV_ID, (kwargs) => new WebshopEnv(kwargs), {
      domain: 'browser',
      description:
        'A lite WebShop: a generated store of 1,500 products in ten departments; search (BM25), page through results, open items, select options and buy what the instruction asks for. Reward: WebShop\'s attribute, option and price match.',
      maxEpisodeSteps: WEBSHOP_MAX_STEPS,
      agents: { expert: () => new WebshopExpert() },
    });
  }
  if (!isRegistered(CONVERSATION_ENV_ID)) {
    register(CONVERSATION_ENV_ID, (kwargs) => new RetailEnv(kwargs), {
      domain: 'conversation',
      description:
        "Customer service in a retail store (tau-bench's retail): authenticate a simulated customer, then cancel, modify, return or exchange orders under a written policy; reward 1 when the final database equals the gold one and every required answer was told.",
      maxEpisodeSteps: CONVERSATION_MAX_STEPS,
      agents: { expert: () => new RetailExpert() },
    });
  }
  if (!isRegistered(DISCUSSION_ENV_ID)) {
    register(DISCUSSION_ENV_ID, (kwargs) => new DiscussionEnv(kwargs), {
      domain: 'discussion',
      description:
        'A hidden-profile discussion (Stasser & Titus): facilitate a committee of 2-4 simulated members whose private facts, pooled, overturn the option the shared briefing favours; ask members, ask the group, summarise, decide. Reward 1 for the pooled facts\' choice, every decisive fact heard and quoted.',
      maxEpisodeSteps: DISCUSSION_MAX_STEPS,
      agents: { expert: () => new DiscussionExpert() },
    });
  }
  if (!isRegistered(ADVISORY_ENV_ID)) {
    register(ADVISORY_ENV_ID, (kwargs) => new AdvisoryEnv(kwargs), {
      domain: 'advisory',
      description:
        'Travel advice under constraints (TravelPlanner-style): a simulated client reveals origin, dates, party, budget, hotel, flight and activity wishes only when asked; search flights, hotels and activities, then recommend; reward = every constraint met × value / best value within them.',
      maxEpisodeSteps: ADVISORY_MAX_STEPS,
      agents: { expert: () => new AdvisoryExpert() },
    });
  }
  if (!isRegistered(ENGINEERING_ENV_ID)) {
    register(ENGINEERING_ENV_ID, (kwargs) => new EngineeringEnv(kwargs), {
      domain: 'engineering',
      description:
        'Incident response on a simulated service fleet with a hidden fault (bad deploy, config change, saturated dependency, full disk, connection leak): read logs, metrics and change history, fix it with the commander\'s approval, resolve with the root cause; reward 1 when the fleet is healthy, the root cause is right and no harmful change was made.',
      maxEpisodeSteps: ENGINEERING_MAX_STEPS,
      agents: { expert: () => new EngineeringExpert() },
    });
  }
  if (!isRegistered(QA_ENV_ID)) {
    // Needs a question set (kwargs.questions); `gymflow envs` lists it as unavailable without one.
    register(QA_ENV_ID, (kwargs) => new QaEnv(kwargs), {
      domain: 'qa',
      description:
        "Question answering on a question set in Humanity's Last Exam's format (kwargs.questions, JSON or JSONL): answer in HLE's format (explanation, exact answer, confidence); graded as HLE does, by a judge model (kwargs.judge) or the rule check; eval reports accuracy and the RMS calibration error.",
      maxEpisodeSteps: QA_MAX_STEPS,
      // Made only with a question set, but its tools are always these: exports render its prompts from them.
      tools: QA_TOOLS,
    });
  }
  registerSandboxEnv();
  // SWE-bench instances (kwargs.instances); Docker from the first reset, which builds the instance's image.
  registerSweEnv();
  // `gymflow/openenv-v0` (kwargs.url) and the servers named in GYMFLOW_OPENENV; each describes its server at its first make.
  registerOpenEnvEnvs();
}
