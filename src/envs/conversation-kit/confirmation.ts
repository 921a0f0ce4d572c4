/**
 * What counts as asking for a confirmation and as giving one. A conversation env lets a consequential
 * action through only after the agent asked the user to confirm it and the user said yes; the scripted
 * user recognises the question the same way, and a model user's answer is read with
 * {@link isAffirmative}.
 */

const ASKS = /\b(confirm|proceed|go ahead|shall i|should i|would you like me to|do you want me to|is (this|that) (correct|right|ok|okay))\b/i;
const YES = /\b(yes|yeah|yep|yup|sure|correct|confirm|confirmed|please do|go ahead|proceed|that'?s right|sounds good|ok|okay)\b/i;
const NO_FIRST = /^\W*(no|nope|not|don'?t|do not|wait|actually|hold on|stop|never ?mind|hmm)\b/i;
const NEGATED = /\b(no|not|don'?t|do not|never)\b/i;

/** Whether the agent's message asks the user to confirm something. */
export function isConfirmationRequest(message: string): boolean {
  return ASKS.test(message);
}

/**
 * Whether the user's answer says yes: it contains a yes-word, does not open with a refusal or a
 * hesitation (`No`, `Wait`, `Actually`), and has no negation before its first yes-word
 * (`I do not want that, yes` is not a yes).
 */
export function isAffirmative(answer: string): boolean {
  if (NO_FIRST.test(answer)) return false;
  const m = YES.exec(answer);
  if (!m) return false;
  return !NEGATED.test(answer.slice(0, m.index));
}
