/**
 * The memory tools the model is offered: `remember(text)`, `recall(query)`
 * and `forget(id or query)`. Each works in the scope of whoever the turn is
 * for (the owner's memory, or that sender's own), read from the tool context
 * at run time, so a non-owner's facts never reach anyone else.
 */
import { Type } from "@sinclair/typebox";
import { MAX_MEMORY_CHARS, type Memory, type MemoryStore, memoryScope } from "../../store/memory.ts";
import { defineTool, type Tool, type ToolContext, ToolError } from "../tools/types.ts";

/** How many facts `recall` answers with at most. */
export const RECALL_LIMIT = 8;

/** One fact as the model reads it: its id, when and where it was learnt, its text. */
export function describeMemory(memory: Memory): string {
  const channel = memory.conversation.split(":")[0] ?? "?";
  return `#${memory.id} (learnt ${new Date(memory.createdAt).toISOString().slice(0, 10)} on ${channel}): ${memory.text}`;
}

const scopeOf = (ctx: ToolContext) => memoryScope({ channel: ctx.channel, senderId: ctx.senderId, role: ctx.role });

/** remember, recall and forget over one store. */
export function memoryTools(store: MemoryStore): Tool[] {
  const remember = defineTool({
    name: "remember",
    description:
      "Keep a fact about the user for later conversations (preferences, people, plans, things they asked you to remember). " +
      "Write it as one self-contained sentence in the third person. Relevant facts are shown to you automatically in later turns.",
    parameters: Type.Object({ text: Type.String({ description: `the fact, at most ${MAX_MEMORY_CHARS} characters` }) }, { additionalProperties: false }),
    async run(args, ctx) {
      const fact = args.text.trim();
      if (fact === "") throw new ToolError("text is empty: give the fact to remember");
      if (fact.length > MAX_MEMORY_CHARS) throw new ToolError(`text is ${fact.length} characters; keep a fact under ${MAX_MEMORY_CHARS}`);
      const { memory, existed } = store.add(scopeOf(ctx), fact, ctx.conversation);
      return existed ? `already remembered as #${memory.id}` : `remembered as #${memory.id}`;
    },
  });

  const recall = defineTool({
    name: "recall",
    description:
      "Search what you remember about the user; answers the best matches with their ids and the dates they were learnt. An empty query lists the most recent facts.",
    parameters: Type.Object({ query: Type.String({ description: "words to look for" }) }, { additionalProperties: false }),
    async run(args, ctx) {
      const query = args.query.trim();
      const scope = scopeOf(ctx);
      const found = query === "" ? store.recent(scope, RECALL_LIMIT) : store.search(scope, query, RECALL_LIMIT);
      if (found.length === 0) return query === "" ? "nothing remembered yet" : `nothing remembered matches "${query}"`;
      store.touch(found.map((m) => m.id));
      return found.map(describeMemory).join("\n");
    },
  });

  const forget = defineTool({
    name: "forget",
    description:
      "Forget a remembered fact: by its id (from recall, or the #number shown with remembered facts), or every fact containing all the words of a query. Says what was forgotten.",
    parameters: Type.Object(
      {
        id: Type.Optional(Type.Integer({ description: "the fact's id" })),
        query: Type.Optional(Type.String({ description: "words every fact to forget contains" })),
      },
      { additionalProperties: false },
    ),
    async run(args, ctx) {
      const scope = scopeOf(ctx);
      let doomed: Memory[];
      if (args.id !== undefined) {
        const memory = store.get(scope, args.id);
        if (!memory) throw new ToolError(`there is no remembered fact #${args.id}; use recall to find its id`);
        doomed = [memory];
      } else {
        const query = (args.query ?? "").trim();
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
  });

  return [remember, recall, forget];
}
