import type { ToolSpec } from '../../core/types.js';
import { strictTool, textParam } from '../shared/tool-spec.js';

/** The tool that ends the meeting with the decision. */
export const DECIDE_TOOL = 'decide';

/** The tools of `gymflow/discussion-v0`, in the order they are offered. */
export const DISCUSSION_TOOLS: readonly ToolSpec[] = [
  strictTool('address', "Ask one member of the committee something; the result is their answer. Members tell a private fact only when asked about the topic it concerns.", 'communicate', {
    participant: textParam('The member\'s name, as the task lists it, e.g. "Ana".'),
    message: textParam('What you say or ask, e.g. "Ana, what do you know about the references of each candidate?".'),
  }),
  strictTool('ask_group', 'Ask the whole committee a question; the result is every member\'s answer, one line each.', 'communicate', {
    question: textParam('The question, e.g. "What do you all know about the rent of each site?".'),
  }),
  strictTool('summarise', "Post a summary of the facts heard so far; each member checks it and points out a fact of theirs it leaves out.", 'communicate', {
    summary: textParam('The summary, quoting the facts.'),
  }),
  strictTool('think', 'Think about the next step; changes nothing and tells the committee nothing.', 'think', { thought: textParam('The thought.') }),
  strictTool(DECIDE_TOOL, 'Take the decision and end the meeting.', 'submit', {
    choice: textParam('The option chosen, exactly as the task names it.'),
    rationale: textParam("Why: quote the members' facts that decided it."),
  }),
];
