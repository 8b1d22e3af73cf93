// Runs a harness script (the README's Testing your function) against a
// compiled module with the harness of harness.mjs, and writes its
// transcript to standard output:
//
//     node harness-script.mjs module.wasm < script
//
// The script and transcript formats are the C SDK's
// (sdk/c/platform_harness_script.c), so that the SDKs' harnesses can be
// checked against one transcript.

import { readFileSync } from "node:fs";
import { EVENT_TIME, Harness } from "./harness.mjs";

/** show is b as it is when it is a word of printable ASCII, else 0x and
 * its hex digits. */
function show(b) {
  if (b.length > 0 && b.every((c) => c > 0x20 && c < 0x7f)) return String.fromCharCode(...b);
  return "0x" + [...b].map((c) => c.toString(16).padStart(2, "0")).join("");
}

function records(words) {
  return words.map((w) => {
    const at = w.lastIndexOf("@");
    if (at < 0 || !/^-?[0-9]+$/.test(w.slice(at + 1))) throw new SyntaxError(`malformed record ${w}`);
    return { value: w.slice(0, at), timestamp: BigInt(w.slice(at + 1)) };
  });
}

function print(lines, outs) {
  for (const o of outs) {
    if (o.error !== undefined) lines.push(`error ${o.index} ${o.error}`);
    else lines.push(`${o.side !== null ? `side ${o.side} ` : "out "}${o.index} ${show(o.key)} ${o.timestamp} ${show(o.value)}`);
  }
}

/** step runs one line's words, appending its transcript to lines. */
function step(h, w, lines) {
  const int = (s) => {
    if (!/^-?[0-9]+$/.test(s)) throw new SyntaxError(`malformed time ${s}`);
    return BigInt(s);
  };
  try {
    switch (w.length > 0 && w[0]) {
      case "on_timer":
        if (w.length !== 2) break;
        h.onTimer = w[1];
        return;
      case "process":
        if (w.length < 3) break;
        print(lines, h.process(w[1], w[2], records(w.slice(3))));
        return;
      case "broadcast":
        if (w.length < 2) break;
        print(lines, h.processBroadcast(w[1], records(w.slice(2))));
        return;
      case "watermark":
        if (w.length !== 2) break;
        print(lines, h.advanceWatermark(int(w[1])));
        return;
      case "now":
        if (w.length !== 2) break;
        print(lines, h.setProcessingTime(int(w[1])));
        return;
      case "value": {
        if (w.length !== 3) break;
        const v = h.value(w[1], w[2]);
        lines.push(v ? `= ${show(v)}` : "= none");
        return;
      }
      case "list":
        if (w.length !== 3) break;
        lines.push(["=", ...h.list(w[1], w[2]).map(show)].join(" "));
        return;
      case "timers":
        if (w.length !== 1) break;
        for (const t of h.timers()) lines.push(`timer ${t.domain === EVENT_TIME ? "event" : "processing"} ${t.timestamp} ${show(t.key)}`);
        return;
    }
  } catch (e) {
    if (e instanceof SyntaxError) throw e;
    lines.push(`fail ${e.message}`);
    return;
  }
  throw new SyntaxError("malformed step");
}

const [wasmPath] = process.argv.slice(2);
if (!wasmPath) {
  process.stderr.write("usage: node harness-script.mjs module.wasm < script\n");
  process.exit(2);
}
const h = new Harness(readFileSync(wasmPath));
const lines = [];
const script = readFileSync(0, "utf8").split("\n");
for (let i = 0; i < script.length; i++) {
  const line = script[i].replace(/\r$/, "");
  if (line === "" || line.startsWith("#")) continue;
  lines.push(`> ${line}`);
  try {
    step(h, line.split(/[ \t]+/).filter((w) => w !== ""), lines);
  } catch (e) {
    process.stdout.write(lines.join("\n") + "\n");
    process.stderr.write(`line ${i + 1}: ${e.message}\n`);
    process.exit(2);
  }
}
process.stdout.write(lines.length ? lines.join("\n") + "\n" : "");
