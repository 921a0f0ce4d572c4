import { anthropicToolUse, openaiCompletion, type FakeHandler, type RecordedRequest } from './loopback-api.js';

/**
 * Test support: a loopback judge that answers HLE's judge prompt (`answer-judge.ts`) the way a careful judge model
 * would on simple answers. It reads the question's `[response]` and `[correct_answer]` back out of the prompt it
 * was sent, takes the response's `Exact Answer:` (or `Answer:`) line as the extracted answer, calls it correct when
 * it equals the correct answer ignoring case, `*`, surrounding space and a final period, and reads `Confidence: NN%`
 * (100 without one). It answers in the request's API: a forced tool call for Anthropic, JSON content for OpenAI.
 */

/** The verdict the judge gives on the prompt `text`. */
export function hleVerdictFor(text: string): { extracted_final_answer: string; reasoning: string; correct: 'yes' | 'no'; confidence: number } {
  const response = /\[response\]: ([\s\S]*?)\n\nYour judgement must be/.exec(text)?.[1];
  const correctAnswer = /\[correct_answer\]: ([\s\S]*?)\n\nreasoning:/.exec(text)?.[1];
  if (response === undefined || correctAnswer === undefined) throw new Error(`hle-judge fixture: not an HLE judge prompt: ${text.slice(0, 200)}`);
  const extracted = /^(?:Exact Answer|Answer):\s*(.*)$/im.exec(response)?.[1]?.trim() ?? 'None';
  const confidence = /^Confidence:\s*(\d+(?:\.\d+)?)\s*%?/im.exec(response)?.[1];
  const norm = (s: string): string => s.replace(/\*/g, '').trim().replace(/\.$/, '').toLowerCase();
  const correct = extracted !== 'None' && norm(extracted) === norm(correctAnswer);
  return {
    extracted_final_answer: extracted,
    reasoning: correct ? `${extracted} is the correct answer.` : `${extracted} differs from ${correctAnswer}.`,
    correct: correct ? 'yes' : 'no',
    confidence: confidence === undefined ? 100 : Math.round(Number(confidence)),
  };
}

/** The prompt text of a recorded judge request (the last user message). */
export function promptOf(request: RecordedRequest): string {
  const body = request.body as { messages: { role: string; content: unknown }[] };
  const user = body.messages.filter((m) => m.role === 'user')[0];
  const content = user?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: { text?: string }) => b.text ?? '').join('');
  return '';
}

/** A handler answering HLE judge requests on either API with {@link hleVerdictFor}. */
export const hleJudge: FakeHandler = (request) => {
  const verdict = hleVerdictFor(promptOf(request));
  return request.path.endsWith('/messages') ? { body: anthropicToolUse(verdict, undefined, 'extracted_answer') } : { body: openaiCompletion(JSON.stringify(verdict)) };
};
