import { describe, expect, it } from 'vitest';
import { isAffirmative, isConfirmationRequest } from './confirmation.js';

describe('confirmations', () => {
  it('recognises a request to confirm', () => {
    for (const m of ['Shall I cancel order #W1?', 'Please confirm: …', 'Would you like me to proceed?', 'Do you want me to change it?', 'Is that correct?']) {
      expect(isConfirmationRequest(m), m).toBe(true);
    }
    for (const m of ['Which order is it?', 'Would you like the refund on your gift card or the original payment method?', 'Done. Anything else?']) {
      expect(isConfirmationRequest(m), m).toBe(false);
    }
  });

  it('hears a yes, and not a no, a hesitation or a negated yes', () => {
    for (const a of ['Yes.', 'yes please go ahead', 'Sure, do it.', "That's right, proceed.", 'OK']) expect(isAffirmative(a), a).toBe(true);
    for (const a of ['No.', 'No, yes is not what I said', 'Actually, wait. I changed my mind.', "I don't want that, yes", 'Hmm, maybe.', 'Which one?']) {
      expect(isAffirmative(a), a).toBe(false);
    }
  });
});
