/**
 * Before each turn, the few remembered facts most relevant to the new
 * message go into the instructions under their own heading, so the model
 * uses them without being asked. At most `items` facts and `chars`
 * characters of them ([fermix_core.memory] prompt_items, prompt_chars);
 * the scope is the turn's sender's (the owner's memory, or their own).
 */
import { type MemoryStore, memoryScope } from "../../store/memory.ts";
import type { PromptSection, TurnRequest } from "../agent.ts";

export const MEMORY_HEADING = "What you remember (relevant to this message)";

export interface MemoryPromptSettings {
  /** At most this many facts (prompt_items). */
  items: number;
  /** At most this many characters of facts in all (prompt_chars). */
  chars: number;
}

/** The prompt-section provider for the agent: one section, or none when nothing relevant is remembered. */
export function memorySection(store: MemoryStore, settings: MemoryPromptSettings): (request: TurnRequest) => PromptSection[] {
  return (request) => {
    if (settings.items <= 0 || settings.chars <= 0) return [];
    const { channel, senderId, role } = request.toolContext;
    // Look further than `items`: a long fact that does not fit the budget makes room for a shorter one.
    const candidates = store.search(memoryScope({ channel, senderId, role }), request.text, settings.items * 3);
    const lines: string[] = [];
    const used: number[] = [];
    let chars = 0;
    for (const memory of candidates) {
      if (lines.length === settings.items) break;
      const line = `- ${memory.text.replace(/\s+/g, " ")} (#${memory.id}, learnt ${new Date(memory.createdAt).toISOString().slice(0, 10)})`;
      if (chars + line.length > settings.chars) continue;
      lines.push(line);
      used.push(memory.id);
      chars += line.length + 1;
    }
    if (lines.length === 0) return [];
    store.touch(used);
    return [{ title: MEMORY_HEADING, body: lines.join("\n") }];
  };
}
