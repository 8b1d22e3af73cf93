//! rules-rust: the broadcast state pattern of udfs/rules, written with the
//! Rust SDK: a rule stream, broadcast to every subtask, sets a threshold per
//! rule name (`update`), and events keyed by user are matched against the
//! rules as they are when each event arrives (`match`). Its output is byte
//! for byte the Go module's.

use platform_udf::json::{self, Writer};
use platform_udf::{module, BroadcastState, Context, Output, Record, Result, ValueState};

/// Rule name to threshold, in decimal.
static RULES: BroadcastState = BroadcastState::new("rules");
/// The user's matches so far, in decimal.
static HITS: ValueState = ValueState::new("hits");

/// Applies rule records in order: `{"rule": name, "min": n}` sets the
/// rule's threshold, `{"rule": name}` without min deletes the rule.
fn update(ctx: &mut Context, recs: &[Record]) -> Result<()> {
    let mut name = Vec::new();
    for r in recs {
        let rule = match json::get_str(&mut name, r.value, &["rule"]) {
            Some(n) if !n.is_empty() => n.to_vec(),
            _ => return Err(r#"no string field "rule""#.into()),
        };
        match json::get_int(r.value, &["min"]) {
            Some(min) => RULES.put(ctx, &rule, min.to_string().as_bytes()),
            None => RULES.remove(ctx, &rule),
        }
    }
    Ok(())
}

/// Emits, for each event of a user and each rule (in name order) whose
/// threshold its amount reaches, `{"user", "rule", "amount", "hits"}`.
fn matches(ctx: &mut Context, user: &[u8], events: &[Record]) -> Result<()> {
    let mut n: i64 = HITS.get(ctx).and_then(json::parse_int).unwrap_or(0);
    let mut w = Writer::new();
    for e in events {
        let amount = json::get_int(e.value, &["amount"]).ok_or(r#"no integer field "amount""#)?;
        let rules: Vec<(Vec<u8>, i64)> =
            RULES.entries(ctx).map(|(k, v)| (k.to_vec(), json::parse_int(v).unwrap_or(0))).collect();
        for (rule, min) in rules {
            if amount < min {
                continue;
            }
            n += 1;
            w.reset().begin_object();
            w.key("user").string(user).key("rule").string(&rule).key("amount").int(amount).key("hits").int(n);
            w.end_object();
            ctx.emit(Output::new(w.as_bytes()).key(user).timestamp(e.timestamp).headers(Vec::new()));
        }
    }
    HITS.set(ctx, n.to_string().as_bytes());
    Ok(())
}

module! {
    states: [RULES, HITS],
    "update" => process_broadcast(update),
    "match" => process(matches),
}
