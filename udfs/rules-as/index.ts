// rules-as: the broadcast state pattern of udfs/rules, written with the
// AssemblyScript SDK: a rule stream, broadcast to every subtask, sets a
// threshold per rule name (update), and events keyed by user are matched
// against the rules as they are when each event arrives (match). Its output
// is byte for byte the Go module's.

import {
  BroadcastState, Context, JsonPath, JsonReader, JsonWriter, Output, Record, ValueState, bytes, fail, process, processBroadcast,
} from "../../sdk/assemblyscript/assembly/index";

export * from "../../sdk/assemblyscript/assembly/exports";

/** rules maps a rule name to its threshold, in decimal; hits counts a
 * user's matches, in decimal. */
const rules = new BroadcastState("rules");
const hits = new ValueState("hits");

const rulePath = new JsonPath(["rule"]);
const minPath = new JsonPath(["min"]);
const amountPath = new JsonPath(["amount"]);
const itself = new JsonPath([]);
const reader = new JsonReader();
const writer = new JsonWriter();

/** decimal reads a decimal state value, 0 when it is not one. */
function decimal(v: Uint8Array | null): i64 {
  return v != null && reader.getInt(v, itself) ? reader.int : 0;
}

/** update applies rule records in order: {"rule": name, "min": n} sets the
 * rule's threshold, {"rule": name} without min deletes the rule. */
function update(ctx: Context, records: Record[]): void {
  for (let i = 0; i < records.length; i++) {
    const value = records[i].value;
    if (!reader.getString(value, rulePath) || reader.str.length == 0) {
      fail('no string field "rule"');
      return;
    }
    const name = reader.str.slice(0);
    if (reader.getInt(value, minPath)) {
      rules.put(ctx, name, bytes(reader.int.toString()));
    } else {
      rules.remove(ctx, name);
    }
  }
}

/** match emits, for each event of a user and each rule (in name order)
 * whose threshold its amount reaches, {"user", "rule", "amount", "hits"}. */
function match(ctx: Context, user: Uint8Array, records: Record[]): void {
  let n = decimal(hits.get(ctx));
  for (let i = 0; i < records.length; i++) {
    if (!reader.getInt(records[i].value, amountPath)) {
      fail('no integer field "amount"');
      return;
    }
    const amount = reader.int;
    const entries = rules.entries(ctx);
    for (let j = 0; j + 1 < entries.length; j += 2) {
      if (amount < decimal(entries[j + 1])) continue;
      n++;
      writer.reset().beginObject();
      writer.key("user").string(user).key("rule").string(entries[j]).key("amount").int(amount).key("hits").int(n);
      writer.endObject();
      ctx.emit(new Output(writer.bytes()).withKey(user).withTimestamp(records[i].timestamp).withHeaders([]));
    }
  }
  hits.set(ctx, bytes(n.toString()));
}

processBroadcast("update", update);
process("match", match);
