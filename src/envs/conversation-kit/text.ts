/**
 * How conversation envs read what was said: one normalisation for every check, so that the scripted user,
 * the policy guard and the reward agree on whether a message "mentions" something.
 *
 * tau-bench checks a required output as `output.lower() in message.lower().replace(",", "")`; here both
 * sides are lower-cased, commas and `#` are dropped and runs of white space become one space, so
 * `#W1234567`, `W1234567` and `w1234567` are one mention, and `1,234.50` is `1234.50`.
 */

const DROPPED = /[,#]/g;
const SPACES = /\s+/g;

/** The normalised form of a text (see the module comment). */
export function normalizeText(text: string): string {
  return text.toLowerCase().replace(DROPPED, '').replace(SPACES, ' ').trim();
}

/** Whether `text` mentions `needle` (both normalised). An empty needle is never mentioned. */
export function mentions(text: string, needle: string): boolean {
  const n = normalizeText(needle);
  return n !== '' && normalizeText(text).includes(n);
}

/**
 * Whether `text` mentions, for every group, at least one of the group's alternatives: the check of a
 * confirmation request (`[['#W1', 'W1'], ['no longer needed']]`: the order and the reason).
 */
export function mentionsAll(text: string, groups: readonly (readonly string[])[]): boolean {
  const t = normalizeText(text);
  return groups.every((group) => group.some((alt) => {
    const n = normalizeText(alt);
    return n !== '' && t.includes(n);
  }));
}

/**
 * The required outputs that none of `messages` mentions (tau-bench's "outputs" term: every one must have
 * been told to the user).
 */
export function missingOutputs(messages: readonly string[], required: readonly string[]): string[] {
  const said = messages.map(normalizeText);
  return required.filter((out) => {
    const n = normalizeText(out);
    return !said.some((m) => m.includes(n));
  });
}
