/**
 * Property tests: generated documents (seeded, so a failure names the seed
 * that reproduces it) rendered for every platform, at the platform's own
 * limit and at small limits that force cuts on every rung of the ladder.
 */
import { describe, expect, test } from "bun:test";
import { profileOf } from "../../src/channels/registry.ts";
import type { GatewayChannel } from "../../src/message/index.ts";
import { parseMarkdown } from "../../src/present/markdown.ts";
import { type RenderedReply, renderReply } from "../../src/present/render.ts";
import { type GenDoc, generate } from "./gen.ts";
import { graphemeProblems, missingAtom, platformLength, skeleton, slackProblems, telegramProblems, visibleText } from "./oracle.ts";

const CHANNELS: GatewayChannel[] = ["telegram", "discord", "slack", "whatsapp", "signal"];
const DOCS = Number(process.env.PRESENT_PROPERTY_DOCS ?? 1500);

/** Every property, for one document on one channel at one limit; returns the first failure. */
function check(doc: GenDoc, channel: GatewayChannel, reply: RenderedReply, limit: number): string | undefined {
  const dialect = profileOf(channel).text.dialect.name;
  const visible: string[] = [];
  for (const [index, part] of reply.parts.entries()) {
    const where = `part ${index}`;
    if (part.notify !== (index === 0)) return `${where}: notify ${part.notify}`;
    if (part.linkPreview !== false || part.plain) return `${where}: flags`;
    if (part.text.trim() === "") return `${where}: empty`;
    const length = platformLength(dialect, part.text);
    if (length > profileOf(channel).text.limit) return `${where}: ${length} > platform limit`;
    // Under a smaller limit (block streaming), a code fence that fits the platform is sent alone, whole.
    if (length > limit && !loneFence(doc, visibleText(dialect, part.text))) return `${where}: ${length} > ${limit}`;
    if (dialect === "telegram") {
      const problems = telegramProblems(part.text);
      if (problems.length > 0) return `${where}: ${problems[0]}`;
    } else if (dialect !== "plain" && (part.text.match(/```/g)?.length ?? 0) % 2 !== 0) {
      return `${where}: unbalanced fence`;
    }
    if (dialect === "slack") {
      const problems = slackProblems(part.text);
      if (problems.length > 0) return `${where}: ${problems[0]}`;
    }
    const seen = visibleText(dialect, part.text);
    const problems = graphemeProblems(seen);
    if (problems.length > 0) return `${where}: ${problems[0]}`;
    visible.push(seen);
  }
  // Content: everything in order; fences that went out as attachments come after the reply.
  const attached = new Set(reply.attachments.map((a) => a.content));
  const moved = doc.fences.filter((f) => attached.has(f.code));
  let atoms = doc.atoms;
  for (const fence of moved) atoms = removeRun(atoms, fence.atoms);
  atoms = [...atoms, ...moved.flatMap((f) => f.atoms)];
  const missing = missingAtom(visible.join("\n") + reply.attachments.map((a) => a.content).join("\n"), atoms);
  if (missing) return `missing content: ${missing}`;
  // No fence split: every fence that stayed in the reply is whole inside one part.
  const skeletons = visible.map(skeleton);
  for (const fence of doc.fences) {
    if (attached.has(fence.code)) continue;
    const needle = skeleton(fence.code);
    if (!skeletons.some((v) => v.includes(needle))) return `fence split: ${fence.code.slice(0, 40)}`;
  }
  return undefined;
}

/** Whether a part is one whole code fence and nothing else. */
function loneFence(doc: GenDoc, visible: string): boolean {
  const seen = skeleton(visible);
  return doc.fences.some((f) => {
    const code = skeleton(f.code);
    return seen.includes(code) && seen.length - code.length <= 12;
  });
}

function removeRun(atoms: readonly string[], run: readonly string[]): string[] {
  for (let i = 0; i + run.length <= atoms.length; i++) {
    if (run.every((a, k) => atoms[i + k] === a)) return [...atoms.slice(0, i), ...atoms.slice(i + run.length)];
  }
  return [...atoms];
}

describe("every dialect, generated documents", () => {
  test(`${DOCS} documents on every channel, at the platform limit and at forced small limits`, () => {
    const failures: Record<string, string[]> = Object.fromEntries(CHANNELS.map((c) => [c, []]));
    const parts: Record<string, number> = Object.fromEntries(CHANNELS.map((c) => [c, 0]));
    for (let seed = 1; seed <= DOCS; seed++) {
      // Every sixth document is long and meets the platform's own limit; the rest meet small
      // limits, so short documents split on every rung of the ladder too.
      const atPlatform = seed % 6 === 0;
      const doc = generate(seed, atPlatform ? 16 + (seed % 24) : undefined);
      const parsed = parseMarkdown(doc.markdown);
      for (const channel of CHANNELS) {
        const limit = Math.min(profileOf(channel).text.limit, atPlatform ? Infinity : [300, 700, 1200, 2500][seed % 4]!);
        const reply = renderReply(parsed, profileOf(channel).text, { limit });
        parts[channel]! += reply.parts.length;
        const failure = check(doc, channel, reply, limit);
        if (failure && failures[channel]!.length < 5) failures[channel]!.push(`seed ${seed}, limit ${limit}: ${failure}`);
      }
    }
    expect(failures).toEqual(Object.fromEntries(CHANNELS.map((c) => [c, []])));
    for (const channel of CHANNELS) expect(parts[channel]!).toBeGreaterThan(DOCS * 2);
  }, 120_000);
});

describe("the plain-text fallback of every part", () => {
  test("stays within the limit and keeps the content", () => {
    for (let seed = 1; seed <= 150; seed++) {
      const doc = generate(seed);
      for (const channel of CHANNELS) {
        const reply = renderReply(doc.markdown, profileOf(channel).text, { limit: 900 });
        const texts: string[] = [];
        reply.parts.forEach((part, index) => {
          const plain = reply.fallback(index);
          expect(plain.length).toBeGreaterThan(0);
          expect(plain[0]!.notify).toBe(part.notify);
          for (const p of plain) {
            expect(p.plain).toBe(true);
            if (p.text.length > 900) expect(loneFence(doc, p.text)).toBe(true);
            expect(p.text.length).toBeLessThanOrEqual(profileOf(channel).text.limit);
            texts.push(p.text);
          }
        });
        const atoms = doc.atoms.filter((a) => !doc.fences.some((f) => reply.attachments.some((x) => x.content === f.code) && f.atoms.includes(a)));
        expect(missingAtom(texts.join("\n"), atoms)).toBeUndefined();
      }
    }
  });
});
