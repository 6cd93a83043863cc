/** TEMPORARY stand-in until src/present lands: one part, no splitting. Not to be committed. */
import type { Presenter } from "./delivery.ts";

export const presenter: Presenter = {
  render: (markdown) => ({ parts: [{ text: markdown, notify: true, linkPreview: false, plain: false }], attachments: [] }),
  toPlain: (text) => text,
};
