import pkg from "../package.json" with { type: "json" };

declare const FERMIX_VERSION: string | undefined;

/** The release version: baked in by build.ts, else package.json when run from source. */
export const VERSION: string =
  typeof FERMIX_VERSION === "string" ? FERMIX_VERSION : `${pkg.version}-dev`;
