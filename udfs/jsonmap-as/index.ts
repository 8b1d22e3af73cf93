// jsonmap-as: udfs/jsonmap's bid_eur written with the AssemblyScript SDK's
// JSON reader and writer: the map of Nexmark's query 1 over bids in JSON.
// The README of udfs/jsonmap says exactly what it writes.

import { JsonPath, JsonReader, JsonWriter, Output, Record, fail, map } from "../../sdk/assemblyscript/assembly/index";

export * from "../../sdk/assemblyscript/assembly/exports";

const AUCTION = new JsonPath(["auction"]);
const BIDDER = new JsonPath(["bidder"]);
const PRICE = new JsonPath(["price"]);
const CHANNEL = new JsonPath(["channel"]);
const DATE_TIME = new JsonPath(["dateTime"]);

// The reader and the writer, reused for every record: the SDK copies the
// output when bidEur returns.
const json = new JsonReader();
const out = new JsonWriter();

function bidEur(r: Record): Output {
  const v = r.value;
  if (!json.getInt(v, AUCTION)) {
    fail('no integer "auction"');
    return new Output(v);
  }
  const auction = json.int;
  if (!json.getInt(v, BIDDER)) {
    fail('no integer "bidder"');
    return new Output(v);
  }
  const bidder = json.int;
  if (!json.getInt(v, PRICE)) {
    fail('no integer "price"');
    return new Output(v);
  }
  const price = json.int;
  if (!json.getString(v, CHANNEL)) {
    fail('no string "channel"');
    return new Output(v);
  }
  const channel = json.str;
  if (!json.getInt(v, DATE_TIME)) {
    fail('no integer "dateTime"');
    return new Output(v);
  }
  out.reset()
    .beginObject()
    .key("auction").int(auction)
    .key("bidder").int(bidder)
    .key("price_eur").float(<f64>price * 0.908)
    .key("channel").string(channel)
    .key("dateTime").int(json.int)
    .endObject();
  return new Output(out.bytes());
}

map("bid_eur", bidEur);
