// windowkinds-as: a window_process, a session_gap and a watermark function
// written with the AssemblyScript SDK, for the SDK tests; the README says
// what each writes, the same in every language.

import {
  Emitter, NO_WATERMARK, Output, Record, Window, bytes, fail, sessionGap, watermark, windowProcess,
} from "../../sdk/assemblyscript/assembly/index";

export * from "../../sdk/assemblyscript/assembly/exports";

/** summary emits "<key>:<start>:<end>:<records>" for the window, then each
 * record's value with the key "v" and the timestamp 7. */
function summary(key: Uint8Array, w: Window, records: Record[], out: Emitter): void {
  const head = String.UTF8.decodeUnsafe(key.dataStart, <usize>key.length) + ":" + w.start.toString() + ":" +
    w.end.toString() + ":" + records.length.toString();
  out.emit(new Output(bytes(head)));
  for (let i = 0; i < records.length; i++) {
    if (records[i].valueString() == "!") {
      fail("bad record");
      return;
    }
    out.emit(new Output(records[i].value).withKey(bytes("v")).withTimestamp(7));
  }
}

/** gap is 1000 ms per byte of the value; "!" fails. */
function gap(r: Record): i64 {
  if (r.valueString() == "!") fail("bad gap");
  return 1000 * <i64>r.valueLength;
}

/** beat emits a watermark at the timestamp of a record "beat"; "!" fails. */
function beat(r: Record): i64 {
  const v = r.valueString();
  if (v == "!") fail("bad beat");
  return v == "beat" ? r.timestamp : NO_WATERMARK;
}

windowProcess("summary", summary);
sessionGap("gap", gap);
watermark("beat", beat);
