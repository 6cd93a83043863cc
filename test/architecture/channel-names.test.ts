/**
 * The channel-name rule (docs/architecture.md): no channel name in a string
 * literal outside the channel's own folder and the config schema. A failure
 * names the file, the line and the name; the rule is checked on planted
 * samples too, so a checker that finds nothing cannot pass unnoticed.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { GATEWAY_CHANNELS } from "../../src/config/schema.ts";
import { channelNameViolations, nameViolations, stringLiterals } from "./channel-names.ts";

const SRC = join(import.meta.dir, "../../src");
const NAMES = GATEWAY_CHANNELS;

test("src/ names a channel in a string literal only in that channel's folder and in the config schema", () => {
  expect(channelNameViolations(SRC, NAMES).map((v) => `${v.file}:${v.line} names "${v.name}"`)).toEqual([]);
});

describe("the checker itself", () => {
  test("a planted channel name outside its folder is found, with its file and line", () => {
    const source = [
      'import { x } from "./x.ts";',
      "",
      'if (message.channel === "slack") return;',
      "const local = channel === 'cli' || channel === `acp`;",
    ].join("\n");
    expect(nameViolations("gateway/dispatch.ts", source, NAMES)).toEqual([
      { file: "gateway/dispatch.ts", line: 3, name: "slack" },
      { file: "gateway/dispatch.ts", line: 4, name: "cli" },
      { file: "gateway/dispatch.ts", line: 4, name: "acp" },
    ]);
  });

  test("a channel's folder may name itself, not another channel; the schema may name them all", () => {
    const source = 'const a = "telegram"; const b = "discord";';
    expect(nameViolations("channels/telegram/profile.ts", source, NAMES).map((v) => v.name)).toEqual(["discord"]);
    expect(nameViolations("channels/registry.ts", source, NAMES).map((v) => v.name)).toEqual(["telegram", "discord"]);
    expect(nameViolations("config/schema.ts", source, NAMES)).toEqual([]);
  });

  test('AbortSignal\'s property names no channel: Omit<…, "signal">, Pick<…>, X["signal"], { signal }, .signal', () => {
    const source = [
      'type A = Omit<TurnInput, "signal" | "text">;',
      'type B = Pick<Request, "text" | "signal">;',
      'type C = ToolContext["signal"];',
      "const { signal } = options; run(options.signal);",
    ].join("\n");
    expect(nameViolations("gateway/turn.ts", source, NAMES)).toEqual([]);
    // The same word compared as a value is a channel.
    expect(nameViolations("gateway/turn.ts", 'if (channel === "signal") {}', NAMES).map((v) => v.name)).toEqual(["signal"]);
  });

  test("names in comments, inside longer strings, in template substitutions or regular expressions are not literals", () => {
    const source = [
      '// if (channel === "slack") — a comment',
      '/* "telegram" */',
      'const path = "fermix_channels.telegram.bot_token";',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: source text for the tokenizer under test; its ${ is what it must read, not a placeholder
      "const line = `channel ${name}: the telegram token`;",
      'const re = /"discord"/g;',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: source text for the tokenizer under test; its ${ is what it must read, not a placeholder
      "const nested = `a ${cond ? `b` : `c`} d`;",
    ].join("\n");
    expect(nameViolations("http/dashboard/remedies.ts", source, NAMES)).toEqual([]);
  });

  test("the tokenizer reads strings, escapes, nested templates and division apart from regular expressions", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: source text for the tokenizer under test; its ${ is what it must read, not a placeholder
    const source = 'const a = x / 2; const b = "q\\"uote"; const c = `${`inner`}`; const d = /a\\/b/.test("slack"); const e = \'one\';';
    expect(stringLiterals(source).map((s) => s.value)).toEqual(['q\\"uote', "inner", "slack", "one"]);
  });
});
