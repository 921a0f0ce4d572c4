import type { ToolCategory } from '../core/types.js';
import { str } from './values.js';
import type { JsonObject } from './values.js';

/**
 * Tool categories for the tools of known agents, written to `step.metadata.category` so the reward
 * rules (which reason about categories, not names) treat converted logs like native trajectories.
 * Tools not listed get no category; the rules then fall back to guessing from the name.
 */
const KNOWN: Readonly<Record<string, ToolCategory>> = {
  // Execution
  bash: 'execute', execute_bash: 'execute', execute_ipython_cell: 'execute', python: 'execute', Bash: 'execute',
  BashOutput: 'execute', KillShell: 'execute', KillBash: 'execute', terminal: 'execute',
  // Reading
  open: 'read', goto: 'read', scroll_up: 'read', scroll_down: 'read', filemap: 'read', view_image: 'read',
  Read: 'read', NotebookRead: 'read', LS: 'read',
  // Writing
  edit: 'write', create: 'write', insert: 'write', append: 'write', Edit: 'write', MultiEdit: 'write',
  Write: 'write', NotebookEdit: 'write', apply_patch: 'write',
  // Searching
  find_file: 'search', search_dir: 'search', search_file: 'search', Glob: 'search', Grep: 'search',
  WebSearch: 'search', WebFetch: 'search', web_read: 'search', glob: 'search', grep: 'search',
  // Thinking and planning
  think: 'think', TodoWrite: 'think', TodoRead: 'think', ExitPlanMode: 'think', task_tracker: 'think',
  // Ending and talking
  submit: 'submit', finish: 'submit', exit_forfeit: 'submit', respond: 'communicate',
};

/** mini-swe-agent's submit command (a bash call that ends the episode). */
const SUBMIT_ECHO = /^\s*echo\s+(COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT|MINI_SWE_AGENT_FINAL_OUTPUT)\b/;

/**
 * The category of a known agent tool, or undefined. Editor tools with a `command` parameter
 * (`str_replace_editor`, `file_editor`) are `read` for `view` and `write` otherwise; mini-swe-agent's submit echo is
 * `submit`.
 */
export function toolCategory(tool: string, params: JsonObject): ToolCategory | undefined {
  // OpenHands' editor (`str_replace_editor`, and `file_editor` in the V1 SDK).
  if (tool === 'str_replace_editor' || tool === 'file_editor' || tool === 'planning_file_editor') return str(params.command) === 'view' ? 'read' : 'write';
  if (tool === 'bash' && SUBMIT_ECHO.test(str(params.command) ?? '')) return 'submit';
  return Object.prototype.hasOwnProperty.call(KNOWN, tool) ? KNOWN[tool] : undefined;
}
