import type { JsonSchema, ToolSpec } from '../../core/types.js';
import { RESPOND_TOOL } from '../conversation-kit/respond-tool.js';

/** The tools of `gymflow/conversation-v0`: tau-bench's retail tools and `respond`. */

const str = (description: string): JsonSchema => ({ type: 'string', minLength: 1, description });
const ids = (description: string): JsonSchema => ({ type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, description });

function tool(name: string, description: string, category: ToolSpec['category'], properties: Record<string, JsonSchema>): ToolSpec {
  return { name, description, category, parameters: { type: 'object', properties, required: Object.keys(properties), additionalProperties: false } };
}

const ORDER_ID = str("The order id, with its '#', e.g. '#W0000000'.");
const PAYMENT_METHOD_ID = str("A payment method id from the user's details, e.g. 'credit_card_0000000' or 'gift_card_0000000'.");
const ADDRESS: Record<string, JsonSchema> = {
  address1: str('The first line, e.g. "123 Main St".'),
  address2: { type: 'string', description: 'The second line, e.g. "Apt 1" ("" for none).' },
  city: str('The city.'),
  state: str('The state, e.g. "CA".'),
  country: str('The country, e.g. "USA".'),
  zip: str('The zip code, e.g. "12345".'),
};

/** The write tools: each changes the database and needs the user's explicit confirmation first. */
export const RETAIL_WRITE_TOOLS = [
  'cancel_pending_order',
  'modify_pending_order_address',
  'modify_pending_order_payment',
  'modify_pending_order_items',
  'modify_user_address',
  'return_delivered_order_items',
  'exchange_delivered_order_items',
] as const;

/** The tool that hands the conversation to a person and ends the episode. */
export const TRANSFER_TOOL = 'transfer_to_human_agents';

/** The tools, in the order they are offered. */
export const RETAIL_TOOLS: readonly ToolSpec[] = [
  RESPOND_TOOL,
  tool('find_user_id_by_email', "Find a user's id by their email address (authenticates the user when the email came from them).", 'read', { email: str('The email, e.g. "john.doe12@example.com".') }),
  tool('find_user_id_by_name_zip', "Find a user's id by first name, last name and zip code (authenticates the user when these came from them).", 'read', {
    first_name: str('The first name.'),
    last_name: str('The last name.'),
    zip: str('The zip code.'),
  }),
  tool('get_user_details', "Get a user's details: name, address, email, payment methods and order ids.", 'read', { user_id: str('The user id, e.g. "john_doe_1234".') }),
  tool('get_order_details', "Get an order's details: items, status, address, fulfilments and payment history.", 'read', { order_id: ORDER_ID }),
  tool('get_product_details', "Get a product's details: its variants (item ids), their options, prices and availability.", 'read', { product_id: str('The product id, e.g. "6086499569".') }),
  tool('list_all_product_types', 'List the product types the store sells, with their product ids.', 'read', {}),
  tool('cancel_pending_order', "Cancel a pending order. The reason is 'no longer needed' or 'ordered by mistake'. Refunds go to the original payment methods (gift cards at once, others in 5-7 business days).", 'write', {
    order_id: ORDER_ID,
    reason: { type: 'string', enum: ['no longer needed', 'ordered by mistake'], description: 'Why the user cancels.' },
  }),
  tool('modify_pending_order_address', "Change the shipping address of a pending order.", 'write', { order_id: ORDER_ID, ...ADDRESS }),
  tool('modify_pending_order_payment', 'Pay a pending order with another of the user\'s payment methods (a gift card must cover the total); the original method is refunded.', 'write', {
    order_id: ORDER_ID,
    payment_method_id: PAYMENT_METHOD_ID,
  }),
  tool('modify_pending_order_items', 'Change items of a pending order to other available variants of the same products; the price difference is paid or refunded with the payment method given. Possible once per order.', 'write', {
    order_id: ORDER_ID,
    item_ids: ids('The item ids to change (repeat an id for each unit).'),
    new_item_ids: ids('The new item ids, in the same order.'),
    payment_method_id: PAYMENT_METHOD_ID,
  }),
  tool('modify_user_address', "Change a user's default address.", 'write', { user_id: str('The user id.'), ...ADDRESS }),
  tool('return_delivered_order_items', 'Request a return of items of a delivered order; the refund goes to the original payment method or a gift card of the user.', 'write', {
    order_id: ORDER_ID,
    item_ids: ids('The item ids to return.'),
    payment_method_id: PAYMENT_METHOD_ID,
  }),
  tool('exchange_delivered_order_items', 'Request an exchange of items of a delivered order for other available variants of the same products; the price difference is paid or refunded with the payment method given. Possible once per order.', 'write', {
    order_id: ORDER_ID,
    item_ids: ids('The item ids to exchange.'),
    new_item_ids: ids('The new item ids, in the same order.'),
    payment_method_id: PAYMENT_METHOD_ID,
  }),
  tool('think', 'Think about the next step; changes nothing and tells the user nothing.', 'think', { thought: str('The thought.') }),
  tool(TRANSFER_TOOL, 'Transfer the user to a human agent, with a summary of the issue; ends the conversation. Only when the request cannot be handled with these tools and the policy.', 'submit', {
    summary: str("A summary of the user's issue."),
  }),
];
