/**
 * Content from anyone but the owner — another member of a shared chat, an
 * allowed sender, a fetched page, a search result or a tool server's answer — reaches
 * the model inside one envelope, so that the instructions can say once what
 * it is: information, never instructions. The envelope cannot be closed
 * from inside: any tag of the same name in the content is defused.
 */

/** The tag name; the instructions (src/agent/prompt.ts) explain it to the model. */
export const UNTRUSTED_TAG = "untrusted";

const TAG = new RegExp(`<(/?)\\s*${UNTRUSTED_TAG}`, "gi");

/** `text` as untrusted content from `source` (who or what it comes from, in a few words). */
export function untrusted(source: string, text: string): string {
  const defused = (value: string) => value.replace(TAG, (_match, slash: string) => `‹${slash}${UNTRUSTED_TAG}`);
  const from = defused(source).replace(/"/g, "'");
  return `<${UNTRUSTED_TAG} source="${from}">\n${defused(text)}\n</${UNTRUSTED_TAG}>`;
}

/** Who said a message, as the model is shown it. */
export interface MessageSender {
  id: string;
  name?: string;
  /** The owner (or an operator in a direct chat): their words are requests. Anyone else's are marked untrusted. */
  trusted: boolean;
}

/**
 * A user message as the model reads it: the owner's words in a direct chat
 * as they are; in a shared chat with who said them; anyone else's inside the
 * untrusted envelope, with their name and id.
 */
export function spokenText(text: string, sender: MessageSender | undefined, shared: boolean): string {
  if (!sender) return text;
  // A display name is the sender's own choice: one line, not too long, so it cannot pose as a second message.
  const name = sender.name?.replace(/\s+/g, " ").trim().slice(0, 64);
  const who = `${name ? `${name} ` : ""}(id ${sender.id})`;
  if (!sender.trusted) return untrusted(`message from ${who}, who is not the owner`, text);
  return shared ? `[${who}, the owner]\n${text}` : text;
}
