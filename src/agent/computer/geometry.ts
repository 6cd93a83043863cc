/**
 * The size of the screenshots the model sees, and the way back from their
 * coordinates to the display's. Screenshots are scaled down (never up) to
 * what every provider Fermix speaks to takes without shrinking them on its
 * side: a long edge of at most 1568 pixels and about 1.15 megapixels (the
 * tightest of the providers' documented limits; OpenAI's computer tool takes
 * more). A display within that — the default 1280×800 — is shown as it is,
 * pixel for pixel. Pure.
 */

/** What the model's screenshots may be at most. */
export interface ShotLimit {
  maxEdge: number;
  maxPixels: number;
}

export const SHOT_LIMIT: ShotLimit = { maxEdge: 1568, maxPixels: 1_150_000 };

export interface Geometry {
  /** The display's size. */
  display: { width: number; height: number };
  /** The screenshots' size, as the model sees and points in them. */
  shot: { width: number; height: number };
  /** A point of a screenshot as a point of the display. */
  toDisplay(x: number, y: number): [number, number];
}

/** The geometry of a display of `width` × `height` under `limit`. */
export function geometryFor(width: number, height: number, limit: ShotLimit = SHOT_LIMIT): Geometry {
  const scale = Math.min(1, limit.maxEdge / Math.max(width, height), Math.sqrt(limit.maxPixels / (width * height)));
  const shot = { width: Math.max(1, Math.floor(width * scale)), height: Math.max(1, Math.floor(height * scale)) };
  const fx = width / shot.width;
  const fy = height / shot.height;
  return {
    display: { width, height },
    shot,
    toDisplay: (x, y) => [Math.min(width - 1, Math.max(0, Math.round(x * fx))), Math.min(height - 1, Math.max(0, Math.round(y * fy)))],
  };
}

/** The width and height a PNG's header declares, or null when the bytes are not a PNG. */
export function pngSize(bytes: Uint8Array): { width: number; height: number } | null {
  const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (bytes.length < 24 || SIGNATURE.some((b, i) => bytes[i] !== b)) return null;
  // The first chunk is IHDR: length (4), type (4), then width and height, big-endian.
  if (String.fromCharCode(...bytes.subarray(12, 16)) !== "IHDR") return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}
