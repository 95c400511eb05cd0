/**
 * Who is calling, and from which conversation (SPEC section 3). Both become folder names, so both
 * are restricted to [A-Za-z0-9_-]; a user id that breaks the rule is refused, a conversation id is
 * sanitised (it only separates one user's upload folders).
 */
import { shedError, showValue } from './errors.js';

export const ID_RULE = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,127}$/;

export interface Identity {
  id: string;
  name: string;
  email: string;
  role: string;
}

export function parseUser(rawUser: unknown): Identity {
  const user = rawUser !== null && typeof rawUser === 'object' ? (rawUser as Record<string, unknown>) : undefined;
  const id = user?.id;
  if (typeof id !== 'string' || !ID_RULE.test(id)) {
    throw shedError(
      'INVALID_USER',
      user === undefined || id === undefined
        ? 'No user identity: the host must pass __user__ with an id.'
        : `Invalid user id ${showValue(id)}: expected 1-128 characters from A-Z a-z 0-9 _ - not starting with '-'.`,
      { hint: 'This is a host configuration problem, not something the model can fix by changing arguments.' },
    );
  }
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  return { id, name: text(user?.name) || id, email: text(user?.email), role: text(user?.role) || 'user' };
}

/** Conversation id from `__metadata__.chat_id` or `__chat_id__`; unusable characters become `_`. */
export function conversationId(metadata: unknown, chatId: unknown): string {
  return namedConversation(metadata, chatId) ?? 'unknown';
}

/** The conversation the host named, cleaned as conversationId does; undefined when it named none. */
export function namedConversation(metadata: unknown, chatId: unknown): string | undefined {
  const meta = metadata !== null && typeof metadata === 'object' ? (metadata as Record<string, unknown>) : {};
  const raw = typeof meta.chat_id === 'string' && meta.chat_id.trim() ? meta.chat_id : chatId;
  if (typeof raw !== 'string') return undefined;
  return raw.trim().replace(/[^A-Za-z0-9_-]/g, '_').replace(/^-+/, '').slice(0, 128) || undefined;
}
