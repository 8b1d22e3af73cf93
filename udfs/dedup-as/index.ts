// dedup-as: the keyed process function dedup of udfs/dedup, written with the
// AssemblyScript SDK: it emits a record only the first time its key is seen
// within an hour, keeping one value state with a TTL per key.

import { Context, Record, ValueState, process } from "../../sdk/assemblyscript/assembly/index";

export * from "../../sdk/assemblyscript/assembly/exports";

/** seen marks a key as seen; the platform forgets the mark an hour after it
 * was written (or as the job's state_ttl says). */
const seen = new ValueState("seen", "1h");

const mark = new Uint8Array(1);
mark[0] = 1;

/** dedup passes on the first record of a key not seen within the TTL and
 * drops the others. */
function dedup(ctx: Context, key: Uint8Array, records: Record[]): void {
  if (seen.get(ctx) != null) return;
  seen.set(ctx, mark);
  ctx.emitRecord(records[0]);
}

process("dedup", dedup);
