//! The harness's in-memory stand-in for the platform's state and timer
//! imports (harness.rs): outside WebAssembly, state.rs routes its `host`
//! calls here. A harness moves its store in for the duration of a call;
//! outside a call there is no platform, and the imports panic.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::harness::HarnessTimer;
use crate::state::StateDecl;
use crate::TimeDomain;

/// An entry of state and the processing time it was written at.
struct Entry {
    value: Vec<u8>,
    at: i64,
}

/// Where a state of a key is kept: the state's index and the key (empty for
/// broadcast states, which have none).
type Slot = (u32, Vec<u8>);

/// The state, timers and processing time of a harness.
pub(crate) struct Store {
    states: &'static [&'static StateDecl],
    /// The TTL of each state in milliseconds; 0 is none.
    ttls: Vec<i64>,
    pub(crate) now: i64,
    values: HashMap<Slot, Entry>,
    lists: HashMap<Slot, Vec<Entry>>,
    maps: HashMap<Slot, BTreeMap<Vec<u8>, Entry>>,
    /// The timers as (domain, timestamp, key): their firing order.
    timers: BTreeSet<(u8, i64, Vec<u8>)>,
    /// The keys of the groups of the call in progress, the group entered
    /// and whether the call is a process_broadcast one.
    groups: Vec<Vec<u8>>,
    current: Option<usize>,
    broadcasting: bool,
    /// The scratch of list and map reads.
    out: Vec<u8>,
}

impl Store {
    pub(crate) fn new(states: &'static [&'static StateDecl]) -> Store {
        let ttls = states
            .iter()
            .map(|d| match d.ttl {
                Some(ttl) => ttl_millis(ttl).unwrap_or_else(|e| panic!("state {:?}: ttl {:?}: {}", d.name, ttl, e)),
                None => 0,
            })
            .collect();
        Store {
            states,
            ttls,
            now: 0,
            values: HashMap::new(),
            lists: HashMap::new(),
            maps: HashMap::new(),
            timers: BTreeSet::new(),
            groups: Vec::new(),
            current: None,
            broadcasting: false,
            out: Vec::new(),
        }
    }

    pub(crate) fn enter_call(&mut self, groups: Vec<Vec<u8>>, broadcasting: bool) {
        self.groups = groups;
        self.current = None;
        self.broadcasting = broadcasting;
    }

    pub(crate) fn leave_call(&mut self) {
        self.groups.clear();
        self.current = None;
        self.broadcasting = false;
    }

    /// The domain's timers due at `up_to`, as (timestamp, key), in
    /// timestamp and key order.
    pub(crate) fn due(&self, domain: TimeDomain, up_to: i64) -> Vec<(i64, Vec<u8>)> {
        let d = domain as u8;
        self.timers.iter().filter(|t| t.0 == d && t.1 <= up_to).map(|(_, ts, key)| (*ts, key.clone())).collect()
    }

    pub(crate) fn remove_timers(&mut self, domain: TimeDomain, timers: &[(i64, Vec<u8>)]) {
        for (ts, key) in timers {
            self.timers.remove(&(domain as u8, *ts, key.clone()));
        }
    }

    pub(crate) fn timers(&self) -> Vec<HarnessTimer> {
        self.timers
            .iter()
            .map(|(d, ts, key)| HarnessTimer {
                key: key.clone(),
                timestamp: *ts,
                domain: if *d == TimeDomain::ProcessingTime as u8 { TimeDomain::ProcessingTime } else { TimeDomain::EventTime },
            })
            .collect()
    }

    /// The slot of the declared state `name` of `key`, for reads from
    /// outside a call.
    fn named(&self, name: &str, key: &[u8]) -> Option<(u32, Slot)> {
        let id = self.states.iter().position(|d| d.name == name)? as u32;
        let key = if self.states[id as usize].broadcast { Vec::new() } else { key.to_vec() };
        Some((id, (id, key)))
    }

    pub(crate) fn value(&self, name: &str, key: &[u8]) -> Option<Vec<u8>> {
        let (id, slot) = self.named(name, key)?;
        self.values.get(&slot).filter(|e| !self.expired(id, e)).map(|e| e.value.clone())
    }

    pub(crate) fn list(&self, name: &str, key: &[u8]) -> Vec<Vec<u8>> {
        let (id, slot) = match self.named(name, key) {
            Some(s) => s,
            None => return Vec::new(),
        };
        self.lists.get(&slot).map_or_else(Vec::new, |l| l.iter().filter(|e| !self.expired(id, e)).map(|e| e.value.clone()).collect())
    }

    pub(crate) fn map(&self, name: &str, key: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let (id, slot) = match self.named(name, key) {
            Some(s) => s,
            None => return Vec::new(),
        };
        self.maps
            .get(&slot)
            .map_or_else(Vec::new, |m| m.iter().filter(|(_, e)| !self.expired(id, e)).map(|(k, e)| (k.clone(), e.value.clone())).collect())
    }

    /// Whether an entry of state id has outlived its TTL: it expires TTL
    /// after it was written, as the platform's state backend does.
    fn expired(&self, id: u32, e: &Entry) -> bool {
        let ttl = self.ttls[id as usize];
        ttl > 0 && self.now >= e.at.saturating_add(ttl)
    }

    /// The key of the group entered.
    fn key(&self) -> &[u8] {
        match self.current {
            Some(g) => &self.groups[g],
            None => panic!("udf: state used before entering a group"),
        }
    }

    /// The slot of state id, of kind `kind`, for the group entered.
    fn slot(&self, id: u32, kind: &str) -> Slot {
        match self.states.get(id as usize) {
            Some(d) if d.kind == kind => {
                if d.broadcast {
                    (id, Vec::new())
                } else {
                    if self.broadcasting {
                        panic!("udf: state {:?} is keyed, and a process_broadcast function has no key", d.name);
                    }
                    (id, self.key().to_vec())
                }
            }
            _ => panic!("udf: state {} is not a declared {} state", id, kind),
        }
    }

    /// Refuses a write to a broadcast state from the keyed side, as the
    /// platform does.
    fn writable(&self, id: u32) {
        if let Some(d) = self.states.get(id as usize) {
            if d.broadcast && !self.broadcasting {
                panic!("udf: broadcast state {:?} is read-only outside process_broadcast", d.name);
            }
        }
    }

    fn timer_key(&self) -> Vec<u8> {
        if self.broadcasting {
            panic!("udf: a process_broadcast function has no timers");
        }
        self.key().to_vec()
    }
}

/// Parses a Go duration ("1h", "90s", "1h30m", "250ms") into milliseconds.
fn ttl_millis(s: &str) -> Result<i64, String> {
    if s == "0" {
        return Ok(0);
    }
    let mut rest = s;
    let mut total = 0f64;
    if rest.is_empty() {
        return Err("empty duration".into());
    }
    while !rest.is_empty() {
        let n = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let number: f64 = rest[..n].parse().map_err(|_| format!("no number at {:?}", rest))?;
        rest = &rest[n..];
        let u = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let unit = match &rest[..u] {
            "ns" => 1e-6,
            "us" | "µs" => 1e-3,
            "ms" => 1.0,
            "s" => 1e3,
            "m" => 60e3,
            "h" => 3600e3,
            other => return Err(format!("unknown unit {:?}", other)),
        };
        rest = &rest[u..];
        total += number * unit;
    }
    Ok(total as i64)
}

thread_local! {
    /// The store of the harness whose call is in progress on this thread.
    static ACTIVE: RefCell<Option<Store>> = RefCell::new(None);
}

pub(crate) fn activate(store: Store) {
    ACTIVE.with(|a| {
        let mut a = a.borrow_mut();
        if a.is_some() {
            panic!("udf: a Harness call runs inside another");
        }
        *a = Some(store);
    });
}

pub(crate) fn deactivate() -> Store {
    ACTIVE.with(|a| a.borrow_mut().take()).expect("udf: no Harness call is in progress")
}

fn with<T>(f: impl FnOnce(&mut Store) -> T) -> T {
    ACTIVE.with(|a| match a.borrow_mut().as_mut() {
        Some(s) => f(s),
        None => panic!("udf: keyed state and timers exist natively only inside a Harness call"),
    })
}

/// Copies data into buf if it fits and returns its length.
fn deliver(buf: &mut [u8], data: &[u8]) -> i32 {
    if data.len() <= buf.len() {
        buf[..data.len()].copy_from_slice(data);
    }
    data.len() as i32
}

pub(crate) fn enter(group: u32) {
    with(|s| {
        if group as usize >= s.groups.len() {
            panic!("udf: enter({}) with {} groups", group, s.groups.len());
        }
        s.current = Some(group as usize);
    })
}

pub(crate) fn value_get(state: u32, buf: &mut [u8]) -> i32 {
    with(|s| match s.values.get(&s.slot(state, "value")) {
        Some(e) if !s.expired(state, e) => deliver(buf, &e.value),
        _ => -1,
    })
}

pub(crate) fn value_set(state: u32, v: &[u8]) {
    with(|s| {
        let slot = s.slot(state, "value");
        let at = s.now;
        s.values.insert(slot, Entry { value: v.to_vec(), at });
    })
}

pub(crate) fn state_clear(state: u32) {
    with(|s| {
        let kind = match s.states.get(state as usize) {
            Some(d) => d.kind,
            None => panic!("udf: state {} is not declared", state),
        };
        s.writable(state);
        let slot = s.slot(state, kind);
        s.values.remove(&slot);
        s.lists.remove(&slot);
        s.maps.remove(&slot);
    })
}

pub(crate) fn list_append(state: u32, v: &[u8]) {
    with(|s| {
        let slot = s.slot(state, "list");
        let at = s.now;
        s.lists.entry(slot).or_default().push(Entry { value: v.to_vec(), at });
    })
}

pub(crate) fn list_get(state: u32, buf: &mut [u8]) -> i32 {
    with(|s| {
        let slot = s.slot(state, "list");
        let mut out = std::mem::take(&mut s.out);
        out.clear();
        out.extend_from_slice(&[0; 4]);
        let mut n = 0u32;
        for e in s.lists.get(&slot).into_iter().flatten().filter(|e| !s.expired(state, e)) {
            out.extend_from_slice(&(e.value.len() as u32).to_le_bytes());
            out.extend_from_slice(&e.value);
            n += 1;
        }
        out[..4].copy_from_slice(&n.to_le_bytes());
        let len = deliver(buf, &out);
        s.out = out;
        len
    })
}

pub(crate) fn map_get(state: u32, key: &[u8], buf: &mut [u8]) -> i32 {
    with(|s| match s.maps.get(&s.slot(state, "map")).and_then(|m| m.get(key)) {
        Some(e) if !s.expired(state, e) => deliver(buf, &e.value),
        _ => -1,
    })
}

pub(crate) fn map_put(state: u32, key: &[u8], v: &[u8]) {
    with(|s| {
        s.writable(state);
        let slot = s.slot(state, "map");
        let at = s.now;
        s.maps.entry(slot).or_default().insert(key.to_vec(), Entry { value: v.to_vec(), at });
    })
}

pub(crate) fn map_remove(state: u32, key: &[u8]) {
    with(|s| {
        s.writable(state);
        let slot = s.slot(state, "map");
        if let Some(m) = s.maps.get_mut(&slot) {
            m.remove(key);
        }
    })
}

pub(crate) fn map_entries(state: u32, buf: &mut [u8]) -> i32 {
    with(|s| {
        let slot = s.slot(state, "map");
        let mut out = std::mem::take(&mut s.out);
        out.clear();
        out.extend_from_slice(&[0; 4]);
        let mut n = 0u32;
        for (k, e) in s.maps.get(&slot).into_iter().flatten().filter(|(_, e)| !s.expired(state, e)) {
            out.extend_from_slice(&(k.len() as u32).to_le_bytes());
            out.extend_from_slice(k);
            out.extend_from_slice(&(e.value.len() as u32).to_le_bytes());
            out.extend_from_slice(&e.value);
            n += 1;
        }
        out[..4].copy_from_slice(&n.to_le_bytes());
        let len = deliver(buf, &out);
        s.out = out;
        len
    })
}

pub(crate) fn timer_register(domain: u32, ts: i64) {
    with(|s| {
        let key = s.timer_key();
        s.timers.insert((domain as u8, ts, key));
    })
}

pub(crate) fn timer_delete(domain: u32, ts: i64) {
    with(|s| {
        let key = s.timer_key();
        s.timers.remove(&(domain as u8, ts, key));
    })
}

#[cfg(test)]
mod tests {
    use super::ttl_millis;

    #[test]
    fn parses_go_durations() {
        let cases =
            [("1h", Ok(3_600_000)), ("90s", Ok(90_000)), ("1h30m", Ok(5_400_000)), ("250ms", Ok(250)), ("1.5s", Ok(1_500)), ("0", Ok(0))];
        for (s, want) in cases {
            assert_eq!(ttl_millis(s), want, "{}", s);
        }
        for bad in ["", "1", "h", "1d", "1h-"] {
            assert!(ttl_millis(bad).is_err(), "{:?} parsed", bad);
        }
    }
}
