import pkg from "../package.json" with { type: "json" };

declare const FERMIX_VERSION: string | undefined;
declare const FERMIX_COMMIT: string | undefined;
declare const FERMIX_TARGET: string | undefined;

/** The release version: baked in by build.ts, else package.json when run from source. */
export const VERSION: string = typeof FERMIX_VERSION === "string" ? FERMIX_VERSION : `${pkg.version}-dev`;

/** The commit the binary was built from (`+dirty` with uncommitted changes); "source" when run from source. */
export const COMMIT: string = typeof FERMIX_COMMIT === "string" ? FERMIX_COMMIT : "source";

/** The platform the binary was built for, e.g. linux-x64. */
export const TARGET: string = typeof FERMIX_TARGET === "string" ? FERMIX_TARGET : `${process.platform}-${process.arch}`;

/**
 * Where the project lives: the service unit's Documentation=, the User-Agent
 * Discord asks bots to send. install.sh keeps its own copy for its release
 * URL (test/version.test.ts holds them equal).
 */
export const PROJECT_URL = "https://github.com/fermix-ai/fermix";

/** What `fermix --version` prints: `fermix 0.1.0 (1a2b3c4d5e6f, linux-x64)`. */
export const VERSION_LINE = `fermix ${VERSION} (${COMMIT}, ${TARGET})`;
