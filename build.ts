/**
 * Build the `fermix` binary with `bun build --compile`: one self-contained,
 * minified executable per target with the version baked in.
 *
 *   bun build.ts                 dist/fermix for this machine
 *   bun build.ts --all           dist/fermix-<os>-<arch> for every release target
 *   bun build.ts --target linux-arm64 [--target darwin-arm64 ...]
 */
import { chmodSync, mkdirSync } from "node:fs";
import { parseArgs } from "node:util";
import pkg from "./package.json" with { type: "json" };

const RELEASE_TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"] as const;
type Target = (typeof RELEASE_TARGETS)[number];

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    all: { type: "boolean", default: false },
    target: { type: "string", multiple: true },
    version: { type: "string" },
  },
});

const version = values.version ?? process.env.FERMIX_VERSION ?? pkg.version;
const native = `${process.platform}-${process.arch}`;
const targets: Target[] = values.all ? [...RELEASE_TARGETS] : ((values.target ?? []) as Target[]);
for (const target of targets) {
  if (!RELEASE_TARGETS.includes(target)) {
    console.error(`build: unknown target "${target}"; known: ${RELEASE_TARGETS.join(", ")}`);
    process.exit(2);
  }
}

mkdirSync("dist", { recursive: true });
const jobs = targets.length === 0 ? [{ target: native, outfile: "dist/fermix" }] : targets.map((t) => ({ target: t, outfile: `dist/fermix-${t}` }));

for (const { target, outfile } of jobs) {
  const started = performance.now();
  const result = await Bun.build({
    entrypoints: ["src/main.ts"],
    minify: true,
    // Bytecode makes start-up ~3x faster; it requires no top-level await anywhere in src/.
    bytecode: true,
    sourcemap: "none",
    define: { FERMIX_VERSION: JSON.stringify(version) },
    compile: {
      target: `bun-${target}` as Bun.Build.CompileTarget,
      outfile,
      // An installed binary must not be reconfigured by a .env or bunfig.toml in the user's cwd.
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
  });
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    process.exit(1);
  }
  chmodSync(outfile, 0o755);
  console.log(`built ${outfile} (fermix ${version}, ${target}) in ${Math.round(performance.now() - started)} ms`);
}
