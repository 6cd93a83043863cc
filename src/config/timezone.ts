/**
 * Time zones as config names them: `[fermix_core] timezone` is an IANA name
 * (Europe/Paris, America/New_York, UTC); unset, the system's zone is used.
 */

/** Whether `name` is a time zone this runtime knows. */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

let system: { tz: string | undefined; zone: string } | undefined;

/** The system's time zone: the default for `[fermix_core] timezone`. Asked of ICU once (each turn needs it), again only if TZ changes. */
export function systemTimeZone(): string {
  const tz = process.env.TZ;
  if (!system || system.tz !== tz) system = { tz, zone: Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC" };
  return system.zone;
}

/** The owner's time zone: the configured one, else the system's. */
export function ownerTimeZone(config: { fermix_core: { timezone?: string } }): string {
  return config.fermix_core.timezone ?? systemTimeZone();
}
