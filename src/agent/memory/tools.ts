/**
 * The memory tools the model is offered: `remember(text)`, `recall(query)`
 * and `forget(id or query)`. Each works in the scope of whoever the turn is
 * for (the owner's memory, or that sender's own), read from the tool context
 * at run time, so a non-owner's facts never reach anyone else.
 */
import { MAX_MEMORY_CHARS, type Memory, type MemoryStore, memoryScope } from "../../store/memory.ts";
import { type Tool, type ToolContext, ToolError } from "../tools/types.ts";

/** How many facts `recall` answers with at most. */
export const RECALL_LIMIT = 8;

/** One fact as the model reads it: its id, when and where it was learnt, its text. */
export function describeMemory(memory: Memory): string {
  const channel = memory.conversation.split(":")[0] ?? "?";
  return `#${memory.id} (learnt ${new Date(memory.createdAt).toISOString().slice(0, 10)} on ${channel}): ${memory.text}`;
}

const scopeOf = (ctx: ToolContext) => memoryScope({ channel: ctx.channel, senderId: ctx.senderId, role: ctx.role });

const text = (args: Record<string, unknown>, key: string): string => (typeof args[key] === "string" ? (args[key] as string).trim() : "");

/** remember, recall and forget over one store. */
export function memoryTools(store: MemoryStore): Tool[] {
  const remember: Tool = {
    spec: {
      name: "remember",
      description:
        "Keep a fact about the user for later conversations (preferences, people, plans, things they asked you to remember). " +
        "Write it as one self-contained sentence in the third person. Relevant facts are shown to you automatically in later turns.",
      parameters: {
        type: "object",
        properties: { text: { type: "string", description: `the fact, at most ${MAX_MEMORY_CHARS} characters` } },
        required: ["text"],
        additionalProperties: false,
      },
    },
    async run(args, ctx) {
      const fact = text(args, "text");
      if (fact === "") throw new ToolError("text is empty: give the fact to remember");
      if (fact.length > MAX_MEMORY_CHARS) throw new ToolError(`text is ${fact.length} characters; keep a fact under ${MAX_MEMORY_CHARS}`);
      const { memory, existed } = store.add(scopeOf(ctx), fact, ctx.conversation);
      return existed ? `already remembered as #${memory.id}` : `remembered as #${memory.id}`;
    },
  };

  const recall: Tool = {
    spec: {
      name: "recall",
      description: "Search what you remember about the user; answers the best matches with their ids and the dates they were learnt. An empty query lists the most recent facts.",
      parameters: {
        type: "object",
        properties: { query: { type: "string", description: "words to look for" } },
        required: ["query"],
        additionalProperties: false,
      },
    },
    async run(args, ctx) {
      const query = text(args, "query");
      const scope = scopeOf(ctx);
      const found = query === "" ? store.recent(scope, RECALL_LIMIT) : store.search(scope, query, RECALL_LIMIT);
      if (found.length === 0) return query === "" ? "nothing remembered yet" : `nothing remembered matches "${query}"`;
      store.touch(found.map((m) => m.id));
      return found.map(describeMemory).join("\n");
    },
  };

  const forget: Tool = {
    spec: {
      name: "forget",
      description:
        "Forget a remembered fact: by its id (from recall, or the #number shown with remembered facts), or every fact containing all the words of a query. Says what was forgotten.",
      parameters: {
        type: "object",
        properties: {
          id: { type: "integer", description: "the fact's id" },
          query: { type: "string", description: "words every fact to forget contains" },
        },
        additionalProperties: false,
      },
    },
    async run(args, ctx) {
      const scope = scopeOf(ctx);
      const rawId = typeof args.id === "string" ? Number(args.id.replace(/^#/, "")) : args.id;
      let doomed: Memory[];
      if (rawId !== undefined && rawId !== null) {
        if (typeof rawId !== "number" || !Number.isInteger(rawId)) throw new ToolError("id must be a whole number");
        const memory = store.get(scope, rawId);
        if (!memory) throw new ToolError(`there is no remembered fact #${rawId}; use recall to find its id`);
        doomed = [memory];
      } else {
        const query = text(args, "query");
        if (query === "") throw new ToolError("give the id of the fact to forget, or a query");
        doomed = store.matchingAll(scope, query);
        if (doomed.length === 0) return `nothing remembered contains all of "${query}"; use recall to find the fact and forget it by id`;
      }
      store.delete(
        scope,
        doomed.map((m) => m.id),
      );
      return `forgot ${doomed.length === 1 ? "1 fact" : `${doomed.length} facts`}:\n${doomed.map(describeMemory).join("\n")}`;
    },
  };

  return [remember, recall, forget];
}
