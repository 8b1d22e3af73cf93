// jsonmap-as: udfs/jsonmap's bid_eur written with the AssemblyScript SDK's
// JSON reader and writer: the map of Nexmark's query 1 over bids in JSON.
// The README of udfs/jsonmap says exactly what it writes.

import { JsonFields, JsonReader, JsonWriter, Output, Record, fail, map } from "../../sdk/assemblyscript/assembly/index";

export * from "../../sdk/assemblyscript/assembly/exports";

// The members bid_eur reads, found in one pass (JsonReader.lookup).
const FIELDS = new JsonFields(["auction", "bidder", "price", "channel", "dateTime"]);
const AUCTION = 0;
const BIDDER = 1;
const PRICE = 2;
const CHANNEL = 3;
const DATE_TIME = 4;

// The reader and the writer, reused for every record: the SDK copies the
// output when bidEur returns.
const json = new JsonReader();
const out = new JsonWriter();

function bidEur(r: Record): Output {
  const v = r.value;
  json.lookup(v, FIELDS);
  if (!json.intOf(v, FIELDS, AUCTION)) {
    fail('no integer "auction"');
    return new Output(v);
  }
  const auction = json.int;
  if (!json.intOf(v, FIELDS, BIDDER)) {
    fail('no integer "bidder"');
    return new Output(v);
  }
  const bidder = json.int;
  if (!json.intOf(v, FIELDS, PRICE)) {
    fail('no integer "price"');
    return new Output(v);
  }
  const price = json.int;
  if (!json.stringOf(v, FIELDS, CHANNEL)) {
    fail('no string "channel"');
    return new Output(v);
  }
  const channel = json.str;
  if (!json.intOf(v, FIELDS, DATE_TIME)) {
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
