/** The cookies the web face sets (the setup session, the dashboard token): read one back, and whether to mark it Secure. */

/** The value of cookie `name` in a Cookie header, if sent. */
export function cookieValue(header: string | null, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return rest.join("=");
  }
  return undefined;
}

/** Whether the browser reached us over HTTPS (directly, or through a proxy that says so): its cookies are then Secure. */
export function overHttps(request: Request): boolean {
  const forwarded = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  return forwarded === "https" || new URL(request.url).protocol === "https:";
}
