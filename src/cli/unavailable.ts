/** Subcommands that a later release fills in: they say so plainly and exit non-zero. */
import { VERSION } from "../version.ts";
import type { Subcommand } from "./context.ts";

export function unavailable(name: string): Subcommand {
  return {
    async main(_args, ctx) {
      ctx.stderr(`fermix: \`fermix ${name}\` is not available yet in this build (${VERSION}).\n`);
      return 1;
    },
  };
}
