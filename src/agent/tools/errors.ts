/** The one error a tool throws on purpose: its message goes back to the model as `error: …`, and the model can correct itself. */

/** A tool refused its arguments or failed: the message goes back to the model, which can correct itself. */
export class ToolError extends Error {
  override name = "ToolError";
}
