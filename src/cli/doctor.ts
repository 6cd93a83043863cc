/** `fermix doctor`: print the checks (offline, or with --check one authenticated call per provider); exit 1 when any fails. */
import pc from "picocolors";
import { type DoctorRow, runDoctor } from "../daemon/doctor.ts";
import { type CliContext, UsageError } from "./context.ts";

export async function main(args: string[], ctx: CliContext): Promise<number> {
  const unknown = args.find((a) => a !== "--json" && a !== "--check");
  if (unknown) throw new UsageError(`unknown option "${unknown}"`);
  const rows = await runDoctor({ env: ctx.env, check: args.includes("--check") });
  const failed = rows.some((r) => r.status === "fail");
  if (args.includes("--json")) ctx.stdout(`${JSON.stringify({ ok: !failed, rows }, null, 2)}\n`);
  else ctx.stdout(renderRows(rows, ctx.isTTY && !ctx.env.NO_COLOR));
  return failed ? 1 : 0;
}

/** One line per row: a status mark, the concern, the detail. Coloured only on a terminal. */
export function renderRows(rows: DoctorRow[], colour: boolean): string {
  const width = Math.max(...rows.map((r) => r.check.length));
  const paint = pc.createColors(colour);
  const mark = { ok: paint.green("ok  "), warn: paint.yellow("warn"), fail: paint.red("FAIL") } as const;
  const lines = rows.map((r) => `${mark[r.status]}  ${r.check.padEnd(width)}  ${r.detail}`);
  const failures = rows.filter((r) => r.status === "fail").length;
  const warnings = rows.filter((r) => r.status === "warn").length;
  const summary =
    failures > 0
      ? paint.red(`${failures} check${failures === 1 ? "" : "s"} failed`)
      : paint.green(`all checks passed${warnings ? ` (${warnings} warning${warnings === 1 ? "" : "s"})` : ""}`);
  return `${lines.join("\n")}\n\n${summary}\n`;
}
