//! Append-only payment journal used by the settlement batch.
//!
//! Every entry is chained to the previous one with a checksum so that a
//! tampered or truncated journal is detected on replay.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, BufRead, Write};

pub type Cents = i64;
pub type AccountId = String;

pub const GENESIS_CHECKSUM: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    Charge,
    Refund,
    Payout,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub seq: u64,
    pub account: AccountId,
    pub kind: EntryKind,
    pub amount: Cents,
    pub checksum: u64,
}

#[derive(Debug)]
pub enum JournalError {
    Closed,
    NegativeAmount(Cents),
    BrokenChain { seq: u64, expected: u64, found: u64 },
    Parse(String),
    Io(io::Error),
}

impl fmt::Display for JournalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JournalError::Closed => write!(f, "journal is closed"),
            JournalError::NegativeAmount(a) => write!(f, "amount must be positive, got {}", a),
            JournalError::BrokenChain { seq, expected, found } => write!(
                f,
                "checksum mismatch at entry {}: expected {:x}, found {:x}",
                seq, expected, found
            ),
            JournalError::Parse(line) => write!(f, "cannot parse journal line {{{}}}", line),
            JournalError::Io(e) => write!(f, "io error: {}", e),
        }
    }
}

impl From<io::Error> for JournalError {
    fn from(e: io::Error) -> Self {
        JournalError::Io(e)
    }
}

/// FNV-1a over the previous checksum and the entry fields.
pub fn chain_checksum(prev: u64, seq: u64, account: &str, kind: &EntryKind, amount: Cents) -> u64 {
    let mut hash = prev;
    let kind_tag: &[u8] = match kind {
        EntryKind::Charge => b"C",
        EntryKind::Refund => b"R",
        EntryKind::Payout => b"P",
    };
    let parts: [&[u8]; 4] = [&seq.to_le_bytes(), account.as_bytes(), kind_tag, &amount.to_le_bytes()];
    for part in parts.iter() {
        for byte in part.iter() {
            hash ^= *byte as u64;
            hash = hash.wrapping_mul(FNV_PRIME);
        }
    }
    hash
}

/// Something that reacts to journal entries (e.g. balance projections).
pub trait EntryHandler {
    fn handle(&mut self, entry: &Entry) -> Result<(), JournalError>;
    fn close(&mut self) {}
}

pub struct Journal<W: Write> {
    out: W,
    last_checksum: u64,
    next_seq: u64,
    closed: bool,
}

impl<W: Write> Journal<W> {
    pub fn new(out: W) -> Self {
        Journal { out, last_checksum: GENESIS_CHECKSUM, next_seq: 1, closed: false }
    }

    /// Appends an entry, chaining its checksum to the previous entry.
    pub fn append(&mut self, account: &str, kind: EntryKind, amount: Cents) -> Result<Entry, JournalError> {
        if self.closed {
            return Err(JournalError::Closed);
        }
        if amount <= 0 {
            return Err(JournalError::NegativeAmount(amount));
        }
        let checksum = chain_checksum(self.last_checksum, self.next_seq, account, &kind, amount);
        let entry = Entry { seq: self.next_seq, account: account.to_string(), kind, amount, checksum };
        writeln!(self.out, "{}", encode_entry(&entry))?;
        self.last_checksum = checksum;
        self.next_seq += 1;
        Ok(entry)
    }

    /// Flushes and refuses further appends.
    pub fn close(&mut self) -> Result<(), JournalError> {
        self.out.flush()?;
        self.closed = true;
        Ok(())
    }
}

pub fn encode_entry(e: &Entry) -> String {
    let kind = match e.kind {
        EntryKind::Charge => "charge",
        EntryKind::Refund => "refund",
        EntryKind::Payout => "payout",
    };
    format!("{}\t{}\t{}\t{}\t{:016x}", e.seq, e.account, kind, e.amount, e.checksum)
}

pub fn decode_entry(line: &str) -> Result<Entry, JournalError> {
    let bad = || JournalError::Parse(line.to_string());
    let fields: Vec<&str> = line.split('\t').collect();
    if fields.len() != 5 {
        return Err(bad());
    }
    let kind = match fields[2] {
        "charge" => EntryKind::Charge,
        "refund" => EntryKind::Refund,
        "payout" => EntryKind::Payout,
        _ => return Err(bad()),
    };
    Ok(Entry {
        seq: fields[0].parse().map_err(|_| bad())?,
        account: fields[1].to_string(),
        kind,
        amount: fields[3].parse().map_err(|_| bad())?,
        checksum: u64::from_str_radix(fields[4], 16).map_err(|_| bad())?,
    })
}

/// Running balance per account, fed by replaying the journal.
#[derive(Default)]
pub struct BalanceProjection {
    balances: HashMap<AccountId, Cents>,
}

impl BalanceProjection {
    pub fn balance(&self, account: &str) -> Cents {
        *self.balances.get(account).unwrap_or(&0)
    }
}

impl EntryHandler for BalanceProjection {
    fn handle(&mut self, entry: &Entry) -> Result<(), JournalError> {
        let delta = match entry.kind {
            EntryKind::Charge => entry.amount,
            EntryKind::Refund | EntryKind::Payout => -entry.amount,
        };
        *self.balances.entry(entry.account.clone()).or_insert(0) += delta;
        Ok(())
    }

    fn close(&mut self) {
        self.balances.clear();
    }
}

pub struct Replayer<R: BufRead> {
    input: R,
}

impl<R: BufRead> Replayer<R> {
    pub fn new(input: R) -> Self {
        Replayer { input }
    }

    /// Checks every checksum in the chain without dispatching entries.
    pub fn validate(self) -> Result<u64, JournalError> {
        let mut noop = CountingHandler::default();
        self.run(&mut noop)
    }

    /// Replays the journal into a handler, verifying the checksum chain on the way.
    pub fn run(self, handler: &mut dyn EntryHandler) -> Result<u64, JournalError> {
        let mut prev = GENESIS_CHECKSUM;
        let mut count = 0u64;
        for line in self.input.lines() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let entry = decode_entry(&line)?;
            let expected = chain_checksum(prev, entry.seq, &entry.account, &entry.kind, entry.amount);
            if expected != entry.checksum {
                return Err(JournalError::BrokenChain { seq: entry.seq, expected, found: entry.checksum });
            }
            handler.handle(&entry)?;
            prev = entry.checksum;
            count += 1;
        }
        handler.close();
        Ok(count)
    }
}

#[derive(Default)]
struct CountingHandler {
    seen: u64,
}

impl EntryHandler for CountingHandler {
    fn handle(&mut self, _entry: &Entry) -> Result<(), JournalError> {
        self.seen += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_detects_tampering() {
        let mut buf = Vec::new();
        {
            let mut j = Journal::new(&mut buf);
            j.append("acme", EntryKind::Charge, 1_000).unwrap();
            j.append("acme", EntryKind::Refund, 250).unwrap();
            j.close().unwrap();
        }
        let text = String::from_utf8(buf).unwrap().replace("\t250\t", "\t25\t");
        let err = Replayer::new(text.as_bytes()).validate().unwrap_err();
        assert!(matches!(err, JournalError::BrokenChain { seq: 2, .. }));
    }
}
