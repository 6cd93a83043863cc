/**
 * Desktop actions as the display gets them: each kind's xdotool command
 * lines, in the display's coordinates when screenshots are scaled; a
 * missing or out-of-screen field refused in words the model can act on;
 * key names as people write them; and the screenshots' size under the
 * providers' limit, with the way back to the display.
 */
import { describe, expect, test } from "bun:test";
import { actionProblem, keyCombos, xdotoolSteps } from "../../../src/agent/computer/actions.ts";
import { geometryFor, pngSize, SHOT_LIMIT } from "../../../src/agent/computer/geometry.ts";

const SMALL = geometryFor(640, 400);

describe("what each action does to the display", () => {
  test("pointer actions move first, then press; a right click is button 3, a double click two presses", () => {
    expect(xdotoolSteps({ action: "click", x: 10, y: 20 }, SMALL)).toEqual([["mousemove", "--sync", "10", "20", "click", "1"]]);
    expect(xdotoolSteps({ action: "right_click", x: 10, y: 20 }, SMALL)).toEqual([["mousemove", "--sync", "10", "20", "click", "3"]]);
    expect(xdotoolSteps({ action: "double_click", x: 1, y: 2 }, SMALL)[0]).toEqual([
      "mousemove",
      "--sync",
      "1",
      "2",
      "click",
      "--repeat",
      "2",
      "--delay",
      "80",
      "1",
    ]);
    expect(xdotoolSteps({ action: "move", x: 5, y: 6 }, SMALL)).toEqual([["mousemove", "--sync", "5", "6"]]);
    expect(xdotoolSteps({ action: "drag", x: 1, y: 2, to_x: 30, to_y: 40 }, SMALL)[0]).toEqual([
      "mousemove",
      "--sync",
      "1",
      "2",
      "mousedown",
      "1",
      "sleep",
      "0.1",
      "mousemove",
      "--sync",
      "30",
      "40",
      "sleep",
      "0.1",
      "mouseup",
      "1",
    ]);
  });

  test("scrolling is wheel notches of 100 pixels, down and right positive, at least one", () => {
    expect(xdotoolSteps({ action: "scroll", x: 5, y: 5, scroll_y: 250 }, SMALL)).toEqual([
      ["mousemove", "--sync", "5", "5"],
      ["click", "--repeat", "3", "--delay", "20", "5"],
    ]);
    expect(xdotoolSteps({ action: "scroll", x: 5, y: 5, scroll_y: -10, scroll_x: 100 }, SMALL).slice(1)).toEqual([
      ["click", "--repeat", "1", "--delay", "20", "4"],
      ["click", "--repeat", "1", "--delay", "20", "7"],
    ]);
  });

  test("typing and keys go as written, after --, so text that looks like an option is typed", () => {
    expect(xdotoolSteps({ action: "type", text: "--help me" }, SMALL)).toEqual([["type", "--delay", "12", "--", "--help me"]]);
    expect(xdotoolSteps({ action: "key", keys: "ctrl+l Return" }, SMALL)).toEqual([["key", "--delay", "30", "--", "ctrl+l", "Return"]]);
    expect(xdotoolSteps({ action: "screenshot" }, SMALL)).toEqual([]);
    expect(xdotoolSteps({ action: "wait", ms: 5 }, SMALL)).toEqual([]);
  });

  test("on a display larger than the screenshots, the model's points are mapped back to the display's", () => {
    const big = geometryFor(3000, 2000);
    expect(big.shot.width).toBeLessThan(3000);
    const [x, y] = [big.shot.width - 1, Math.floor(big.shot.height / 2)];
    const [step] = xdotoolSteps({ action: "click", x, y }, big);
    expect(Number(step![2])).toBeGreaterThan(2990);
    expect(Math.abs(Number(step![3]) - 1000)).toBeLessThanOrEqual(2);
  });
});

describe("what is refused before anything runs", () => {
  const shot = { width: 640, height: 400 };
  test("the fields each action needs", () => {
    expect(actionProblem({ action: "click", x: 1 }, shot)).toBe("click needs x and y");
    expect(actionProblem({ action: "drag", x: 1, y: 1 }, shot)).toBe("drag needs to_x and to_y");
    expect(actionProblem({ action: "type" }, shot)).toBe("type needs text");
    expect(actionProblem({ action: "key", keys: " " }, shot)).toContain("key needs keys");
    expect(actionProblem({ action: "scroll", x: 1, y: 1 }, shot)).toContain("scroll needs scroll_x or scroll_y");
    expect(actionProblem({ action: "wait", ms: 60_000 }, shot)).toContain("wait takes ms from 0 to 10000");
    expect(actionProblem({ action: "screenshot" }, shot)).toBeNull();
    expect(actionProblem({ action: "click", x: 0, y: 399 }, shot)).toBeNull();
  });

  test("a point outside the screenshot, with the range that is inside", () => {
    expect(actionProblem({ action: "click", x: 640, y: 10 }, shot)).toBe("(640, 10) is outside the screen: x must be 0 to 639, y 0 to 399");
    expect(actionProblem({ action: "drag", x: 1, y: 1, to_x: 1, to_y: -1 }, shot)).toContain("outside the screen");
  });

  test("a key name xdotool would not know", () => {
    expect(actionProblem({ action: "key", keys: "ctrl+☃" }, shot)).toContain('"☃" is not a key name');
  });
});

describe("key names", () => {
  test("as people and models write them, to X keysyms", () => {
    expect(keyCombos("ENTER")).toEqual(["Return"]);
    expect(keyCombos("CTRL+L")).toEqual(["ctrl+l"]);
    expect(keyCombos("cmd+shift+t esc")).toEqual(["super+shift+t", "Escape"]);
    expect(keyCombos("PageDown arrowup f5 /")).toEqual(["Next", "Up", "F5", "slash"]);
    expect(keyCombos("alt+F4")).toEqual(["alt+F4"]);
  });
});

describe("the screenshots' size", () => {
  test("a display within the providers' limit is shown pixel for pixel", () => {
    expect(geometryFor(1280, 800).shot).toEqual({ width: 1280, height: 800 });
    expect(geometryFor(1280, 800).toDisplay(1279, 799)).toEqual([1279, 799]);
  });

  test("a larger one is scaled down to the long edge and the pixel count, keeping its shape", () => {
    for (const [w, h] of [
      [1920, 1080],
      [3840, 2160],
      [1000, 4000],
    ] as const) {
      const { shot } = geometryFor(w, h);
      expect(Math.max(shot.width, shot.height)).toBeLessThanOrEqual(SHOT_LIMIT.maxEdge);
      expect(shot.width * shot.height).toBeLessThanOrEqual(SHOT_LIMIT.maxPixels);
      expect(Math.abs(shot.width / shot.height - w / h)).toBeLessThan(0.01);
    }
  });

  test("a PNG's header gives its size; other bytes are not a PNG", () => {
    const pixel = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");
    expect(pngSize(new Uint8Array(pixel))).toEqual({ width: 1, height: 1 });
    expect(pngSize(new TextEncoder().encode("GIF89a…not a png at all"))).toBeNull();
  });
});
