//! The short-term index: which links' title, alias or url contain each pair of characters, and
//! so each single character (every pair it starts). The trigram index cannot answer terms of one
//! or two characters, and scanning a million links for them takes a tenth of a second.
//!
//! A row `(owner, field, gram, block) → ids` holds, as a serialized roaring bitmap, the ids of
//! the owner's links in one block of 65,536 ids whose field contains `gram` (case-folded). A
//! search reads the few rows of its term and knows its exact matches without reading a link.
//!
//! The database keeps it in step, so no writer has to remember it. Links with ids above the
//! watermark (`link_grams_upto`) are not indexed yet, and links the index took in and that were
//! written since (by any statement: triggers note them in `link_grams_stale`) are not current:
//! searches read both kinds directly. Every write transaction ends with [`settle`], which
//! indexes them together once [`PENDING_MAX`] have gathered: indexing each at once would
//! rewrite ~100 rows per link; together, each row is rewritten once per batch. Imports index
//! their links as they stage them ([`Batch`]), a shortcut that only saves the catching up.

use std::collections::{BTreeMap, HashMap};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use roaring::{RoaringBitmap, RoaringTreemap};
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::super::db_error;
use crate::domain::{Error, Id, Result, SearchBy};

/// Terms of up to this many characters are answered here; longer ones by the trigram index.
const SHORT: usize = 2;

/// How many links may wait above the watermark before a write indexes them.
const PENDING_MAX: Id = if cfg!(test) { 64 } else { 4_096 };

/// Ids per row: a roaring bitmap's own container size, so a row holds one container.
const BLOCK_BITS: u32 = 16;

/// The case folding of the index and its searches: one character for one (a character whose
/// lower case is several stays as it is), so a term keeps its length.
pub fn fold(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

/// The folded term, when it is short enough for this index.
pub fn short_term(term: &str) -> Option<String> {
    let n = term.chars().count();
    (1..=SHORT)
        .contains(&n)
        .then(|| term.chars().map(fold).collect())
}

fn field(by: SearchBy) -> usize {
    match by {
        SearchBy::Title => 0,
        SearchBy::Alias => 1,
        SearchBy::Url => 2,
    }
}

/// Follows the last character of a text in its last gram.
const END: char = '\0';

/// Calls `visit` with every gram of `text`, duplicates included: each pair of adjacent folded
/// characters, and the last one followed by [`END`]. Every character of a text starts a gram,
/// so a single character is found as the prefix of its grams; it needs no entries of its own.
fn each_gram(text: &str, mut visit: impl FnMut(char, char)) {
    let mut prev = None;
    for c in text.chars().map(fold) {
        if let Some(p) = prev {
            visit(p, c);
        }
        prev = Some(c);
    }
    if let Some(last) = prev {
        visit(last, END);
    }
}

fn gram_text(a: char, b: char) -> String {
    let mut s = String::with_capacity(8);
    s.push(a);
    s.push(b);
    s
}

/// The ids of `owner`'s links whose field `by` contains the short, folded `term`.
pub fn matching(conn: &Connection, owner: Id, by: SearchBy, term: &str) -> Result<RoaringTreemap> {
    let mut highs: BTreeMap<u32, RoaringBitmap> = BTreeMap::new();
    // A pair is one gram; a single character is every gram it starts.
    let (from, to) = match term.chars().count() {
        1 => (term.to_owned(), format!("{term}{}", char::MAX)),
        _ => (term.to_owned(), term.to_owned()),
    };
    let mut stmt = conn
        .prepare_cached(
            "SELECT block, ids FROM link_grams WHERE owner_id = ?1 AND field = ?2 \
             AND gram BETWEEN ?3 AND ?4",
        )
        .map_err(db_error)?;
    let mut rows = stmt
        .query(params![owner, field(by) as i64, from, to])
        .map_err(db_error)?;
    while let Some(row) = rows.next().map_err(db_error)? {
        let block: i64 = row.get(0).map_err(db_error)?;
        let ids = decode(blob_at(row, 1)?)?;
        *highs.entry(high(block)).or_default() |= ids;
    }
    let mut set = RoaringTreemap::from_bitmaps(highs);
    // The links not indexed yet are read as they are.
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT id, {} FROM links WHERE id > ?1 AND owner_id = ?2",
            super::column(by)
        ))
        .map_err(db_error)?;
    let mut folded = String::new();
    let mut contains = |text: Option<&str>| {
        folded.clear();
        folded.extend(text.unwrap_or_default().chars().map(fold));
        text.is_some() && folded.contains(term)
    };
    let mut rows = stmt.query(params![upto(conn)?, owner]).map_err(db_error)?;
    while let Some(row) = rows.next().map_err(db_error)? {
        if contains(text_at(row, 1)?) {
            set.insert(row.get::<_, Id>(0).map_err(db_error)? as u64);
        }
    }
    // The links written since the index took them in: what it says of them is stale.
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT s.id, l.owner_id = ?1, l.{} FROM link_grams_stale s              LEFT JOIN links l ON l.id = s.id",
            super::column(by)
        ))
        .map_err(db_error)?;
    let mut rows = stmt.query([owner]).map_err(db_error)?;
    while let Some(row) = rows.next().map_err(db_error)? {
        let id = row.get::<_, Id>(0).map_err(db_error)? as u64;
        let mine = row.get::<_, Option<bool>>(1).map_err(db_error)?;
        if mine == Some(true) && contains(text_at(row, 2)?) {
            set.insert(id);
        } else {
            set.remove(id);
        }
    }
    Ok(set)
}

fn text_at<'r>(row: &'r Row<'_>, i: usize) -> Result<Option<&'r str>> {
    row.get_ref(i)
        .and_then(|v| v.as_str_or_null().map_err(Into::into))
        .map_err(db_error)
}

fn blob_at<'r>(row: &'r Row<'_>, i: usize) -> Result<&'r [u8]> {
    row.get_ref(i)
        .and_then(|v| v.as_blob().map_err(Into::into))
        .map_err(db_error)
}

/// The treemap key of a block's ids.
fn high(block: i64) -> u32 {
    (block >> (32 - BLOCK_BITS)) as u32
}

fn decode(blob: &[u8]) -> Result<RoaringBitmap> {
    RoaringBitmap::deserialize_from(blob).map_err(|e| {
        Error::Unavailable(format!("the database's short-search index is damaged: {e}"))
    })
}

/// The highest link id the index covers.
fn upto(conn: &Connection) -> Result<Id> {
    conn.prepare_cached("SELECT upto FROM link_grams_upto")
        .map_err(db_error)?
        .query_row([], |r| r.get(0))
        .optional()
        .map_err(db_error)
        .map(Option::unwrap_or_default)
}

/// Folds what waits into the index once enough has gathered: links above the watermark, and
/// links written since the index took them in. Every write transaction ends with this
/// ([`Db`](crate::backend::local::Db)'s write path), so the waiting sets, which every short
/// search reads, stay small.
pub fn settle(tx: &Connection) -> Result<()> {
    let upto = upto(tx)?;
    let last: Id = tx
        .prepare_cached("SELECT ifnull(max(id), 0) FROM links")
        .map_err(db_error)?
        .query_row([], |r| r.get(0))
        .map_err(db_error)?;
    if last - upto >= PENDING_MAX {
        index_range(tx, upto + 1, last)?;
        set_upto(tx, last)?;
    }
    let stale: Id = tx
        .prepare_cached("SELECT count(*) FROM link_grams_stale")
        .map_err(db_error)?
        .query_row([], |r| r.get(0))
        .map_err(db_error)?;
    if stale >= PENDING_MAX {
        fold_stale(tx)?;
    }
    Ok(())
}

/// Replaces what the index holds for each link noted in `link_grams_stale` with its texts now
/// (nothing, once deleted), a block at a time: each row of a block is rewritten at most twice,
/// however many of its links changed.
fn fold_stale(tx: &Connection) -> Result<()> {
    let mut stmt = tx
        .prepare_cached(
            "SELECT s.id, s.owner_id, s.title, s.alias, s.url, l.owner_id, l.title, l.alias, \
             l.url FROM link_grams_stale s LEFT JOIN links l ON l.id = s.id ORDER BY s.id",
        )
        .map_err(db_error)?;
    let mut rows = stmt.query([]).map_err(db_error)?;
    let mut block = None;
    let (mut gone, mut now) = (Postings::default(), Postings::default());
    let flush = |block: Id, gone: Postings, now: Postings| -> Result<()> {
        apply_postings(tx, block, gone, false)?;
        write(tx, block, now)
    };
    while let Some(row) = rows.next().map_err(db_error)? {
        let id: Id = row.get(0).map_err(db_error)?;
        let this = id >> BLOCK_BITS;
        if block != Some(this) {
            if let Some(done) = block {
                flush(done, std::mem::take(&mut gone), std::mem::take(&mut now))?;
            }
            block = Some(this);
        }
        let text = |i| text_at(row, i);
        if let Some(owner) = row.get::<_, Option<Id>>(1).map_err(db_error)? {
            gone.add(owner, id as u16, [text(2)?, text(3)?, text(4)?]);
        }
        if let Some(owner) = row.get::<_, Option<Id>>(5).map_err(db_error)? {
            now.add(owner, id as u16, [text(6)?, text(7)?, text(8)?]);
        }
    }
    if let Some(done) = block {
        flush(done, gone, now)?;
    }
    tx.execute("DELETE FROM link_grams_stale", [])
        .map_err(db_error)?;
    Ok(())
}

/// Indexes every link above the watermark and moves it to the highest id.
pub fn catch_up(tx: &Connection) -> Result<()> {
    let upto = upto(tx)?;
    let last: Id = tx
        .query_row("SELECT ifnull(max(id), 0) FROM links", [], |r| r.get(0))
        .map_err(db_error)?;
    if last > upto {
        index_range(tx, upto + 1, last)?;
        set_upto(tx, last)?;
    }
    Ok(())
}

fn set_upto(tx: &Connection, upto: Id) -> Result<()> {
    tx.prepare_cached("UPDATE link_grams_upto SET upto = ?1")
        .map_err(db_error)?
        .execute([upto])
        .map_err(db_error)?;
    Ok(())
}

/// Indexes links written in bulk as they are staged, before they are inserted: they will take
/// the ids from one above the highest on, in order, so their texts need not be read back.
///
/// The gathering runs on a thread of its own: an import's writer is its bottleneck (the
/// full-text index and the links' own indexes), and the grams of its links are a fifth of what
/// that thread did. Texts go over in handfuls; the gathered blocks come back at [`Batch::finish`]
/// as bitmaps, written there inside the caller's transaction.
pub struct Batch {
    first: Id,
    next: Id,
    /// Texts not yet handed to the gathering thread.
    waiting: Vec<Staged>,
    gatherer: Option<Gatherer>,
}

/// A staged link's id, owner and texts.
type Staged = (Id, Id, [Option<String>; 3]);

struct Gatherer {
    texts: SyncSender<Vec<Staged>>,
    blocks: JoinHandle<Vec<Bitmaps>>,
}

/// Links handed to the gathering thread at a time, and how many handfuls may wait for it.
const HANDFUL: usize = 256;
const HANDFULS_WAITING: usize = 16;

impl Batch {
    /// For links that will get ids from `first` on.
    pub fn new(first: Id) -> Batch {
        Batch {
            first,
            next: first,
            waiting: Vec::new(),
            gatherer: None,
        }
    }

    /// The next link: its owner and texts.
    pub fn add(&mut self, owner: Id, texts: Texts<'_>) -> Result<()> {
        let id = self.next;
        self.next += 1;
        self.waiting
            .push((id, owner, texts.map(|t| t.map(str::to_owned))));
        if self.waiting.len() >= HANDFUL {
            self.hand_over()?;
        }
        Ok(())
    }

    fn hand_over(&mut self) -> Result<()> {
        let texts = std::mem::take(&mut self.waiting);
        let gatherer = match self.gatherer.as_mut() {
            Some(g) => g,
            None => self.gatherer.insert(Gatherer::start()?),
        };
        gatherer
            .texts
            .send(texts)
            .map_err(|_| Error::Unavailable("the search index's gathering thread stopped".into()))
    }

    /// The staged links were inserted, the last with id `last`: the index covers them now.
    pub fn finish(mut self, tx: &Connection, last: Id) -> Result<()> {
        if self.next == self.first {
            return Ok(());
        }
        if last != self.next - 1 {
            return Err(Error::Unavailable(format!(
                "the new links took ids up to {last}, not {} as the search index expected",
                self.next - 1
            )));
        }
        if !self.waiting.is_empty() {
            self.hand_over()?;
        }
        if let Some(Gatherer { texts, blocks }) = self.gatherer.take() {
            drop(texts);
            let blocks = blocks.join().map_err(|_| {
                Error::Unavailable("the search index's gathering thread failed".into())
            })?;
            for bitmaps in blocks {
                write_bitmaps(tx, bitmaps)?;
            }
        }
        let upto = upto(tx)?;
        // Links created one by one before these and still waiting.
        if upto < self.first - 1 {
            index_range(tx, upto + 1, self.first - 1)?;
        }
        set_upto(tx, upto.max(last))
    }
}

impl Gatherer {
    fn start() -> Result<Gatherer> {
        let (texts, receiver) = sync_channel::<Vec<Staged>>(HANDFULS_WAITING);
        let blocks = std::thread::Builder::new()
            .name("index-grams".into())
            .spawn(move || gather(&receiver))
            .map_err(|e| Error::Unavailable(format!("cannot start a thread: {e}")))?;
        Ok(Gatherer { texts, blocks })
    }
}

/// The gathering thread: the grams of every link it is handed, a block's postings at a time,
/// until the sender is dropped.
fn gather(receiver: &Receiver<Vec<Staged>>) -> Vec<Bitmaps> {
    let mut done = Vec::new();
    let mut current: Option<(Id, Postings)> = None;
    for (id, owner, texts) in receiver.iter().flatten() {
        let block = id >> BLOCK_BITS;
        if current.as_ref().is_none_or(|(b, _)| *b != block)
            && let Some((b, postings)) = current.replace((block, Postings::default()))
        {
            done.push(postings.into_bitmaps(b));
        }
        if let Some((_, postings)) = current.as_mut() {
            postings.add(owner, id as u16, texts.each_ref().map(Option::as_deref));
        }
    }
    done.extend(current.map(|(b, postings)| postings.into_bitmaps(b)));
    done
}

/// The stored texts of a link, in field order: title, alias, url.
pub type Texts<'a> = [Option<&'a str>; 3];

fn apply_postings(tx: &Connection, block: Id, postings: Postings, add: bool) -> Result<()> {
    if add {
        return write(tx, block, postings);
    }
    let start = block << BLOCK_BITS;
    for (owner, field, gram, bits) in postings.drain() {
        edit(tx, owner, field, &gram, start, |stored| {
            *stored -= RoaringBitmap::from_lsb0_bytes(start as u32, bits);
        })?;
    }
    Ok(())
}

/// Rewrites the row of `gram` holding `id`'s block with `change` applied; an empty row goes.
fn edit(
    tx: &Connection,
    owner: Id,
    field: usize,
    gram: &str,
    id: Id,
    change: impl FnOnce(&mut RoaringBitmap),
) -> Result<()> {
    let block = id >> BLOCK_BITS;
    let key = params![owner, field as i64, gram, block];
    let stored: Option<Vec<u8>> = tx
        .prepare_cached(
            "SELECT ids FROM link_grams WHERE owner_id = ?1 AND field = ?2 AND gram = ?3 \
             AND block = ?4",
        )
        .map_err(db_error)?
        .query_row(key, |r| r.get(0))
        .optional()
        .map_err(db_error)?;
    let mut ids = match stored {
        Some(blob) => decode(&blob)?,
        None => RoaringBitmap::new(),
    };
    change(&mut ids);
    if ids.is_empty() {
        tx.prepare_cached(
            "DELETE FROM link_grams WHERE owner_id = ?1 AND field = ?2 AND gram = ?3 \
             AND block = ?4",
        )
        .map_err(db_error)?
        .execute(key)
        .map_err(db_error)?;
        return Ok(());
    }
    ids.optimize();
    let mut blob = Vec::with_capacity(ids.serialized_size());
    ids.serialize_into(&mut blob)
        .map_err(|e| Error::Unavailable(format!("cannot encode the short-search index: {e}")))?;
    tx.prepare_cached(
        "INSERT INTO link_grams (owner_id, field, gram, block, ids) VALUES (?1, ?2, ?3, ?4, ?5) \
         ON CONFLICT (owner_id, field, gram, block) DO UPDATE SET ids = excluded.ids",
    )
    .map_err(db_error)?
    .execute(params![owner, field as i64, gram, block, blob])
    .map_err(db_error)?;
    Ok(())
}

/// Adds the links with ids in `first..=last` to the index, a block at a time: each row of the
/// block is rewritten once, whatever the number of links.
fn index_range(tx: &Connection, first: Id, last: Id) -> Result<()> {
    let mut from = first.max(0);
    while from <= last {
        let block = from >> BLOCK_BITS;
        let to = (((block + 1) << BLOCK_BITS) - 1).min(last);
        let mut postings = Postings::default();
        let mut stmt = tx
            .prepare_cached(
                "SELECT id, owner_id, title, alias, url FROM links WHERE id BETWEEN ?1 AND ?2 \
                 ORDER BY id",
            )
            .map_err(db_error)?;
        let mut rows = stmt.query(params![from, to]).map_err(db_error)?;
        while let Some(row) = rows.next().map_err(db_error)? {
            let text = |i| text_at(row, i);
            let id: Id = row.get(0).map_err(db_error)?;
            let owner: Id = row.get(1).map_err(db_error)?;
            postings.add(owner, id as u16, [text(2)?, text(3)?, text(4)?]);
        }
        write(tx, block, postings)?;
        from = to + 1;
    }
    Ok(())
}

/// Adds the links gathered for `block` to the index: each gram's row is rewritten once.
fn write(tx: &Connection, block: Id, postings: Postings) -> Result<()> {
    write_bitmaps(tx, postings.into_bitmaps(block))
}

/// The links of one block for each gram: owner, field, gram and their ids.
struct Bitmaps {
    block: Id,
    grams: Vec<(Id, usize, String, RoaringBitmap)>,
}

fn write_bitmaps(tx: &Connection, bitmaps: Bitmaps) -> Result<()> {
    let start = bitmaps.block << BLOCK_BITS;
    for (owner, field, gram, ids) in bitmaps.grams {
        edit(tx, owner, field, &gram, start, |stored| *stored |= ids)?;
    }
    Ok(())
}

/// ASCII grams: a pair of characters at 128·first + second.
const ASCII_SLOTS: usize = 128 * 128;

/// The links gathered for each gram while indexing one block: a bit per id of the block for
/// each gram met (setting a bit twice is harmless, and a block's bits become a bitmap container
/// in one step). Nearly every text is ASCII: those grams find their bits through a table,
/// byte by byte; the rest through a map.
#[derive(Default)]
struct Postings {
    owners: HashMap<Id, OwnerPostings>,
    /// The bits of every gram met, [`BLOCK_BYTES`] each, in the order met.
    bits: Vec<u8>,
}

const NONE: u32 = u32::MAX;

struct OwnerPostings {
    /// For each field and ASCII slot, its bits in `Postings::bits`, or `NONE`.
    ascii: Vec<u32>,
    other: HashMap<(usize, String), u32>,
}

/// Sets bit `low` of the gram whose bits are at `slot` (allocating them on first use).
fn set(bits: &mut Vec<u8>, slot: &mut u32, low: u16) {
    if *slot == NONE {
        *slot = (bits.len() / BLOCK_BYTES) as u32;
        bits.resize(bits.len() + BLOCK_BYTES, 0);
    }
    bits[*slot as usize * BLOCK_BYTES + usize::from(low >> 3)] |= 1 << (low & 7);
}

/// The bytes of a block's bits: one bit per id.
const BLOCK_BYTES: usize = 1 << (BLOCK_BITS - 3);

impl Postings {
    fn add(&mut self, owner: Id, low: u16, texts: Texts<'_>) {
        let lists = self.owners.entry(owner).or_insert_with(|| OwnerPostings {
            ascii: vec![NONE; 3 * ASCII_SLOTS],
            other: HashMap::new(),
        });
        let bits = &mut self.bits;
        for (field, text) in texts.into_iter().enumerate() {
            let Some(text) = text else { continue };
            let ascii = &mut lists.ascii[field * ASCII_SLOTS..(field + 1) * ASCII_SLOTS];
            if text.is_ascii() {
                // The same grams as `each_gram`, without decoding characters.
                let mut prev = None;
                for b in text.bytes() {
                    let c = usize::from(b.to_ascii_lowercase());
                    if let Some(p) = prev {
                        set(bits, &mut ascii[128 * p + c], low);
                    }
                    prev = Some(c);
                }
                if let Some(last) = prev {
                    set(bits, &mut ascii[128 * last + END as usize], low);
                }
                continue;
            }
            each_gram(text, |a, b| match ascii_slot(a, b) {
                Some(slot) => set(bits, &mut ascii[slot], low),
                None => {
                    let key = (field, gram_text(a, b));
                    set(bits, lists.other.entry(key).or_insert(NONE), low)
                }
            });
        }
    }

    /// Every gram met in `block`, with the ids of its links.
    fn into_bitmaps(self, block: Id) -> Bitmaps {
        let start = (block << BLOCK_BITS) as u32;
        let grams = self
            .drain()
            .map(|(owner, field, gram, bits)| {
                let ids = RoaringBitmap::from_lsb0_bytes(start, bits);
                (owner, field, gram, ids)
            })
            .collect();
        Bitmaps { block, grams }
    }

    /// Every gram met: owner, field, gram, and its bits (bit `n` for the block's `n`th id).
    fn drain(&self) -> impl Iterator<Item = (Id, usize, String, &[u8])> {
        let mut grams = Vec::new();
        for (&owner, lists) in &self.owners {
            let ascii = lists
                .ascii
                .iter()
                .copied()
                .enumerate()
                .filter(|&(_, slot)| slot != NONE)
                .map(|(i, slot)| (i / ASCII_SLOTS, ascii_gram(i % ASCII_SLOTS), slot));
            let other = lists
                .other
                .iter()
                .map(|((field, gram), &slot)| (*field, gram.clone(), slot));
            for (field, gram, slot) in ascii.chain(other) {
                let at = slot as usize * BLOCK_BYTES;
                grams.push((owner, field, gram, &self.bits[at..at + BLOCK_BYTES]));
            }
        }
        grams.into_iter()
    }
}

fn ascii_slot(a: char, b: char) -> Option<usize> {
    (a.is_ascii() && b.is_ascii()).then(|| 128 * a as usize + b as usize)
}

fn ascii_gram(slot: usize) -> String {
    let char_of = |n: usize| char::from(n as u8);
    gram_text(char_of(slot / 128), char_of(slot % 128))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;
    use rusqlite::Transaction;

    use super::*;
    use crate::backend::local::links::blank_row;
    use crate::backend::local::schema;
    use crate::backend::local::store::links;

    /// A write to the links, as the service makes them.
    #[derive(Debug, Clone)]
    enum Op {
        Create {
            owner: Id,
            text: [String; 3],
        },
        Import {
            owner: Id,
            texts: Vec<[String; 3]>,
        },
        Edit {
            pick: usize,
            text: [String; 3],
        },
        Title {
            pick: usize,
            title: String,
        },
        Delete {
            pick: usize,
        },
        /// Deletes the newest link, whose id SQLite then gives to the next one.
        DeleteNewest,
    }

    // Few characters, so grams repeat; upper case and a non-ASCII pair to fold.
    fn text() -> impl Strategy<Value = String> {
        proptest::string::string_regex("[abAB/éÉ]{0,5}").unwrap()
    }

    fn texts() -> impl Strategy<Value = [String; 3]> {
        (text(), text(), text()).prop_map(|(a, b, c)| [a, b, c])
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (1..=2i64, texts()).prop_map(|(owner, text)| Op::Create { owner, text }),
            2 => (1..=2i64, proptest::collection::vec(texts(), 1..90))
                .prop_map(|(owner, texts)| Op::Import { owner, texts }),
            2 => (any::<usize>(), texts()).prop_map(|(pick, text)| Op::Edit { pick, text }),
            1 => (any::<usize>(), text()).prop_map(|(pick, title)| Op::Title { pick, title }),
            1 => any::<usize>().prop_map(|pick| Op::Delete { pick }),
            1 => Just(Op::DeleteNewest),
        ]
    }

    fn row(owner: Id, [title, alias, url]: &[String; 3]) -> links::LinkRow {
        let mut row = blank_row(owner, jiff::Timestamp::UNIX_EPOCH);
        row.title = (!title.is_empty()).then(|| title.clone());
        // Aliases are unique: a number outside the searched alphabet keeps them apart.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        row.alias = format!("{alias}{n}");
        row.url = url.clone();
        row
    }

    fn ids(tx: &Transaction<'_>) -> Vec<Id> {
        let mut stmt = tx.prepare("SELECT id FROM links ORDER BY id").unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    fn apply(tx: &Transaction<'_>, op: &Op) {
        let existing = ids(tx);
        let pick = |n: usize| existing.get(n % existing.len().max(1)).copied();
        match op {
            Op::Create { owner, text } => {
                links::insert(tx, &row(*owner, text)).unwrap();
            }
            Op::Import { owner, texts } => {
                let mut staged = links::stage_start(tx).unwrap();
                for text in texts {
                    links::stage(tx, &mut staged, &row(*owner, text), 0).unwrap();
                }
                links::stage_insert(tx, staged).unwrap();
            }
            Op::Edit { pick: n, text } => {
                if let Some(id) = pick(*n) {
                    let owner = tx
                        .query_row("SELECT owner_id FROM links WHERE id = ?1", [id], |r| {
                            r.get(0)
                        })
                        .unwrap();
                    links::update(tx, id, &row(owner, text)).unwrap();
                }
            }
            Op::Title { pick: n, title } => {
                if let Some(id) = pick(*n) {
                    let url: String = tx
                        .query_row("SELECT url FROM links WHERE id = ?1", [id], |r| r.get(0))
                        .unwrap();
                    assert!(links::set_title(tx, id, &url, title).unwrap());
                    assert!(!links::set_title(tx, id, "elsewhere", "late").unwrap());
                }
            }
            Op::Delete { pick: n } => {
                if let Some(id) = pick(*n) {
                    delete(tx, id);
                }
            }
            Op::DeleteNewest => {
                if let Some(&id) = existing.last() {
                    delete(tx, id);
                }
            }
        }
    }

    /// A row deleted as any writer would: the triggers, not the writer, keep the index.
    fn delete(tx: &Transaction<'_>, id: Id) {
        assert_eq!(
            tx.execute("DELETE FROM links WHERE id = ?1", [id]).unwrap(),
            1
        );
    }

    /// Every gram's matches, by the index and by reading every link, for both owners.
    fn check(conn: &Connection) -> std::result::Result<(), TestCaseError> {
        let alphabet = ['a', 'b', '/', 'é'];
        let mut terms: Vec<String> = alphabet.iter().map(|c| c.to_string()).collect();
        for a in alphabet {
            for b in alphabet {
                terms.push(format!("{a}{b}"));
            }
        }
        for owner in [1, 2] {
            for by in SearchBy::ALL {
                let mut stmt = conn
                    .prepare(&format!(
                        "SELECT id, {} FROM links WHERE owner_id = ?1",
                        by.as_str()
                    ))
                    .unwrap();
                let rows: Vec<(Id, Option<String>)> = stmt
                    .query_map([owner], |r| Ok((r.get(0)?, r.get(1)?)))
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap();
                for term in &terms {
                    let expected: BTreeSet<u64> = rows
                        .iter()
                        .filter(|(_, t)| {
                            t.as_deref()
                                .is_some_and(|t| t.to_lowercase().contains(term.as_str()))
                        })
                        .map(|(id, _)| *id as u64)
                        .collect();
                    let found: BTreeSet<u64> = matching(conn, owner, by, term)
                        .unwrap()
                        .into_iter()
                        .collect();
                    prop_assert_eq!(found, expected, "owner {} {:?} {:?}", owner, by, term);
                }
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn the_index_agrees_with_the_texts_after_any_writes(ops in proptest::collection::vec(op(), 1..60)) {
            let mut conn = Connection::open_in_memory().unwrap();
            schema::migrate(&mut conn).unwrap();
            conn.execute_batch(
                "INSERT INTO owners (id, name, created_at) VALUES (1, 'me', 0), (2, 'you', 0);",
            )
            .unwrap();
            for op in &ops {
                let tx = conn.transaction().unwrap();
                apply(&tx, op);
                // As every write transaction ends (`Db`).
                settle(&tx).unwrap();
                tx.commit().unwrap();
            }
            check(&conn)?;
            // Everything indexed, nothing left to read directly: the same answers.
            let tx = conn.transaction().unwrap();
            catch_up(&tx).unwrap();
            fold_stale(&tx).unwrap();
            tx.commit().unwrap();
            check(&conn)?;
        }
    }

    /// An import's grams are gathered on their own thread, a block at a time: links staged
    /// across a block's end are found in both blocks.
    #[test]
    fn an_import_across_a_block_boundary_is_found() {
        let mut conn = Connection::open_in_memory().unwrap();
        schema::migrate(&mut conn).unwrap();
        let last_of_block = (1 << BLOCK_BITS) - 3;
        conn.execute_batch(&format!(
            "INSERT INTO owners (id, name, created_at) VALUES (1, 'me', 0), (2, 'you', 0);
             INSERT INTO links (id, owner_id, alias, url, created_at, updated_at)
                 VALUES ({last_of_block}, 1, 'first', 'ab', 0, 0);"
        ))
        .unwrap();
        let texts: Vec<[String; 3]> = (0..600)
            .map(|i| {
                let t = ["ab", "bé", "/a", "É/"][i % 4].to_owned();
                [t.clone(), t.clone(), t]
            })
            .collect();
        let tx = conn.transaction().unwrap();
        settle(&tx).unwrap();
        apply(
            &tx,
            &Op::Import {
                owner: 1,
                texts: texts.clone(),
            },
        );
        apply(&tx, &Op::Import { owner: 2, texts });
        settle(&tx).unwrap();
        tx.commit().unwrap();
        let ids = ids(&conn.unchecked_transaction().unwrap());
        assert!(ids.last().unwrap() >> BLOCK_BITS > ids[0] >> BLOCK_BITS);
        check(&conn).unwrap();
        let found = matching(&conn, 1, SearchBy::Url, "ab").unwrap();
        assert_eq!(found.len(), 151, "the first link and every fourth imported");
    }

    #[test]
    fn a_term_keeps_its_length_when_folded() {
        assert_eq!(short_term("Ab").as_deref(), Some("ab"));
        assert_eq!(short_term("ÉS").as_deref(), Some("és"));
        // 'İ' lower-cases to two characters; it is kept as it is rather than lengthened.
        assert_eq!(short_term("İ").as_deref(), Some("İ"));
        assert_eq!(short_term("abc"), None);
        assert_eq!(short_term(""), None);
    }

    #[test]
    fn ascii_slots_name_their_grams() {
        for (a, b) in [('a', END), ('/', 'z'), ('0', '0')] {
            let slot = ascii_slot(a, b).unwrap();
            assert_eq!(ascii_gram(slot), gram_text(a, b));
        }
        assert_eq!(ascii_slot('é', END), None);
        assert_eq!(ascii_slot('a', 'é'), None);
    }
}
