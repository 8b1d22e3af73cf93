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

static int bid_eur(const udf_record *in, udf_output *o) {
	int64_t auction, bidder, price, date_time;
	size_t channel_len;
	if (!udf_json_get_int(in->value, UDF_JSON_PATH("auction"), &auction)) return udf_error("no integer \"auction\"");
	if (!udf_json_get_int(in->value, UDF_JSON_PATH("bidder"), &bidder)) return udf_error("no integer \"bidder\"");
	if (!udf_json_get_int(in->value, UDF_JSON_PATH("price"), &price)) return udf_error("no integer \"price\"");
	if (!udf_json_get_string(in->value, UDF_JSON_PATH("channel"), channel, channel_cap, &channel_len)) {
		if (channel_len <= channel_cap) return udf_error("no string \"channel\"");
		channel_cap = 2 * channel_len;
		if (!(channel = realloc(channel, channel_cap))) abort();
		udf_json_get_string(in->value, UDF_JSON_PATH("channel"), channel, channel_cap, &channel_len);
	}
	if (!udf_json_get_int(in->value, UDF_JSON_PATH("dateTime"), &date_time)) return udf_error("no integer \"dateTime\"");
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
