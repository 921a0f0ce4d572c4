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

/**
 * A handler that is both sides of an HLE evaluation on one OpenAI-compatible server: a request with a
 * `response_format` is the judge's (answered by {@link hleJudge}); any other is the policy's, answered with one
 * `<tool_call>` of the `answer` tool whose response is `respond(prompt)` — `prompt` being every message's text, so the
 * question can be looked up in it.
 */
export function hlePolicyAndJudge(respond: (prompt: string) => string): FakeHandler {
  return (request, index) => {
    const body = request.body as { response_format?: unknown; messages: { content: unknown }[] };
    if (body.response_format !== undefined) return hleJudge(request, index);
    const prompt = body.messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))).join('\n');
    const call = JSON.stringify({ name: 'answer', arguments: { response: respond(prompt) } });
    return { body: openaiCompletion(`<tool_call>${call}</tool_call>`) };
  };
}

/**
 * Responses to the questions of `src/envs/qa/__fixtures__/questions.jsonl`, three right and two wrong, with
 * confidences 90, 80, 70, 60 and none (100): accuracy 3/5, and in one bin an RMS calibration error of 0.2.
 */
export function fixtureResponse(prompt: string): string {
  if (prompt.includes('capital city of Australia')) return 'Explanation: purpose-built.\nExact Answer: Canberra\nConfidence: 90%';
  if (prompt.includes('smallest prime number greater than 90')) return 'Explanation: 91, 93, 95 are composite.\nExact Answer: 97\nConfidence: 80%';
  if (prompt.includes('noble gas')) return 'Explanation: unreactive.\nAnswer: A\nConfidence: 70%';
  if (prompt.includes('derivative of x^3')) return 'Explanation: 3x^2 + 1.\nExact Answer: 13\nConfidence: 60%';
  if (prompt.includes('planets of the Solar System have rings')) return 'Explanation: the four giants.\nAnswer: D';
  return 'Explanation: I do not know.\nExact Answer: None\nConfidence: 0%';
}
