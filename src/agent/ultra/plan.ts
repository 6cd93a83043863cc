/**
 * The words of an ultra turn, pure: the instructions of its three phases
 * (planner, worker, merge), the planner's JSON plan read back from whatever
 * the model wrote around it, the merge request that carries every part's
 * outcome, and the footer the reply ends with.
 */
import type { PromptSection } from "../agent.ts";

/** The headings the three phases' instructions carry: what a reader of the request (or a test's fake model) tells them apart by. */
export const PLANNER_HEADING = "Ultra mode: planning";
export const WORKER_HEADING = "Ultra mode: worker";
export const MERGE_HEADING = "Ultra mode: merging";

/** The most characters of one part's result the merge sees. */
export const MAX_PART_CHARS = 40_000;

export interface PlannedPart {
  title: string;
  task: string;
}

export interface Plan {
  parts: PlannedPart[];
  /** How the plan was read: as the planner wrote it, cut to the limit (extra parts joined into the last), or not a plan at all (one part: the whole request). */
  source: "plan" | "capped" | "fallback";
}

/** How one part ended, as the merge is told. */
export type PartOutcome =
  | { status: "done"; text: string; stepLimit: boolean }
  | { status: "failed"; error: string }
  /** Stopped (or never started) because the token budget ran out; `text` is what it had written by then. */
  | { status: "unfinished"; text: string };

export function plannerSection(maxParts: number): PromptSection {
  return {
    title: PLANNER_HEADING,
    body: [
      "The owner asked for the request below to be worked on exhaustively, by several workers in parallel. Do not answer it yourself: plan the work.",
      `Split it into at most ${maxParts} independent parts that can be worked on at the same time, none needing another's result. Use fewer parts when the request does not split well; one part is fine.`,
      "Write each part's task so that it stands on its own: what exactly to find out, check or produce, with the context a worker needs from this conversation.",
      'Reply with JSON only, no other text: {"parts": [{"title": "a few words", "task": "what to do"}]}',
    ].join("\n"),
  };
}

export function workerSection(request: string, index: number, total: number, part: PlannedPart): PromptSection {
  return {
    title: WORKER_HEADING,
    body: [
      `You work on part ${index + 1} of ${total} ("${part.title}") of a request the owner sent in ultra mode:`,
      "",
      quoteBlock(request),
      "",
      "Other workers handle the other parts at the same time, and a final step merges every part into one answer for the owner.",
      "Do your part thoroughly, using your tools where they help. Answer with your result for this part only: facts, findings, what you made, and anything you could not settle. It is read by the merge step, not by the owner.",
    ].join("\n"),
  };
}

export function mergeSection(budgetReached: boolean): PromptSection {
  const lines = [
    "The owner's request was split into parts, each worked on separately; their results follow the request below.",
    "Review them: check them against each other, resolve contradictions, drop repetition, and write one complete answer to the owner's request, as if you had done all the work yourself. Do not mention parts or workers unless something is missing.",
    "Where a part failed or is unfinished, say plainly what is missing from the answer.",
  ];
  if (budgetReached) lines.push("The token budget of this request ran out before every part was done: say so in your answer.");
  return { title: MERGE_HEADING, body: lines.join("\n") };
}

/** The merge request: the owner's words, then every part with how it ended. */
export function mergeInput(request: string, parts: readonly PlannedPart[], outcomes: readonly PartOutcome[]): string {
  const blocks = parts.map((part, i) => {
    const outcome = outcomes[i] ?? { status: "unfinished", text: "" };
    const head = `<part number="${i + 1}" title="${escapeAttribute(part.title)}" status="${outcome.status}">`;
    let body: string;
    switch (outcome.status) {
      case "done":
        body = clipped(outcome.text) + (outcome.stepLimit ? "\n\n(The worker stopped at its step limit; this may be incomplete.)" : "");
        break;
      case "failed":
        body = `This part failed: ${outcome.error}. Its result is missing.`;
        break;
      case "unfinished":
        body =
          outcome.text.trim() === ""
            ? "This part was not done: the token budget ran out first."
            : `This part was stopped when the token budget ran out; what it had so far:\n\n${clipped(outcome.text)}`;
        break;
    }
    return `${head}\nTask: ${part.task}\n\n${body}\n</part>`;
  });
  return `<request>\n${request}\n</request>\n\n${blocks.join("\n\n")}`;
}

/** The plan in the planner's reply (JSON, perhaps in a code fence or with words around it), at most `maxParts` parts. */
export function parsePlan(reply: string, request: string, maxParts: number): Plan {
  const whole: Plan = { parts: [{ title: "the whole request", task: request }], source: "fallback" };
  const value = jsonIn(reply);
  const list = Array.isArray(value) ? value : isObject(value) && Array.isArray(value.parts) ? value.parts : null;
  if (!list) return whole;
  const parts: PlannedPart[] = [];
  for (const item of list) {
    const part = partOf(item, parts.length);
    if (part) parts.push(part);
  }
  if (parts.length === 0) return whole;
  if (parts.length <= maxParts) return { parts, source: "plan" };
  // More than allowed: nothing is dropped, the extra tasks join the last part kept.
  const kept = parts.slice(0, maxParts);
  const extra = parts.slice(maxParts - 1);
  kept[maxParts - 1] = { title: extra.map((p) => p.title).join(" + "), task: extra.map((p) => `- ${p.task}`).join("\n") };
  return { parts: kept, source: "capped" };
}

/** The line the reply ends with: parts, requests made, tokens used, and whether the budget ran out. */
export function ultraFooter(facts: { parts: number; failed: number; unfinished: number; requests: number; tokens: number; budget?: number }): string {
  const parts = [`${facts.parts} part${facts.parts === 1 ? "" : "s"}`];
  const notes = [facts.failed ? `${facts.failed} failed` : "", facts.unfinished ? `${facts.unfinished} unfinished` : ""].filter(Boolean);
  if (notes.length > 0) parts[0] += ` (${notes.join(", ")})`;
  parts.push(`${facts.requests} request${facts.requests === 1 ? "" : "s"}`, `${facts.tokens.toLocaleString("en-US")} tokens`);
  if (facts.budget !== undefined) parts.push(`token budget of ${facts.budget.toLocaleString("en-US")} reached: merged what was done`);
  return `_Ultra: ${parts.join(" · ")}_`;
}

function partOf(item: unknown, index: number): PlannedPart | null {
  if (typeof item === "string") return item.trim() === "" ? null : { title: `part ${index + 1}`, task: item.trim() };
  if (!isObject(item)) return null;
  const task = [item.task, item.description, item.prompt].find((v): v is string => typeof v === "string" && v.trim() !== "");
  if (!task) return null;
  const title = typeof item.title === "string" && item.title.trim() !== "" ? item.title.trim().replace(/\s+/g, " ").slice(0, 80) : `part ${index + 1}`;
  return { title, task: task.trim() };
}

/** The first JSON value that parses in the text: the whole text, a fenced block, or from the first bracket to its last partner. */
function jsonIn(text: string): unknown {
  const candidates = [text.trim()];
  for (const match of text.matchAll(/```(?:json)?\s*\n([\s\S]*?)```/g)) candidates.push(match[1]!.trim());
  const brace = text.indexOf("{");
  if (brace >= 0) candidates.push(text.slice(brace, text.lastIndexOf("}") + 1));
  const bracket = text.indexOf("[");
  if (bracket >= 0) candidates.push(text.slice(bracket, text.lastIndexOf("]") + 1));
  for (const candidate of candidates) {
    if (candidate === "") continue;
    try {
      return JSON.parse(candidate);
    } catch {
      // the next candidate
    }
  }
  return undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

const clipped = (text: string) =>
  text.length > MAX_PART_CHARS ? `${text.slice(0, MAX_PART_CHARS)}\n\n(…cut: the rest of this part's result was too long)` : text;

const escapeAttribute = (text: string) => text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

const quoteBlock = (text: string) =>
  text
    .split("\n")
    .map((line) => `> ${line}`)
    .join("\n");
