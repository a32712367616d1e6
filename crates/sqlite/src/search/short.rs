//! The short-term index: which links' title, alias or url contain each pair of characters (and
//! so each single character: every pair it starts), each triple, and each of the longer terms
//! many links contain ([`common`]). The full-text index cannot
//! answer terms of one or two characters, and scanning a million links for them takes a tenth
//! of a second; a three-character term it answers, but stepping through its matches one row at
//! a time costs about 100 ns each — 12 ms for a term in one URL of nine at a million links —
//! where this index reads them as a few bitmaps.
//!
//! A row `(owner, field, gram, block) → ids` holds, as a serialized roaring bitmap, the ids of
//! the owner's links in one block of 65,536 ids whose field contains `gram` (case-folded);
//! triples and common terms are kept under fields of their own ([`TRIPLES`], [`COMMON`] on),
//! so a single character's range of pairs never reads them. A search reads the few rows of its
//! term and knows its exact matches without reading a link. A term too long for the full-text
//! index ([`long`]) reads the rows of its triples and checks the links they leave.
//!
//! The database keeps it in step, so no writer has to remember it. Links with ids above the
//! watermark (`link_grams_upto`) are not indexed yet, and links the index took in and that were
//! written since (by any statement: triggers note them in `link_grams_stale`) are not current:
//! searches read both kinds directly. Every write transaction ends with [`settle`], which
//! indexes them together once [`PENDING_MAX`] have gathered: indexing each at once would
//! rewrite ~100 rows per link; together, each row is rewritten once per batch. Imports index
//! their links as they stage them ([`Batch`]), a shortcut that only saves the catching up.

pub mod common;
mod long;
mod postings;

pub use long::{Asked, Candidates};

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use roaring::{RoaringBitmap, RoaringTreemap};
use rusqlite::{Connection, Row, params};

use crate::error::db_error;
use crate::sql::Statements;
use common::Common;
use linkdeck_domain::{Error, Id, Result, SearchBy};
use linkdeck_store::sql::WHOLE_MAX;
use postings::{Gram, Postings};

/// Terms of up to this many characters are answered here; longer ones by the full-text index.
const SHORT: usize = 3;

/// The field of a triple's rows: this plus the field's own number ([`field`]).
const TRIPLES: usize = 3;

/// The field of a common longer term's rows ([`common`]), likewise.
const COMMON: usize = 6;

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
fn short_term(term: &str) -> Option<String> {
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

/// The folded term, when this index answers it: a short one, a common longer one
/// ([`common`]), or one longer than the full-text index is asked for whole ([`long`]).
pub fn indexed_term(conn: &Connection, by: SearchBy, term: &str) -> Result<Option<String>> {
    if let Some(short) = short_term(term) {
        return Ok(Some(short));
    }
    let folded: String = term.chars().map(fold).collect();
    if term.chars().count() > WHOLE_MAX {
        return Ok(Some(folded));
    }
    Ok(common::is_chosen(conn, field(by), &folded)?.then_some(folded))
}

/// The ids of `owner`'s links whose field `by` contains the folded `term`, one that
/// [`indexed_term`] gave.
#[cfg(test)]
pub fn matching(conn: &Connection, owner: Id, by: SearchBy, term: &str) -> Result<RoaringTreemap> {
    matching_within(conn, owner, by, term, None, None)?.known(conn)
}

/// What a list's other filters admit, read only when asked (see [`matching_within`]): `None`
/// when they admit any link.
pub type Within<'a> = &'a dyn Fn() -> Result<Option<RoaringTreemap>>;

/// A term's matches: known, or a long term's candidates left for a list to check in its own
/// order.
pub enum Matches {
    Known(RoaringTreemap),
    Unchecked(Candidates),
}

impl Matches {
    /// Every match, the candidates checked.
    pub fn known(self, conn: &Connection) -> Result<RoaringTreemap> {
        match self {
            Matches::Known(set) => Ok(set),
            Matches::Unchecked(candidates) => candidates.checked(conn),
        }
    }
}

/// [`matching`], with the links checked one by one (a long term's candidates) only among
/// `within` when it is given: the answer is then the matches among those, and perhaps a few
/// others. A long term's candidates are left unchecked when there are enough for a list that
/// `asked` to check them in its own order.
pub fn matching_within(
    conn: &Connection,
    owner: Id,
    by: SearchBy,
    term: &str,
    within: Option<Within<'_>>,
    asked: Option<&Asked>,
) -> Result<Matches> {
    // A pair, a triple or a common term is one gram; a single character is every pair it
    // starts.
    let (row_field, from, to) = match term.chars().count() {
        1 => (field(by), term.to_owned(), format!("{term}{}", char::MAX)),
        2 => (field(by), term.to_owned(), term.to_owned()),
        SHORT => (TRIPLES + field(by), term.to_owned(), term.to_owned()),
        n if n > WHOLE_MAX => {
            return long::matching(conn, owner, by, term, within, asked);
        }
        _ => (COMMON + field(by), term.to_owned(), term.to_owned()),
    };
    let mut set = indexed(conn, owner, row_field, &from, &to)?;
    waiting(conn, owner, by, term, &mut set)?;
    Ok(Matches::Known(set))
}

/// The ids of `owner`'s links whose field `by` contains `term`, one [`indexed_term`] left to
/// the full-text index, when the rows of its triples answer it for less ([`long`]); `None`
/// leaves it there.
/// Its candidates are checked only among `within`, when given, and may be left unchecked for a
/// list that `asked` (see [`matching_within`]).
pub fn matching_by_triples(
    conn: &Connection,
    owner: Id,
    by: SearchBy,
    term: &str,
    within: Option<Within<'_>>,
    asked: Option<&Asked>,
) -> Result<Option<Matches>> {
    let folded: String = term.chars().map(fold).collect();
    long::matching_if_cheaper(conn, owner, by, &folded, within, asked)
}

/// The ids the index's rows of `owner` under `row_field` hold for the grams from `from` to
/// `to`: of the links it holds, as it took them in.
fn indexed(
    conn: &Connection,
    owner: Id,
    row_field: usize,
    from: &str,
    to: &str,
) -> Result<RoaringTreemap> {
    let mut highs: BTreeMap<u32, RoaringBitmap> = BTreeMap::new();
    conn.each(
        "SELECT block, ids FROM link_grams WHERE owner_id = ?1 AND field = ?2 \
         AND gram BETWEEN ?3 AND ?4",
        params![owner, row_field as i64, from, to],
        |row| {
            let block: i64 = row.get(0).map_err(db_error)?;
            let ids = decode(blob_at(row, 1)?)?;
            *highs.entry(high(block)).or_default() |= ids;
            Ok(())
        },
    )?;
    Ok(RoaringTreemap::from_bitmaps(highs))
}

/// Whether `text` contains the folded `term`, folded as the index folds; `folded` is room for
/// the folded text.
fn holds(text: Option<&str>, term: &str, folded: &mut String) -> bool {
    let Some(text) = text else {
        return false;
    };
    folded.clear();
    folded.extend(text.chars().map(fold));
    folded.contains(term)
}

/// Brings `set`, the matches of the folded `term` among the links the index holds, up to date
/// with the links it does not hold yet and those written since it took them in, each read as
/// it is.
fn waiting(
    conn: &Connection,
    owner: Id,
    by: SearchBy,
    term: &str,
    set: &mut RoaringTreemap,
) -> Result<()> {
    let mut folded = String::new();
    // The links not indexed yet are read as they are.
    let column = linkdeck_store::sql::column(by);
    let sql = format!("SELECT id, {column} FROM links WHERE id > ?1 AND owner_id = ?2");
    conn.each(&sql, params![upto(conn)?, owner], |row| {
        if holds(text_at(row, 1)?, term, &mut folded) {
            set.insert(row.get::<_, Id>(0).map_err(db_error)? as u64);
        }
        Ok(())
    })?;
    // The links written since the index took them in: what it says of them is stale.
    let sql = format!(
        "SELECT s.id, l.owner_id = ?1, l.{column} FROM link_grams_stale s \
         LEFT JOIN links l ON l.id = s.id"
    );
    conn.each(&sql, [owner], |row| {
        let id = row.get::<_, Id>(0).map_err(db_error)? as u64;
        let mine = row.get::<_, Option<bool>>(1).map_err(db_error)?;
        if mine == Some(true) && holds(text_at(row, 2)?, term, &mut folded) {
            set.insert(id);
        } else {
            set.remove(id);
        }
        Ok(())
    })
}

/// The ids of `owner`'s links the index does not hold as they are now: those above its
/// watermark, and those written since it took them in (of any owner: a reader checks).
fn waiting_ids(conn: &Connection, owner: Id) -> Result<RoaringTreemap> {
    let mut ids = RoaringTreemap::new();
    conn.each(
        "SELECT id FROM links WHERE id > ?1 AND owner_id = ?2 \
         UNION ALL SELECT id FROM link_grams_stale",
        params![upto(conn)?, owner],
        |row| {
            ids.insert(row.get::<_, Id>(0).map_err(db_error)? as u64);
            Ok(())
        },
    )?;
    Ok(ids)
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
    let upto = conn.one("SELECT upto FROM link_grams_upto", [], |r| r.get(0))?;
    Ok(upto.unwrap_or_default())
}

/// Folds what waits into the index once enough has gathered: links above the watermark, and
/// links written since the index took them in. Every write transaction ends with this
/// ([`Db`](crate::Db)'s write path), so the waiting sets, which every short
/// search reads, stay small.
pub fn settle(tx: &Connection) -> Result<()> {
    let upto = upto(tx)?;
    let last: Id = tx.row("SELECT ifnull(max(id), 0) FROM links", [], |r| r.get(0))?;
    if last - upto >= PENDING_MAX {
        index_new(tx, upto + 1, last)?;
        set_upto(tx, last)?;
    }
    let stale: Id = tx.row("SELECT count(*) FROM link_grams_stale", [], |r| r.get(0))?;
    if stale >= PENDING_MAX {
        fold_stale(tx)?;
    }
    common::refresh(tx, last)
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
    let common = Common::load(tx)?;
    let postings = || Postings::new(common.clone());
    let (mut gone, mut now) = (postings(), postings());
    let flush = |block: Id, gone: Postings, now: Postings| -> Result<()> {
        apply_postings(tx, block, gone, false)?;
        write(tx, block, now)
    };
    while let Some(row) = rows.next().map_err(db_error)? {
        let id: Id = row.get(0).map_err(db_error)?;
        let this = id >> BLOCK_BITS;
        if block != Some(this) {
            if let Some(done) = block {
                let gone = std::mem::replace(&mut gone, postings());
                flush(done, gone, std::mem::replace(&mut now, postings()))?;
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
    catch_up_with(tx, Common::load(tx)?)
}

/// [`catch_up`] on a schema from before common terms (the builds of migrations 4 and 11).
pub fn catch_up_before_common(tx: &Connection) -> Result<()> {
    catch_up_with(tx, Common::none())
}

fn catch_up_with(tx: &Connection, common: Arc<Common>) -> Result<()> {
    let upto = upto(tx)?;
    let last: Id = tx
        .query_row("SELECT ifnull(max(id), 0) FROM links", [], |r| r.get(0))
        .map_err(db_error)?;
    if last > upto {
        index_range(tx, upto + 1, last, || Postings::new(common.clone()))?;
        set_upto(tx, last)?;
    }
    Ok(())
}

fn set_upto(tx: &Connection, upto: Id) -> Result<()> {
    tx.run("UPDATE link_grams_upto SET upto = ?1", [upto])?;
    Ok(())
}

/// Indexes links written in bulk as they are staged, before they are inserted: they will take
/// the ids from one above the highest on, in order, so their texts need not be read back.
///
/// The gathering runs on a thread of its own: an import's writer is its bottleneck (the
/// full-text index and the links' own indexes), and the grams of its links are a large part of
/// what that thread did. Texts go over in handfuls. An import inserts its links a chunk at a
/// time and calls [`Batch::checkpoint`] after each: the blocks its links have filled come back
/// as bitmaps and are written, each row once; the block still filling stays with the thread
/// until the next checkpoint or [`Batch::finish`]. Written after every chunk, a block's
/// rows were rewritten three times over, and a block of URLs has some 20,000 triples.
pub struct Batch {
    first: Id,
    next: Id,
    /// Texts not yet handed to the gathering thread.
    waiting: Vec<Staged>,
    gatherer: Option<Gatherer>,
    /// The common terms chosen when the batch began: none are chosen until it has ended (a
    /// choice comes as a write transaction ends).
    common: Arc<Common>,
}

/// A staged link's id, owner and texts.
type Staged = (Id, Id, [Option<String>; 3]);

/// What the gathering thread is handed.
enum Handed {
    Texts(Vec<Staged>),
    /// Send back the blocks filled so far.
    Filled,
}

struct Gatherer {
    texts: SyncSender<Handed>,
    filled: Receiver<Vec<Bitmaps>>,
    rest: JoinHandle<Vec<Bitmaps>>,
}

/// Links handed to the gathering thread at a time, and how many handfuls may wait for it.
const HANDFUL: usize = 256;
const HANDFULS_WAITING: usize = 16;

fn stopped() -> Error {
    Error::Unavailable("the search index's gathering thread stopped".into())
}

impl Batch {
    /// For links that will get ids from `first` on.
    pub fn new(tx: &Connection, first: Id) -> Result<Batch> {
        Ok(Batch {
            first,
            next: first,
            waiting: Vec::new(),
            gatherer: None,
            common: Common::load(tx)?,
        })
    }

    /// The id the next staged link will take.
    pub fn next_id(&self) -> Id {
        self.next
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
            None => self.gatherer.insert(Gatherer::start(self.common.clone())?),
        };
        gatherer
            .texts
            .send(Handed::Texts(texts))
            .map_err(|_| stopped())
    }

    /// Checks that the staged links took the ids they were gathered under, up to `last`.
    fn inserted_up_to(&self, last: Id) -> Result<()> {
        if last != self.next - 1 {
            return Err(Error::Unavailable(format!(
                "the new links took ids up to {last}, not {} as the search index expected",
                self.next - 1
            )));
        }
        Ok(())
    }

    /// The links staged so far were inserted, the last with id `last`, and more will follow:
    /// the blocks they filled are written and the watermark moves past them.
    pub fn checkpoint(&mut self, tx: &Connection, last: Id) -> Result<()> {
        self.inserted_up_to(last)?;
        if !self.waiting.is_empty() {
            self.hand_over()?;
        }
        let Some(gatherer) = self.gatherer.as_ref() else {
            return Ok(());
        };
        gatherer.texts.send(Handed::Filled).map_err(|_| stopped())?;
        let filled = gatherer.filled.recv().map_err(|_| stopped())?;
        for bitmaps in filled {
            write_bitmaps(tx, bitmaps)?;
        }
        self.take_in_earlier(tx)?;
        // Every link below the block still filling is indexed now.
        let filling = (last >> BLOCK_BITS) << BLOCK_BITS;
        if filling - 1 > upto(tx)? {
            set_upto(tx, filling - 1)?;
        }
        Ok(())
    }

    /// Indexes the links created one by one before the staged ones and still waiting, once.
    fn take_in_earlier(&mut self, tx: &Connection) -> Result<()> {
        let upto = upto(tx)?;
        if upto < self.first - 1 {
            index_new(tx, upto + 1, self.first - 1)?;
            set_upto(tx, self.first - 1)?;
        }
        Ok(())
    }

    /// Ends a batch carried over chunks ([`Batch::checkpoint`]) after its last chunk was
    /// inserted: the index covers every staged link now.
    pub fn end(self, tx: &Connection) -> Result<()> {
        let last = self.next - 1;
        self.finish(tx, last)
    }

    /// Every staged link was inserted, the last with id `last`: the index covers them now.
    pub fn finish(mut self, tx: &Connection, last: Id) -> Result<()> {
        if self.next == self.first {
            return Ok(());
        }
        self.inserted_up_to(last)?;
        if !self.waiting.is_empty() {
            self.hand_over()?;
        }
        if let Some(Gatherer { texts, rest, .. }) = self.gatherer.take() {
            drop(texts);
            let blocks = rest.join().map_err(|_| {
                Error::Unavailable("the search index's gathering thread failed".into())
            })?;
            for bitmaps in blocks {
                write_bitmaps(tx, bitmaps)?;
            }
        }
        self.take_in_earlier(tx)?;
        let upto = upto(tx)?;
        set_upto(tx, upto.max(last))
    }
}

impl Gatherer {
    fn start(common: Arc<Common>) -> Result<Gatherer> {
        let (texts, receiver) = sync_channel::<Handed>(HANDFULS_WAITING);
        let (filled_sender, filled) = sync_channel(1);
        let rest = std::thread::Builder::new()
            .name("index-grams".into())
            .spawn(move || gather(&receiver, &filled_sender, &common))
            .map_err(|e| Error::Unavailable(format!("cannot start a thread: {e}")))?;
        Ok(Gatherer {
            texts,
            filled,
            rest,
        })
    }
}

/// The gathering thread: the grams of every link it is handed, a block's postings at a time.
/// Filled blocks go back when asked for; the rest when the sender is dropped.
fn gather(
    receiver: &Receiver<Handed>,
    filled: &SyncSender<Vec<Bitmaps>>,
    common: &Arc<Common>,
) -> Vec<Bitmaps> {
    let mut done = Vec::new();
    let mut current: Option<(Id, Postings)> = None;
    for handed in receiver.iter() {
        let texts = match handed {
            Handed::Texts(texts) => texts,
            Handed::Filled => {
                if filled.send(std::mem::take(&mut done)).is_err() {
                    break;
                }
                continue;
            }
        };
        for (id, owner, texts) in texts {
            let block = id >> BLOCK_BITS;
            if current.as_ref().is_none_or(|(b, _)| *b != block)
                && let Some((b, postings)) = current.replace((block, Postings::new(common.clone())))
            {
                done.push(into_bitmaps(b, postings));
            }
            if let Some((_, postings)) = current.as_mut() {
                postings.add(owner, id as u16, texts.each_ref().map(Option::as_deref));
            }
        }
    }
    done.extend(current.map(|(b, postings)| into_bitmaps(b, postings)));
    done
}

/// The stored texts of a link, in field order: title, alias, url.
pub type Texts<'a> = [Option<&'a str>; 3];

fn apply_postings(tx: &Connection, block: Id, postings: Postings, add: bool) -> Result<()> {
    if add {
        return write(tx, block, postings);
    }
    let start = block << BLOCK_BITS;
    for (owner, field, gram, ids) in postings.drain(block) {
        edit(tx, owner, field, &gram, start, |stored| *stored -= ids)?;
    }
    Ok(())
}

/// Rewrites the row of `gram` holding `id`'s block with `change` applied; an empty row goes.
/// A row found is rewritten by its rowid: one descent of the table, where an upsert by key
/// descended the key's index again.
fn edit(
    tx: &Connection,
    owner: Id,
    field: usize,
    gram: &str,
    id: Id,
    change: impl FnOnce(&mut RoaringBitmap),
) -> Result<()> {
    let block = id >> BLOCK_BITS;
    let stored: Option<(i64, Vec<u8>)> = tx.one(
        "SELECT rowid, ids FROM link_grams WHERE owner_id = ?1 AND field = ?2 AND gram = ?3 \
         AND block = ?4",
        params![owner, field as i64, gram, block],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let (rowid, mut ids) = match stored {
        Some((rowid, blob)) => (Some(rowid), decode(&blob)?),
        None => (None, RoaringBitmap::new()),
    };
    change(&mut ids);
    match (rowid, ids.is_empty()) {
        (None, true) => {}
        (Some(rowid), true) => {
            tx.prepare_cached("DELETE FROM link_grams WHERE rowid = ?1")
                .map_err(db_error)?
                .execute([rowid])
                .map_err(db_error)?;
        }
        (Some(rowid), false) => {
            tx.prepare_cached("UPDATE link_grams SET ids = ?2 WHERE rowid = ?1")
                .map_err(db_error)?
                .execute(params![rowid, encode(&mut ids)?])
                .map_err(db_error)?;
        }
        (None, false) => {
            tx.prepare_cached(
                "INSERT INTO link_grams (owner_id, field, gram, block, ids) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .map_err(db_error)?
            .execute(params![owner, field as i64, gram, block, encode(&mut ids)?])
            .map_err(db_error)?;
        }
    }
    Ok(())
}

/// Adds the links with ids in `first..=last` to the index, every gram of them.
fn index_new(tx: &Connection, first: Id, last: Id) -> Result<()> {
    let common = Common::load(tx)?;
    index_range(tx, first, last, || Postings::new(common.clone()))
}

/// Builds the rows of newly chosen common terms from every link up to `last`, leaving every
/// other gram's rows as they are.
fn index_common(tx: &Connection, last: Id, fresh: &Arc<Common>) -> Result<()> {
    index_range(tx, 1, last, || Postings::common_only(fresh.clone()))
}

/// Adds what `postings` gathers of the links with ids in `first..=last` to the index, a block
/// at a time: each row of the block is rewritten once, whatever the number of links.
fn index_range(
    tx: &Connection,
    first: Id,
    last: Id,
    postings: impl Fn() -> Postings,
) -> Result<()> {
    let mut from = first.max(0);
    while from <= last {
        let block = from >> BLOCK_BITS;
        let to = (((block + 1) << BLOCK_BITS) - 1).min(last);
        let mut postings = postings();
        tx.each(
            "SELECT id, owner_id, title, alias, url FROM links WHERE id BETWEEN ?1 AND ?2 \
             ORDER BY id",
            params![from, to],
            |row| {
                let text = |i| text_at(row, i);
                let id: Id = row.get(0).map_err(db_error)?;
                let owner: Id = row.get(1).map_err(db_error)?;
                postings.add(owner, id as u16, [text(2)?, text(3)?, text(4)?]);
                Ok(())
            },
        )?;
        write(tx, block, postings)?;
        from = to + 1;
    }
    Ok(())
}

/// Adds the links gathered for `block` to the index: each gram's row is rewritten once.
fn write(tx: &Connection, block: Id, postings: Postings) -> Result<()> {
    write_bitmaps(tx, into_bitmaps(block, postings))
}

fn into_bitmaps(block: Id, postings: Postings) -> Bitmaps {
    Bitmaps {
        block,
        grams: postings.drain(block),
    }
}

/// The links of one block for each gram: owner, field, gram and their ids.
struct Bitmaps {
    block: Id,
    grams: Vec<Gram>,
}

fn encode(ids: &mut RoaringBitmap) -> Result<Vec<u8>> {
    ids.optimize();
    let mut blob = Vec::with_capacity(ids.serialized_size());
    ids.serialize_into(&mut blob)
        .map_err(|e| Error::Unavailable(format!("cannot encode the short-search index: {e}")))?;
    Ok(blob)
}

/// Adds each gram's ids to its row. A block an import fills is usually new to the index, so a
/// row is first inserted as it is, and read and merged only when it was there: one descent of
/// the table instead of two. Rows go in key order, a walk through the table rather than jumps.
fn write_bitmaps(tx: &Connection, bitmaps: Bitmaps) -> Result<()> {
    let block = bitmaps.block;
    for (owner, field, gram, mut ids) in bitmaps.grams {
        let blob = encode(&mut ids)?;
        let inserted = tx
            .prepare_cached(
                "INSERT OR IGNORE INTO link_grams (owner_id, field, gram, block, ids) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .map_err(db_error)?
            .execute(params![owner, field as i64, gram, block, blob])
            .map_err(db_error)?;
        if inserted == 0 {
            edit(tx, owner, field, &gram, block << BLOCK_BITS, |stored| {
                *stored |= ids
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;
    use rusqlite::Transaction;

    use super::*;
    use crate::links;
    use crate::schema;

    fn database() -> Connection {
        schema::in_memory()
    }

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

    // Few characters, so grams repeat; upper case and a non-ASCII pair to fold; a prefix in
    // many texts, so longer terms become common.
    // Some repeated, so that terms longer than the full-text index is asked for whole match
    // (and their triples are in texts that do not hold them).
    fn text() -> impl Strategy<Value = String> {
        let text = proptest::string::string_regex("[abAB/éÉ]{0,5}").unwrap();
        let repeats = prop_oneof![3 => Just(1), 1 => 2..12usize];
        (any::<bool>(), text, repeats).prop_map(|(prefixed, t, repeats)| {
            let t = t.repeat(repeats);
            match prefixed {
                true => format!("aBé/{t}"),
                false => t,
            }
        })
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

    fn row(owner: Id, [title, alias, url]: &[String; 3]) -> linkdeck_store::LinkRow {
        let mut row = linkdeck_store::LinkRow::blank(owner, jiff::Timestamp::UNIX_EPOCH);
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
                // In chunks, as an import writes them: the index's batch carries on from one
                // to the next and ends after the last.
                let mut grams = None;
                for chunk in texts.chunks(CHUNK) {
                    let mut staged = match grams.take() {
                        Some(grams) => links::stage_start_after(tx, grams).unwrap(),
                        None => links::stage_start(tx).unwrap(),
                    };
                    for text in chunk {
                        let none = linkdeck_store::Counted::default();
                        links::stage(tx, &mut staged, &row(*owner, text), none).unwrap();
                    }
                    grams = Some(links::stage_insert_more(tx, staged).unwrap().1);
                }
                grams.unwrap().end(tx).unwrap();
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

    /// Links an import stages at a time in these tests.
    const CHUNK: usize = 40;

    /// The texts of `rows`, lower-cased, as characters.
    fn lowered(rows: &[(Id, Option<String>)]) -> impl Iterator<Item = Vec<char>> + '_ {
        rows.iter().map(|(_, text)| {
            text.as_deref()
                .unwrap_or_default()
                .to_lowercase()
                .chars()
                .collect()
        })
    }

    /// `piece`, and `piece` with its character at `at` changed.
    fn and_changed(piece: &[char], at: usize) -> [String; 2] {
        let mut changed = piece.to_vec();
        changed[at] = if changed[at] == 'a' { 'b' } else { 'a' };
        [piece.iter().collect(), changed.iter().collect()]
    }

    /// Terms longer than the full-text index is asked for whole, from the texts of `rows`: the
    /// start and the end of each long one, and each of those with a character changed.
    fn long_terms(rows: &[(Id, Option<String>)]) -> Vec<String> {
        let mut terms = BTreeSet::new();
        for chars in lowered(rows).filter(|chars| chars.len() > WHOLE_MAX) {
            for piece in [&chars[..=WHOLE_MAX], &chars[chars.len() - WHOLE_MAX - 1..]] {
                terms.extend(and_changed(piece, WHOLE_MAX / 2));
            }
        }
        terms.into_iter().collect()
    }

    /// Pieces of four characters up to [`WHOLE_MAX`] from the start and the end of each text,
    /// and each of those with its last character changed: terms the full-text index would be
    /// asked unless their triples answer them.
    fn middle_terms(rows: &[(Id, Option<String>)]) -> Vec<String> {
        let mut terms = BTreeSet::new();
        for chars in lowered(rows) {
            for len in 4..=chars.len().min(WHOLE_MAX) {
                for piece in [&chars[..len], &chars[chars.len() - len..]] {
                    terms.extend(and_changed(piece, len - 1));
                }
            }
        }
        terms.into_iter().collect()
    }

    /// Every term of up to three characters, every common term chosen and long terms from the
    /// texts: its matches by the index and by reading every link, for both owners; and terms of
    /// middle length, by their triples (whether or not that is the cheaper way).
    fn check(conn: &Connection) -> std::result::Result<(), TestCaseError> {
        let alphabet = ['a', 'b', '/', 'é'];
        let mut terms: Vec<String> = alphabet.iter().map(|c| c.to_string()).collect();
        for a in alphabet {
            for b in alphabet {
                terms.push(format!("{a}{b}"));
                for c in alphabet {
                    terms.push(format!("{a}{b}{c}"));
                }
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
                let chosen = common::Common::load(conn)
                    .unwrap()
                    .grams(field(by))
                    .to_vec();
                // Every owner's, so that another owner's texts are looked for too.
                let everyone: Vec<(Id, Option<String>)> = conn
                    .prepare(&format!("SELECT id, {} FROM links", by.as_str()))
                    .unwrap()
                    .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap();
                let long = long_terms(&everyone);
                let expected = |term: &str| -> BTreeSet<u64> {
                    rows.iter()
                        .filter(|(_, t)| {
                            t.as_deref()
                                .is_some_and(|t| t.to_lowercase().contains(term))
                        })
                        .map(|(id, _)| *id as u64)
                        .collect()
                };
                for term in terms.iter().chain(&chosen).chain(&long) {
                    let found: BTreeSet<u64> = matching(conn, owner, by, term)
                        .unwrap()
                        .into_iter()
                        .collect();
                    prop_assert_eq!(found, expected(term), "owner {} {:?} {:?}", owner, by, term);
                }
                for term in middle_terms(&everyone) {
                    let found: BTreeSet<u64> = long::matching_always(conn, owner, by, &term)
                        .unwrap()
                        .into_iter()
                        .collect();
                    prop_assert_eq!(
                        found,
                        expected(&term),
                        "owner {} {:?} {:?}",
                        owner,
                        by,
                        term
                    );
                }
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn the_index_agrees_with_the_texts_after_any_writes(ops in proptest::collection::vec(op(), 1..60)) {
            let mut conn = database();
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
        let mut conn = database();
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

    /// Links with `url`s for owner 1, written and settled as the service writes them.
    fn create(conn: &mut Connection, urls: &[String]) -> Vec<Id> {
        let tx = conn.transaction().unwrap();
        let ids = urls
            .iter()
            .map(|url| {
                links::insert(&tx, &row(1, &[String::new(), "x".into(), url.clone()])).unwrap()
            })
            .collect();
        settle(&tx).unwrap();
        tx.commit().unwrap();
        ids
    }

    fn found(conn: &Connection, term: &str) -> Option<Vec<Id>> {
        let term = indexed_term(conn, SearchBy::Url, term).unwrap()?;
        let set = matching(conn, 1, SearchBy::Url, &term).unwrap();
        Some(set.iter().map(|id| id as Id).collect())
    }

    /// Once there are enough links, the longer terms most of them contain are answered by the
    /// index, rare ones are not; the writes after that keep their rows, and when the links
    /// have doubled, terms common by then are chosen too.
    #[test]
    fn common_longer_terms_are_chosen_and_kept_in_step() {
        let mut conn = database();
        conn.execute_batch("INSERT INTO owners (id, name, created_at) VALUES (1, 'me', 0);")
            .unwrap();
        let urls: Vec<String> = (0..20).map(|i| format!("https://s{i}.example/")).collect();
        let mut ids = create(&mut conn, &urls);
        assert_eq!(found(&conn, "https"), None, "too few links yet to choose");
        ids.extend(create(&mut conn, &urls[..10]));
        assert_eq!(found(&conn, "HTTPS").as_deref(), Some(&ids[..]));
        assert_eq!(found(&conn, "ps://s").as_deref(), Some(&ids[..]));
        assert_eq!(
            found(&conn, "s13."),
            None,
            "in one link of thirty: the full-text index's"
        );
        // An edit, a delete and a new link: read directly until the index takes them in, then
        // from their rows.
        let tx = conn.transaction().unwrap();
        let mut edited = row(1, &[String::new(), "y".into(), "ftp://elsewhere".into()]);
        edited.alias = "edited".into();
        links::update(&tx, ids[3], &edited).unwrap();
        delete(&tx, ids[5]);
        let new = links::insert(
            &tx,
            &row(1, &[String::new(), "z".into(), "HTTPS://NEW".into()]),
        )
        .unwrap();
        tx.commit().unwrap();
        let mut expected: Vec<Id> = ids
            .iter()
            .copied()
            .filter(|&id| id != ids[3] && id != ids[5])
            .collect();
        expected.push(new);
        assert_eq!(found(&conn, "https").as_deref(), Some(&expected[..]));
        check(&conn).unwrap();
        let tx = conn.transaction().unwrap();
        catch_up(&tx).unwrap();
        fold_stale(&tx).unwrap();
        tx.commit().unwrap();
        assert_eq!(found(&conn, "https").as_deref(), Some(&expected[..]));
        check(&conn).unwrap();
        // Twice as many links, most of them on a new host: it is chosen as well.
        let more: Vec<String> = (0..40).map(|i| format!("http://shop.test/{i}")).collect();
        let shop = create(&mut conn, &more);
        assert_eq!(found(&conn, "shop.test").as_deref(), Some(&shop[..]));
        assert_eq!(found(&conn, "https").as_deref(), Some(&expected[..]));
        check(&conn).unwrap();
    }

    #[test]
    fn a_term_keeps_its_length_when_folded() {
        assert_eq!(short_term("Ab").as_deref(), Some("ab"));
        assert_eq!(short_term("ÉS").as_deref(), Some("és"));
        // 'İ' lower-cases to two characters; it is kept as it is rather than lengthened.
        assert_eq!(short_term("İ").as_deref(), Some("İ"));
        assert_eq!(short_term("AbÉ").as_deref(), Some("abé"));
        assert_eq!(short_term("abcd"), None);
        assert_eq!(short_term(""), None);
    }
}
