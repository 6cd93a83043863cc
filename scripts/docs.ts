/** `bun run docs`: write docs/configuration.md from the configuration schema. */
import { join } from "node:path";
import { renderReference } from "../src/config/reference.ts";

const target = join(import.meta.dir, "..", "docs", "configuration.md");
await Bun.write(target, renderReference());
console.log(`wrote ${target}`);
