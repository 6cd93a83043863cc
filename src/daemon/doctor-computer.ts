/** `fermix doctor`'s computer-use row: off, or whether the desktop's tools and display are there. */
import { desktopNeeds, INSTALL_DESKTOP } from "../agent/computer/requirements.ts";
import type { Env } from "../config/load.ts";
import type { Config } from "../config/schema.ts";

/** One doctor row (the shape of doctor.ts's rows). */
export interface ComputerDoctorRow {
  check: string;
  status: "ok" | "warn" | "fail";
  detail: string;
}

export function computerDoctorRows(config: Config, env: Env, platform: NodeJS.Platform = process.platform): ComputerDoctorRow[] {
  const settings = config.fermix_core.computer;
  if (!settings.enabled) return [{ check: "computer use", status: "ok", detail: "disabled" }];
  const needs = desktopNeeds(settings, (command) => Bun.which(command, { PATH: env.PATH ?? "" }), { platform, env });
  const rows: ComputerDoctorRow[] = [];
  if (needs.hostProblem) rows.push({ check: "computer use", status: "fail", detail: `display = "host": ${needs.hostProblem}` });
  else if (needs.missing.length > 0) rows.push({ check: "computer use", status: "fail", detail: `missing ${needs.missing.join(", ")} (${INSTALL_DESKTOP})` });
  else
    rows.push({
      check: "computer use",
      status: "ok",
      detail: `${settings.display} display${settings.display === "virtual" ? ` ${settings.width}×${settings.height}` : ` ${env.DISPLAY}`}; found ${needs.found.join(", ")}`,
    });
  if (needs.noWindowManager)
    rows.push({
      check: "computer use",
      status: "warn",
      detail: "no window manager installed (openbox, matchbox-window-manager, icewm or fluxbox): windows will not take focus on a click",
    });
  if (needs.skipped.length > 0)
    rows.push({ check: "computer use", status: "warn", detail: `start programs not installed, skipped: ${needs.skipped.join(", ")}` });
  return rows;
}
