import { TaskError } from '../../core/errors.js';
import type { Split, TaskInfo } from '../../core/types.js';
import type { ExpectedAnswer } from './answer.js';
import { defaultKnowledgeBase, type KnowledgeBase } from './knowledge-base.js';
import {
  answerKey,
  buildPythonTaskBank,
  countPythonTasks,
  expectedPythonAnswer,
  isPythonSpec,
  isPythonTaskId,
  type PythonTask,
} from './python-tasks.js';
import { countToolTasks, expectedAnswer, getToolTask, listToolTasks, type ToolTask } from './tasks.js';

/**
 * The task banks of both tool-use variants behind one interface: `gymflow/tool-use-v0` has the base bank
 * (`tasks.ts`) as it always was; `gymflow/tool-use-python-v0` has the base bank followed by the python kinds
 * (`python-tasks.ts`). In the python variant a base held-out task's `answerInTrain` also counts the python
 * training answers (its training split is larger); ids, questions and answers are the same in both.
 */

/** A task of either bank. */
export type AnyToolTask = ToolTask | PythonTask;

/** The domain of `gymflow/tool-use-python-v0` (a profile of its own: it has a fifth tool). */
export const TOOL_USE_PYTHON_DOMAIN = 'tool-use-python';

/** Whether a task is one of the python kinds. */
export function isPythonTask(task: AnyToolTask): task is PythonTask {
  return isPythonSpec(task);
}

let pythonBank: Record<Split, AnyToolTask[]> | undefined;
let pythonById: Map<string, AnyToolTask> | undefined;

function buildPythonVariant(): Record<Split, AnyToolTask[]> {
  const kb = defaultKnowledgeBase();
  const baseTrain = listToolTasks('train');
  const python = buildPythonTaskBank(kb, new Set(baseTrain.map((t) => answerKey(expectedAnswer(t, kb)))));
  const pythonKeys = new Set(python.train.map((t) => answerKey(expectedPythonAnswer(t, kb))));
  const heldout = listToolTasks('heldout').map((t): ToolTask => (t.answerInTrain || !pythonKeys.has(answerKey(expectedAnswer(t, kb))) ? t : { ...t, answerInTrain: true }));
  return { train: [...baseTrain, ...python.train], heldout: [...heldout, ...python.heldout] };
}

/** Every task of a variant's split (both when omitted): base first, then (python variant) the python kinds. */
export function listBankTasks(python: boolean, split?: Split): AnyToolTask[] {
  if (!python) return listToolTasks(split);
  pythonBank ??= buildPythonVariant();
  return split ? pythonBank[split] : [...pythonBank.train, ...pythonBank.heldout];
}

/** How many tasks a variant's split has (both when omitted), without building the questions. */
export function countBankTasks(python: boolean, split?: Split): number {
  return countToolTasks(split) + (python ? countPythonTasks(split) : 0);
}

/**
 * The task with this id in a variant (undefined `python`: whichever bank has it, as the expert asks). A python
 * task asked of the base variant is a {@link TaskError} that names the variant that has it.
 */
export function getBankTask(id: string, python?: boolean): AnyToolTask {
  if (!isPythonTaskId(id)) {
    if (python !== true) return getToolTask(id);
    pythonById ??= new Map(listBankTasks(true).map((t) => [t.id, t]));
    return pythonById.get(id) ?? getToolTask(id);
  }
  if (python === false) throw new TaskError(`tool-use: task '${id}' needs the python tool: it is a task of gymflow/tool-use-python-v0`);
  pythonById ??= new Map(listBankTasks(true).map((t) => [t.id, t]));
  const task = pythonById.get(id);
  if (!task) {
    const n = (s: Split): string => String(listBankTasks(true, s).filter(isPythonTask).length - 1).padStart(5, '0');
    throw new TaskError(`tool-use: unknown task id '${id}' (python tasks: tool-python-train-00000…${n('train')}, tool-python-heldout-00000…${n('heldout')})`);
  }
  return task;
}

/** The expected answer of a task of either bank, from the episode's knowledge base. */
export function expectedBankAnswer(task: AnyToolTask, kb: KnowledgeBase): ExpectedAnswer {
  return isPythonTask(task) ? expectedPythonAnswer(task, kb) : expectedAnswer(task, kb);
}

/** The public description of a task (no answer, no hidden entity) in a domain. */
export function bankTaskInfo(task: AnyToolTask, domain: string): TaskInfo {
  return {
    id: task.id,
    domain,
    instruction: task.question,
    split: task.split,
    metadata: { kind: task.kind, answerType: task.answerType, answerInTrain: task.answerInTrain },
  };
}
