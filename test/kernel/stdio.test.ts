/**
 * kernel/stdio.ts writes straight to the descriptor: a large output piped to
 * a slow reader arrives whole and in order even when the process exits right
 * after writing, and also when the Node stream was built first (which leaves
 * a pipe non-blocking, so the write runs into EAGAIN and waits for the
 * reader, as a blocking write would).
 */
import { expect, test } from "bun:test";
import { join } from "node:path";

const STDIO = join(import.meta.dir, "../../src/kernel/stdio.ts");
/**
 * A slow reader: it starts reading only after this long. The child fills the
 * 64 KB pipe within milliseconds of starting, so its writes meet a full pipe
 * (the case under test) for most of its 2 MB; a faster machine only makes that surer.
 */
const SLOW_READER_MS = 200;

async function childOutput(buildStreamFirst: boolean): Promise<string> {
  const script = `
    import { writeFd } from ${JSON.stringify(STDIO)};
    ${buildStreamFirst ? "void process.stdout.isTTY;" : ""}
    for (let i = 0; i < 20000; i++) writeFd(1, String(i).padStart(99, ".") + "\\n");
    writeFd(1, "END\\n");
    process.exit(0);
  `;
  const child = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "inherit" });
  await Bun.sleep(SLOW_READER_MS);
  const [out, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
  expect(code).toBe(0);
  return out;
}

const expected = `${Array.from({ length: 20000 }, (_, i) => `${String(i).padStart(99, ".")}\n`).join("")}END\n`;

test("2 MB written to a full pipe just before exit arrives whole and in order", async () => {
  expect(await childOutput(false)).toBe(expected);
});

test("with the Node stream built first (a non-blocking pipe), the write waits for the reader: nothing is lost or reordered", async () => {
  expect(await childOutput(true)).toBe(expected);
});
