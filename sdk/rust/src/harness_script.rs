//! Harness scripts: a test written as steps, one a line, whose transcript
//! is compared with an expected one. The format is the C and AssemblyScript
//! SDKs' (sdk/c/platform_harness_script.c), so one script and transcript
//! check a module written in each:
//!
//! ```text
//! on_timer <function>                 the on_timer function
//! process <function> <key> <value>@<ts> ...
//! broadcast <function> <value>@<ts> ...
//! watermark <ms>                      advance the watermark, fire timers
//! now <ms>                            set processing time, fire timers
//! value <state> <key>                 a value state: "= <value>" or "= none"
//! list <state> <key>                  a list state: "= <v1> <v2> ..."
//! timers                              the registered timers
//! ```
//!
//! The transcript echoes each step as `> <step>`, then its outputs, one a
//! line: `out <index> <key> <ts> <value>`, `side <tag> <index> <key> <ts>
//! <value>` or `error <index> <message>`; a failed step is `fail <message>`.
//! Blank lines and lines starting with `#` are skipped; keys and values are
//! words; output bytes that are not a word of printable ASCII are written
//! as `0x` and their hex digits.

use std::fmt::Write;

use crate::harness::{Harness, HarnessOutput, HarnessRecord};
use crate::TimeDomain;

impl Harness {
    /// Runs a harness script and returns its transcript; a malformed step
    /// is an error naming its line.
    pub fn run_script(&mut self, script: &str) -> Result<String, String> {
        let mut out = String::new();
        for (i, line) in script.lines().enumerate() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let _ = writeln!(out, "> {}", line);
            let words: Vec<&str> = line.split_whitespace().collect();
            self.step(&words, &mut out).map_err(|e| format!("line {}: {}", i + 1, e))?;
        }
        Ok(out)
    }

    fn step(&mut self, w: &[&str], out: &mut String) -> Result<(), String> {
        let outputs = match (w.first().copied(), w.len()) {
            (Some("on_timer"), 2) => {
                self.set_on_timer(w[1]);
                return Ok(());
            }
            (Some("process"), n) if n >= 3 => self.process(w[1], w[2].as_bytes(), &records(&w[3..])?),
            (Some("broadcast"), n) if n >= 2 => self.process_broadcast(w[1], &records(&w[2..])?),
            (Some("watermark"), 2) => self.advance_watermark(time(w[1])?),
            (Some("now"), 2) => self.set_processing_time(time(w[1])?),
            (Some("value"), 3) => {
                match self.value(w[1], w[2].as_bytes()) {
                    Some(v) => writeln!(out, "= {}", show(&v)),
                    None => writeln!(out, "= none"),
                }
                .map_err(|e| e.to_string())?;
                return Ok(());
            }
            (Some("list"), 3) => {
                out.push('=');
                for v in self.list(w[1], w[2].as_bytes()) {
                    out.push(' ');
                    out.push_str(&show(&v));
                }
                out.push('\n');
                return Ok(());
            }
            (Some("timers"), 1) => {
                for t in self.timers() {
                    let domain = if t.domain == TimeDomain::EventTime { "event" } else { "processing" };
                    let _ = writeln!(out, "timer {} {} {}", domain, t.timestamp, show(&t.key));
                }
                return Ok(());
            }
            _ => return Err("malformed step".into()),
        };
        match outputs {
            Ok(outputs) => outputs.iter().for_each(|o| print(o, out)),
            Err(e) => {
                let _ = writeln!(out, "fail {}", e);
            }
        }
        Ok(())
    }
}

fn print(o: &HarnessOutput, out: &mut String) {
    let _ = match (&o.error, &o.side) {
        (Some(e), _) => writeln!(out, "error {} {}", o.index, e),
        (None, Some(tag)) => writeln!(out, "side {} {} {} {} {}", tag, o.index, show(&o.key), o.timestamp, show(&o.value)),
        (None, None) => writeln!(out, "out {} {} {} {}", o.index, show(&o.key), o.timestamp, show(&o.value)),
    };
}

fn time(s: &str) -> Result<i64, String> {
    s.parse().map_err(|_| format!("malformed time {:?}", s))
}

/// Parses `<value>@<ts>` words.
fn records(words: &[&str]) -> Result<Vec<HarnessRecord>, String> {
    words
        .iter()
        .map(|w| match w.rfind('@') {
            Some(at) => Ok(HarnessRecord::new(&w.as_bytes()[..at], time(&w[at + 1..])?)),
            None => Err(format!("malformed record {:?}", w)),
        })
        .collect()
}

/// b as it is when it is a word of printable ASCII, else 0x and its hex
/// digits.
fn show(b: &[u8]) -> String {
    if !b.is_empty() && b.iter().all(|&c| c > 0x20 && c < 0x7f) {
        return String::from_utf8_lossy(b).into_owned();
    }
    let mut s = String::from("0x");
    for c in b {
        let _ = write!(s, "{:02x}", c);
    }
    s
}
