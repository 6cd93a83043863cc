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

/** The system's time zone: the default for `[fermix_core] timezone`. */
export function systemTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/** The owner's time zone: the configured one, else the system's. */
export function ownerTimeZone(config: { fermix_core: { timezone?: string } }): string {
  return config.fermix_core.timezone ?? systemTimeZone();
}
