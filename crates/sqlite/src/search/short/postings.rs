//! The grams of one block's links, gathered before they are written: each pair of characters
//! (and a last character with [`END`]), each triple and each chosen common term
//! ([`common`](super::common)), by owner and field, with the ids that hold it. A block's rows
//! are then rewritten once, however many of its links were gathered.

use std::collections::HashMap;
use std::sync::Arc;

use roaring::RoaringBitmap;
use rustc_hash::FxHashMap;

use super::common::Common;
use super::{BLOCK_BITS, COMMON, END, TRIPLES, Texts, each_gram, fold, gram_text};
use linkdeck_domain::Id;

/// ASCII pairs: a pair of characters at 128·first + second.
const ASCII_SLOTS: usize = 128 * 128;

/// The grams gathered while indexing one block. A pair keeps a bit per id of the block (setting
/// a bit twice is harmless, and a block's bits become a bitmap container in one step); nearly
/// every text is ASCII, and those pairs find their bits through a table, byte by byte, the
/// rest through a map. Triples are too many for a bitmap each (tens of thousands in a block of
/// URLs): each keeps the ids that hold it as a list, in the order gathered, and so does each
/// common term.
pub(super) struct Postings {
    owners: HashMap<Id, OwnerPostings>,
    /// The bits of every pair met, [`BLOCK_BYTES`] each, in the order met.
    bits: Vec<u8>,
    /// A text's folded characters, kept to spare an allocation per text.
    folded: Vec<char>,
    /// The same as a string, for the common terms' finder.
    folded_text: String,
    common: Arc<Common>,
    /// Only the common terms: terms just chosen, gathered over links the index already holds.
    common_only: bool,
}

/// A gram's row key without its block — owner, the row's field, the gram — and its ids.
pub(super) type Gram = (Id, usize, String, RoaringBitmap);

const NONE: u32 = u32::MAX;

struct OwnerPostings {
    /// For each field and ASCII slot, its bits in `Postings::bits`, or `NONE`.
    ascii: Vec<u32>,
    other: FxHashMap<(usize, [char; 2]), u32>,
    /// For each field and triple, the low 16 bits of the ids holding it, ascending.
    triples: FxHashMap<(u8, [char; 3]), Vec<u16>>,
    /// For each field and common term (by its number in [`Common`]), the same.
    common: FxHashMap<(u8, u32), Vec<u16>>,
}

/// Sets bit `low` of the pair whose bits are at `slot` (allocating them on first use).
fn set(bits: &mut Vec<u8>, slot: &mut u32, low: u16) {
    if *slot == NONE {
        *slot = (bits.len() / BLOCK_BYTES) as u32;
        bits.resize(bits.len() + BLOCK_BYTES, 0);
    }
    bits[*slot as usize * BLOCK_BYTES + usize::from(low >> 3)] |= 1 << (low & 7);
}

/// Notes id `low` under a triple. Ids come in ascending order, so a repeat of the triple in
/// the same text is the list's last entry.
fn note(ids: &mut Vec<u16>, low: u16) {
    if ids.last() != Some(&low) {
        ids.push(low);
    }
}

/// The bytes of a block's bits: one bit per id.
const BLOCK_BYTES: usize = 1 << (BLOCK_BITS - 3);

impl Postings {
    /// Gathers every gram, `common`'s terms among them.
    pub fn new(common: Arc<Common>) -> Postings {
        Postings {
            owners: HashMap::new(),
            bits: Vec::new(),
            folded: Vec::new(),
            folded_text: String::new(),
            common,
            common_only: false,
        }
    }

    /// Gathers `common`'s terms alone.
    pub fn common_only(common: Arc<Common>) -> Postings {
        Postings {
            common_only: true,
            ..Postings::new(common)
        }
    }

    /// Gathers the grams of a link's texts. Links must come in ascending id order (`low` the
    /// low 16 bits of the id).
    pub fn add(&mut self, owner: Id, low: u16, texts: Texts<'_>) {
        let lists = self.owners.entry(owner).or_insert_with(|| OwnerPostings {
            ascii: Vec::new(),
            other: FxHashMap::default(),
            triples: FxHashMap::default(),
            common: FxHashMap::default(),
        });
        let bits = &mut self.bits;
        for (field, text) in texts.into_iter().enumerate() {
            let Some(text) = text else { continue };
            let common = &mut lists.common;
            self.common
                .each_in(field, text, &mut self.folded_text, |i| {
                    note(common.entry((field as u8, i)).or_default(), low);
                });
            if self.common_only {
                continue;
            }
            if lists.ascii.is_empty() {
                lists.ascii = vec![NONE; 3 * ASCII_SLOTS];
            }
            let ascii = &mut lists.ascii[field * ASCII_SLOTS..(field + 1) * ASCII_SLOTS];
            let triples = &mut lists.triples;
            if text.is_ascii() {
                // The same grams as `each_gram` and `each_triple`, without decoding characters.
                let (mut a, mut b) = (None, None);
                for c in text.bytes().map(|c| c.to_ascii_lowercase()) {
                    if let Some(p) = b {
                        set(bits, &mut ascii[128 * usize::from(p) + usize::from(c)], low);
                        if let Some(q) = a {
                            let key = (field as u8, [q, p, c].map(char::from));
                            note(triples.entry(key).or_default(), low);
                        }
                    }
                    (a, b) = (b, Some(c));
                }
                if let Some(last) = b {
                    set(
                        bits,
                        &mut ascii[128 * usize::from(last) + END as usize],
                        low,
                    );
                }
                continue;
            }
            each_gram(text, |a, b| match ascii_slot(a, b) {
                Some(slot) => set(bits, &mut ascii[slot], low),
                None => set(
                    bits,
                    lists.other.entry((field, [a, b])).or_insert(NONE),
                    low,
                ),
            });
            let folded = &mut self.folded;
            folded.clear();
            folded.extend(text.chars().map(fold));
            for w in folded.windows(3) {
                note(
                    triples
                        .entry((field as u8, [w[0], w[1], w[2]]))
                        .or_default(),
                    low,
                );
            }
        }
    }

    /// Every gram met in `block`: owner, the row's field (a triple's is [`TRIPLES`] on), the
    /// gram, and the ids of its links, in the order of the table's key, so that writing them
    /// walks through the table rather than jumping about (tens of thousands of rows for a block
    /// of URLs).
    pub fn drain(self, block: Id) -> Vec<Gram> {
        let start = (block << BLOCK_BITS) as u32;
        let mut grams = Vec::new();
        for (owner, lists) in self.owners {
            let ascii = lists
                .ascii
                .iter()
                .copied()
                .enumerate()
                .filter(|&(_, slot)| slot != NONE)
                .map(|(i, slot)| (i / ASCII_SLOTS, ascii_gram(i % ASCII_SLOTS), slot));
            let other =
                (lists.other.into_iter()).map(|((f, [a, b]), slot)| (f, gram_text(a, b), slot));
            for (field, gram, slot) in ascii.chain(other) {
                let at = slot as usize * BLOCK_BYTES;
                let ids = RoaringBitmap::from_lsb0_bytes(start, &self.bits[at..at + BLOCK_BYTES]);
                grams.push((owner, field, gram, ids));
            }
            for ((field, triple), lows) in lists.triples {
                let ids = bitmap(start, &lows);
                grams.push((
                    owner,
                    TRIPLES + usize::from(field),
                    triple.iter().collect(),
                    ids,
                ));
            }
            for ((field, i), lows) in lists.common {
                let field = usize::from(field);
                let ids = bitmap(start, &lows);
                let gram = self.common.gram(field, i).to_owned();
                grams.push((owner, COMMON + field, gram, ids));
            }
        }
        grams.sort_unstable_by(|a, b| (a.0, a.1, &a.2).cmp(&(b.0, b.1, &b.2)));
        grams
    }
}

/// The ids of a block starting at `start` from their low bits, ascending.
fn bitmap(start: u32, lows: &[u16]) -> RoaringBitmap {
    let ids = lows.iter().map(|&low| start + u32::from(low));
    RoaringBitmap::from_sorted_iter(ids.clone())
        // Not reached: links are added in ascending order.
        .unwrap_or_else(|_| ids.collect())
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
    use super::*;

    #[test]
    fn ascii_slots_name_their_grams() {
        for (a, b) in [('a', END), ('/', 'z'), ('0', '0')] {
            let slot = ascii_slot(a, b).unwrap();
            assert_eq!(ascii_gram(slot), gram_text(a, b));
        }
        assert_eq!(ascii_slot('é', END), None);
        assert_eq!(ascii_slot('a', 'é'), None);
    }

    /// The ASCII path and the general one gather the same grams.
    #[test]
    fn ascii_and_other_texts_give_the_same_grams() {
        let grams = |text: &str| {
            let mut p = Postings::new(Common::none());
            p.add(1, 7, [Some(text), None, None]);
            let mut g: Vec<(usize, String)> = p
                .drain(0)
                .into_iter()
                .map(|(_, field, gram, ids)| {
                    assert_eq!(ids.iter().collect::<Vec<_>>(), [7]);
                    (field, gram)
                })
                .collect();
            g.sort();
            g
        };
        let owned = |g: &[(usize, &str)]| -> Vec<(usize, String)> {
            let mut g: Vec<_> = g.iter().map(|&(f, g)| (f, g.to_owned())).collect();
            g.sort();
            g
        };
        let t = TRIPLES;
        assert_eq!(
            grams("AbaBA"),
            owned(&[(0, "ab"), (0, "ba"), (0, "a\0"), (t, "aba"), (t, "bab")])
        );
        // One non-ASCII character: the general path, which folds it too.
        assert_eq!(
            grams("AbaBAÉ"),
            owned(&[
                (0, "ab"),
                (0, "ba"),
                (0, "aé"),
                (0, "é\0"),
                (t, "aba"),
                (t, "bab"),
                (t, "baé")
            ])
        );
    }
}
