/**
 * Build the `fermix` binary with `bun build --compile`: one self-contained,
 * minified executable per target with its version, commit and target baked
 * in (`fermix --version` shows them).
 *
 *   bun build.ts                 dist/fermix for this machine
 *   bun build.ts --all           every release target, each as dist/fermix-<os>-<arch>.tar.xz
 *                                (one file, `fermix`, compressed with xz -9), and dist/SHA256SUMS
 *   bun build.ts --target linux-arm64 [--target darwin-arm64 ...]   those binaries only
 *
 * A cross target's Bun runtime is downloaded from the npm registry once and
 * cached (~/.bun/install/cache). A target that cannot be built (no network
 * for its runtime) is reported and left out; --all still writes the others
 * and their checksums, and exits 1.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import pkg from "./package.json" with { type: "json" };

export const RELEASE_TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"] as const;
type Target = (typeof RELEASE_TARGETS)[number];

/** The commit this build is made from, `+dirty` when the tree has changes; "unknown" outside git. */
function currentCommit(): string {
  const head = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { stderr: "ignore" });
  if (head.exitCode !== 0) return "unknown";
  const dirty = Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=no"], { stderr: "ignore" }).stdout.toString().trim() !== "";
  return `${head.stdout.toString().trim()}${dirty ? "+dirty" : ""}`;
}

/**
 * Profile-guided bytecode layout: the functions recorded runs used (`bun run bytecode-order`,
 * scripts/bytecode-order.ts) go together at the front of the binary's bytecode, so a start reads
 * fewer pages of it — about 4 MB less resident memory for an idle daemon. A missing or stale
 * recording only lays the bytecode out less well.
 */
const BYTECODE_ORDER = ["run", "cli"].map((name) => join(import.meta.dir, "scripts", "bytecode-order", `${name}.order`)).filter((path) => existsSync(path));

/**
 * The binary starts with JavaScriptCore's tier-up thresholds multiplied by this, so code that runs
 * once at start stays in the interpreter instead of being JIT-compiled: ~10 ms quicker to ready and
 * ~3.5 MB less resident memory (measured 4×, 16×, 64×, 1000×; it levels off past 16×). `fermix run`
 * sets the normal policy back once the daemon is up (cli/run.ts), so hot paths compile as usual.
 */
export const STARTUP_JIT_POLICY = 16;

/**
 * Library code the binary carries but Fermix never runs, left out of it (~0.4 MB of the download;
 * docs/performance.md, "How the binary is built, and why"): plist's index also exports its parsers, which
 * bring @xmldom/xmldom, and Fermix only writes plists, so `plist` is its build module alone; linkedom
 * parses a `<style>` element's CSS only when a script reads `.sheet`, which web_fetch's extraction
 * never does, so its CSS parser is a stub that says so. Tests run the sources, with both whole; the
 * binary's tests (test/e2e) run this.
 */
const leaveOutUnused: Bun.BunPlugin = {
  name: "fermix-leave-out-unused",
  setup(build) {
    build.onResolve({ filter: /^plist$/ }, () => ({ path: join(import.meta.dir, "node_modules", "plist", "dist", "build.js") }));
    build.onResolve({ filter: /^cssomnom\/parse$/ }, () => ({ path: "cssomnom-parse", namespace: "fermix-stub" }));
    build.onLoad({ filter: /.*/, namespace: "fermix-stub" }, () => ({
      contents: 'export function parse() { throw new Error("style sheets are not parsed in fermix (web_fetch reads text, not CSS)"); }',
      loader: "js",
    }));
  },
};

export interface BuildOptions {
  target: string;
  outfile: string;
  version: string;
  commit: string;
}

export async function compile({ target, outfile, version, commit }: BuildOptions): Promise<void> {
  const result = await Bun.build({
    entrypoints: ["src/main.ts"],
    minify: true,
    // ESM with code splitting: each lazily imported module (a subcommand, a channel adapter, the ACP SDK…)
    // is its own chunk, read and evaluated only when imported. One single-file bundle would be loaded whole
    // at start: `--version` took 9 ms instead of 4, and every process carried ~7 MB more RSS.
    format: "esm",
    splitting: true,
    // Bytecode: chunks start without being parsed (a no-bytecode build spends ~50 ms parsing at start).
    bytecode: true,
    sourcemap: "none",
    plugins: [leaveOutUnused],
    define: { FERMIX_VERSION: JSON.stringify(version), FERMIX_COMMIT: JSON.stringify(commit), FERMIX_TARGET: JSON.stringify(target) },
    compile: {
      target: `bun-${target}` as Bun.Build.CompileTarget,
      outfile,
      // An installed binary must not be reconfigured by a .env or bunfig.toml in the user's cwd.
      autoloadDotenv: false,
      autoloadBunfig: false,
      bytecodeOrder: BYTECODE_ORDER.length > 0 ? BYTECODE_ORDER : null,
      jitPolicy: STARTUP_JIT_POLICY,
    },
  });
  if (!result.success) throw new Error(result.logs.map(String).join("\n"));
  chmodSync(outfile, 0o755);
}

/**
 * Pack one binary as `<archive>` (.tar.xz) holding a single file `fermix`, owned by root, mode 0755.
 * `level` is xz's preset: releases use 9 (about 40 MB instead of gzip's 54 MB); tests may use 0.
 * `threads` 1 compresses best; 0 (every core) is faster and a little larger.
 */
export function archiveBinary(binary: string, archive: string, level = 9, threads = 1): void {
  const stage = mkdtempSync(join(tmpdir(), "fermix-archive-"));
  try {
    const staged = join(stage, "fermix");
    Bun.spawnSync(["cp", binary, staged]);
    chmodSync(staged, 0o755);
    const tar = Bun.spawnSync(["tar", "--owner=0", "--group=0", "--numeric-owner", "-C", stage, "-cJf", `${archive}.partial`, "fermix"], {
      env: { ...process.env, XZ_OPT: `-${level} -T${threads}` },
      stderr: "pipe",
    });
    if (tar.exitCode !== 0) throw new Error(`tar failed: ${tar.stderr.toString()}`);
    renameSync(`${archive}.partial`, archive);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** `sha256sum`'s format: `<hex>  <name>` per archive, names relative to the file. */
export async function writeChecksums(archives: string[], out: string): Promise<void> {
  const lines: string[] = [];
  for (const archive of archives) {
    const hasher = new Bun.CryptoHasher("sha256");
    hasher.update(await Bun.file(archive).arrayBuffer());
    lines.push(`${hasher.digest("hex")}  ${basename(archive)}`);
  }
  writeFileSync(out, `${lines.join("\n")}\n`);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      all: { type: "boolean", default: false },
      target: { type: "string", multiple: true },
      version: { type: "string" },
    },
  });
  const version = values.version ?? process.env.FERMIX_VERSION ?? pkg.version;
  const commit = currentCommit();
  const native = `${process.platform}-${process.arch}`;
  const targets: Target[] = values.all ? [...RELEASE_TARGETS] : ((values.target ?? []) as Target[]);
  for (const target of targets) {
    if (!RELEASE_TARGETS.includes(target)) {
      console.error(`build: unknown target "${target}"; known: ${RELEASE_TARGETS.join(", ")}`);
      return 2;
    }
  }
  mkdirSync("dist", { recursive: true });

  if (targets.length === 0) {
    const started = performance.now();
    await compile({ target: native, outfile: "dist/fermix", version, commit });
    console.log(`built dist/fermix (fermix ${version}, ${commit}, ${native}) in ${Math.round(performance.now() - started)} ms`);
    return 0;
  }

  const archives: string[] = [];
  const failed: string[] = [];
  for (const target of targets) {
    const outfile = `dist/fermix-${target}`;
    const started = performance.now();
    try {
      await compile({ target, outfile, version, commit });
    } catch (error) {
      console.error(
        `build: ${target} could not be built (a cross target needs its runtime from the npm registry): ${error instanceof Error ? error.message : String(error)}`,
      );
      failed.push(target);
      continue;
    }
    if (!values.all) {
      console.log(`built ${outfile} (fermix ${version}, ${commit}, ${target}) in ${Math.round(performance.now() - started)} ms`);
      continue;
    }
    const archive = `dist/fermix-${target}.tar.xz`;
    archiveBinary(outfile, archive);
    rmSync(outfile);
    archives.push(archive);
    const mb = (statSync(archive).size / 1e6).toFixed(1);
    console.log(`built ${archive} (fermix ${version}, ${commit}, ${target}; ${mb} MB) in ${Math.round(performance.now() - started)} ms`);
  }
  if (values.all && archives.length > 0) {
    await writeChecksums(archives, "dist/SHA256SUMS");
    console.log(`wrote dist/SHA256SUMS (${archives.length} archive${archives.length === 1 ? "" : "s"})`);
  }
  if (failed.length > 0) console.error(`build: not built: ${failed.join(", ")}`);
  return failed.length > 0 ? 1 : 0;
}

if (import.meta.main) process.exit(await main());
