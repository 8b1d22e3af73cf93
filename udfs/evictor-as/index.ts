// evictor-as: the custom window evictors of udfs/evictor written with the
// AssemblyScript SDK: near_newest keeps the records whose integer field n
// is within 10 of the newest record's, top2 the two records of greatest n.
// A record whose value is "crash" traps the call.

import { Eviction, JsonPath, JsonReader, evictor, fail } from "../../sdk/assemblyscript/assembly/index";

export * from "../../sdk/assemblyscript/assembly/exports";

/** How far from the newest record's n a record's may be. */
const NEAR: u64 = 10;

const N = new JsonPath(["n"]);
const json = new JsonReader();

/** The records' n, filled by numbers. */
let ns: i64[] = [];

/** numbers reads every record's integer field n into ns; a record without
 * one fails the window. */
function numbers(e: Eviction): bool {
  ns.length = 0;
  for (let i = 0; i < e.records.length; i++) {
    const r = e.records[i];
    if (r.valueString() == "crash") unreachable();
    if (!json.getInt(r.value, N)) {
      fail("record " + i.toString() + ": no integer n");
      return false;
    }
    ns.push(json.int);
  }
  return true;
}

/** near_newest evicts the records whose n is more than NEAR from the newest
 * record's (the one of the greatest timestamp, the last of equal ones). */
function nearNewest(e: Eviction): void {
  if (!numbers(e) || ns.length == 0) return;
  let newest = 0;
  for (let i = 0; i < e.records.length; i++) {
    if (e.records[i].timestamp >= e.records[newest].timestamp) newest = i;
  }
  const top = ns[newest];
  for (let i = 0; i < ns.length; i++) {
    // The distance in u64 is exact for any two i64.
    const n = ns[i];
    if ((n > top && <u64>n - <u64>top > NEAR) || (n < top && <u64>top - <u64>n > NEAR)) e.evict(i);
  }
}

/** top2 keeps the two records of greatest n, the earlier of equal ones. */
function top2(e: Eviction): void {
  if (!numbers(e)) return;
  let first = -1;
  let second = -1;
  for (let i = 0; i < ns.length; i++) {
    if (first < 0 || ns[i] > ns[first]) {
      second = first;
      first = i;
    } else if (second < 0 || ns[i] > ns[second]) {
      second = i;
    }
  }
  for (let i = 0; i < ns.length; i++) {
    if (i != first && i != second) e.evict(i);
  }
}

evictor("near_newest", nearNewest);
evictor("top2", top2);
