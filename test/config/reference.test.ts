/**
 * The configuration reference is generated from the schema: the committed
 * docs/configuration.md must be exactly what `bun run docs` writes now, and
 * every key must be documented with a meaning.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { referenceKeys, renderReference, undocumented } from "../../src/config/reference.ts";
import { ConfigSchema } from "../../src/config/schema.ts";

const committed = readFileSync(join(import.meta.dir, "../../docs/configuration.md"), "utf8");

test("docs/configuration.md is current: regenerate with `bun run docs` after changing the schema", () => {
  expect(committed).toBe(renderReference());
});

test("every key of the schema is in the reference, each with a meaning", () => {
  expect(undocumented(committed)).toEqual([]);
  expect(
    referenceKeys()
      .filter((k) => k.description.trim() === "")
      .map((k) => `${k.table}.${k.key}`),
  ).toEqual([]);
  // The channel variables are named beside their keys.
  expect(committed).toContain("| `signing_secret` | a non-empty string | — | `SLACK_SIGNING_SECRET` |");
});

test("a key the schema gains but the reference lacks is named", () => {
  const grown = Type.Object({
    ...ConfigSchema.properties,
    fermix_core: Type.Object({ ...ConfigSchema.properties.fermix_core.properties, brand_new_key: Type.Boolean({ default: false, description: "new" }) }),
  });
  expect(undocumented(committed, referenceKeys(grown))).toEqual(["fermix_core.brand_new_key"]);
});
