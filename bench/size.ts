/**
 * What a user downloads: dist/fermix packed by build.ts's release archive
 * code (.tar.xz, xz -9, one thread — exactly what `bun build.ts --all`
 * ships), beside a bare compiled Bun binary packed the same way — the
 * runtime's own floor. Also the uncompressed binaries, for the record.
 * xz -9 of ~110 MB takes about a minute per binary on this machine; the two
 * run side by side.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BARE_SERVE, compileBare, printFigure } from "./lib.ts";

const BINARY = join(import.meta.dir, "..", "dist", "fermix");
const BUILD = join(import.meta.dir, "..", "build.ts");
const MB = 1e6;

/** Pack `binary` with build.ts's archiveBinary in a child process (so two can run at once); resolves with the archive's size in bytes. */
async function packedSize(binary: string, dir: string, name: string): Promise<number> {
  const archive = join(dir, `${name}.tar.xz`);
  const script = `import { archiveBinary } from ${JSON.stringify(BUILD)}; archiveBinary(${JSON.stringify(binary)}, ${JSON.stringify(archive)});`;
  const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "inherit", stderr: "inherit" });
  if ((await proc.exited) !== 0) throw new Error(`packing ${binary} failed`);
  return statSync(archive).size;
}

export async function benchSize(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "fermix-bench-size-"));
  try {
    const bare = await compileBare("bare-serve", BARE_SERVE);
    const [fermixPacked, barePacked] = await Promise.all([packedSize(BINARY, dir, "fermix"), packedSize(bare, dir, "bare")]);
    printFigure({
      name: "download: dist/fermix as release .tar.xz (xz -9)",
      value: fermixPacked / MB,
      baseline: barePacked / MB,
      baselineName: "bare compiled Bun.serve .tar.xz",
      unit: "MB",
      lowerIsBetter: true,
      target: { bound: 1.1 },
    });
    printFigure({
      name: "binary on disk: dist/fermix",
      value: statSync(BINARY).size / MB,
      baseline: statSync(bare).size / MB,
      baselineName: "bare compiled Bun.serve",
      unit: "MB",
      lowerIsBetter: true,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
