/** Sizes as the caps are written (MB) and as people read them. */

export const MB = 1024 * 1024;

/** A size for people: "5 MB", "12.5 MB". */
export function formatMb(bytes: number): string {
  return `${Math.round((bytes / MB) * 10) / 10} MB`;
}

/** Any size for people: "812 bytes", "4.2 KB", "5 MB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < MB) return `${Math.round((bytes / 1024) * 10) / 10} KB`;
  return formatMb(bytes);
}
