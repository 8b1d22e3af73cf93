/*
 * jsonmap-c: udfs/jsonmap's bid_eur written with the C SDK's JSON helpers
 * (platform_json.h): the map of Nexmark's query 1 over bids in JSON. The
 * README of udfs/jsonmap says exactly what it writes.
 */
#include <stdlib.h>

#include "platform_json.h"
#include "platform_udf.h"

/* The channel, unescaped, and the output, reused for every record: the
 * SDK copies the output when bid_eur returns. */
static uint8_t *channel;
static size_t channel_cap;
static udf_json_writer out;

/* The members bid_eur reads, found in one pass (udf_json_lookup). */
static const char *const keys[] = {"auction", "bidder", "price", "channel", "dateTime"};
enum { AUCTION, BIDDER, PRICE, CHANNEL, DATE_TIME, KEYS };

/* integer reads member k of the lookup as an int64_t. */
static bool integer(const udf_bytes *v, const udf_json_kind *kinds, int k, int64_t *out) {
	return kinds[k] == UDF_JSON_NUMBER && udf_json_parse_int(v[k], out);
}

static int bid_eur(const udf_record *in, udf_output *o) {
	int64_t auction, bidder, price, date_time;
	size_t channel_len;
	udf_bytes v[KEYS];
	udf_json_kind kinds[KEYS];
	udf_json_lookup(in->value, keys, KEYS, v, kinds);
	if (!integer(v, kinds, AUCTION, &auction)) return udf_error("no integer \"auction\"");
	if (!integer(v, kinds, BIDDER, &bidder)) return udf_error("no integer \"bidder\"");
	if (!integer(v, kinds, PRICE, &price)) return udf_error("no integer \"price\"");
	if (kinds[CHANNEL] != UDF_JSON_STRING) return udf_error("no string \"channel\"");
	udf_bytes raw = {v[CHANNEL].data + 1, v[CHANNEL].len - 2};
	if (!udf_json_unescape(raw, channel, channel_cap, &channel_len)) {
		if (channel_len <= channel_cap) return udf_error("no string \"channel\"");
		channel_cap = 2 * channel_len;
		if (!(channel = realloc(channel, channel_cap))) abort();
		udf_json_unescape(raw, channel, channel_cap, &channel_len);
	}
	if (!integer(v, kinds, DATE_TIME, &date_time)) return udf_error("no integer \"dateTime\"");
	udf_json_reset(&out);
	udf_json_begin_object(&out);
	udf_json_key(&out, "auction");
	udf_json_int(&out, auction);
	udf_json_key(&out, "bidder");
	udf_json_int(&out, bidder);
	udf_json_key(&out, "price_eur");
	udf_json_float(&out, (double)price * 0.908);
	udf_json_key(&out, "channel");
	udf_json_string(&out, (udf_bytes){channel, channel_len});
	udf_json_key(&out, "dateTime");
	udf_json_int(&out, date_time);
	udf_json_end_object(&out);
	o->value = udf_json_bytes(&out);
	return UDF_OK;
}

void udf_register(void) { udf_map("bid_eur", bid_eur); }
