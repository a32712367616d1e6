//! One day of traffic (UTC) of one link, space, domain or account: clicks per hour, and for each
//! dimension the clicks per value per hour. This is the unit the rollup tables store, as a
//! compact blob, and the unit the click writer merges into them.
//!
//! Values are codes: [`NONE`] (unknown, or direct for referrers), [`OTHER`] (too many or too long
//! to keep), or an interned value's id + 2 (see `values`). Each dimension keeps at most
//! [`MAX_VALUES`] values a day; past that, the smallest is folded into [`OTHER`] to make room,
//! so a flood of junk values cannot push out the real ones nor grow a row without bound.
//!
//! The blob, version 1 (all numbers LEB128 varints):
//! ```text
//! version(=1) | hour mask (24 bits) | clicks of each set hour
//! per dimension: n | n × (code delta, day total) | detail length | detail
//! detail: per value, its hour if all its clicks fell in one hour, else 24 + its hour mask
//!         followed by the clicks of each set hour; left out, with its length, when the day
//!         has one active hour (which is then every value's)
//! ```
//! A reader that needs whole days skips the detail by its length. A blob may end after any
//! dimension: those after it (added since the day was written, as `rule` was) hold nothing.

use linkdeck_domain::Dimension;

pub const NONE: u64 = 0;
pub const OTHER: u64 = 1;
/// Values kept per dimension per day and row.
pub const MAX_VALUES: usize = 256;
const DIMS: usize = Dimension::ALL.len();
/// The rule that sent a visit, whose "none" is not stored (see [`DayTraffic::add_value`]).
pub const RULE: usize = Dimension::Rule as usize;
const VERSION: u8 = 1;
const ALL_HOURS: u32 = (1 << 24) - 1;

/// Clicks of one value, per hour of the day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub code: u64,
    pub hours: [u32; 24],
}

impl Entry {
    fn new(code: u64) -> Entry {
        Entry {
            code,
            hours: [0; 24],
        }
    }

    pub fn total(&self) -> u64 {
        self.hours.iter().map(|&n| u64::from(n)).sum()
    }

    fn mask(&self) -> u32 {
        mask_of(&self.hours)
    }
}

fn mask_of(hours: &[u32; 24]) -> u32 {
    hours
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .fold(0, |m, (h, _)| m | 1 << h)
}

fn add_hours(into: &mut [u32; 24], from: &[u32; 24]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a = a.saturating_add(*b);
    }
}

fn sub_hours(from: &mut [u32; 24], what: &[u32; 24]) {
    for (a, b) in from.iter_mut().zip(what) {
        *a = a.saturating_sub(*b);
    }
}

/// One day of one row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DayTraffic {
    pub hours: [u32; 24],
    /// Per dimension (in [`Dimension::ALL`] order), sorted by code.
    pub dims: [Vec<Entry>; DIMS],
}

impl DayTraffic {
    pub fn clicks(&self) -> u64 {
        self.hours.iter().map(|&n| u64::from(n)).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.hours.iter().all(|&n| n == 0)
    }

    /// Counts `n` visits in `hour` with these value codes.
    pub fn add(&mut self, hour: usize, codes: [u64; DIMS], n: u32) {
        self.hours[hour] = self.hours[hour].saturating_add(n);
        for (dim, code) in codes.into_iter().enumerate() {
            let mut hours = [0; 24];
            hours[hour] = n;
            self.add_value(dim, code, &hours);
        }
    }

    /// Adds every click of `other`.
    pub fn merge(&mut self, other: &DayTraffic) {
        add_hours(&mut self.hours, &other.hours);
        for (dim, entries) in other.dims.iter().enumerate() {
            for e in entries {
                self.add_value(dim, e.code, &e.hours);
            }
        }
    }

    /// Takes away every click of `other` (a link leaving a space, or deleted). A value this row
    /// had already folded into [`OTHER`] is taken from there; counts never go below zero.
    pub fn subtract(&mut self, other: &DayTraffic) {
        sub_hours(&mut self.hours, &other.hours);
        for (dim, entries) in other.dims.iter().enumerate() {
            for e in entries {
                let list = &mut self.dims[dim];
                let code = match list.binary_search_by_key(&e.code, |x| x.code) {
                    Ok(_) => e.code,
                    Err(_) => OTHER,
                };
                if let Ok(i) = list.binary_search_by_key(&code, |x| x.code) {
                    sub_hours(&mut list[i].hours, &e.hours);
                    if list[i].total() == 0 {
                        list.remove(i);
                    }
                }
            }
        }
    }

    /// Adds clicks per hour of one value (without touching the day's own hours).
    pub fn add_value(&mut self, dim: usize, code: u64, hours: &[u32; 24]) {
        // Most visits are sent by no rule: the day's clicks less its rules' say how many, and
        // a link without rules keeps the blob it had before rules were counted.
        if dim == RULE && code == NONE {
            return;
        }
        let list = &mut self.dims[dim];
        let kept = list.len() - usize::from(list.first().is_some_and(|e| e.code == OTHER));
        match list.binary_search_by_key(&code, |e| e.code) {
            Ok(i) => add_hours(&mut list[i].hours, hours),
            Err(i) if kept < MAX_VALUES || code == OTHER => {
                let mut e = Entry::new(code);
                e.hours = *hours;
                list.insert(i, e);
            }
            Err(_) => {
                // Full: the smallest value (the newcomer included) goes to OTHER.
                let incoming: u64 = hours.iter().map(|&n| u64::from(n)).sum();
                let smallest = list
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| e.code != OTHER)
                    .min_by_key(|(_, e)| e.total())
                    .map(|(i, e)| (i, e.total()));
                match smallest {
                    Some((i, total)) if total <= incoming => {
                        let evicted = list.remove(i);
                        self.add_value(dim, OTHER, &evicted.hours);
                        self.add_value(dim, code, hours);
                    }
                    _ => self.add_value(dim, OTHER, hours),
                }
            }
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.dims.iter().map(Vec::len).sum::<usize>() * 4);
        self.encode_into(&mut out, &mut Vec::new());
        out
    }

    /// Writes the blob into `out` (cleared first), with `scratch` as room for the hourly
    /// detail: a writer that keeps both allocates nothing per row.
    pub fn encode_into(&self, out: &mut Vec<u8>, scratch: &mut Vec<u8>) {
        out.clear();
        out.push(VERSION);
        let day_mask = mask_of(&self.hours);
        put(out, u64::from(day_mask));
        for n in self.hours.iter().filter(|&&n| n > 0) {
            put(out, u64::from(*n));
        }
        // With one active hour the reader knows every value's hour (a value left elsewhere by a
        // lossy subtraction is read as that hour's).
        let single_hour = day_mask.count_ones() <= 1;
        // Empty dimensions at the end are left out, as a reader takes them: a day without
        // rules is written as it was before they were counted.
        let written = self
            .dims
            .iter()
            .rposition(|entries| entries.iter().any(|e| e.total() > 0))
            .map_or(0, |last| last + 1);
        for entries in &self.dims[..written] {
            let kept = || entries.iter().filter(|e| e.total() > 0);
            put(out, kept().count() as u64);
            let mut prev = 0;
            for e in kept() {
                put(out, e.code - prev);
                put(out, e.total());
                prev = e.code;
            }
            if single_hour {
                continue;
            }
            scratch.clear();
            for e in kept() {
                let mask = e.mask();
                if mask.count_ones() == 1 {
                    put(scratch, u64::from(mask.trailing_zeros()));
                } else {
                    put(scratch, 24 + u64::from(mask));
                    for n in e.hours.iter().filter(|&&n| n > 0) {
                        put(scratch, u64::from(*n));
                    }
                }
            }
            put(out, scratch.len() as u64);
            out.extend_from_slice(scratch);
        }
    }

    /// Empties the day, keeping its room.
    pub fn clear(&mut self) {
        self.hours = [0; 24];
        for list in &mut self.dims {
            list.clear();
        }
    }

    /// Reads a blob into this day (emptied first), reusing its room.
    pub fn decode_into(&mut self, blob: &[u8]) -> Result<(), String> {
        self.clear();
        let day = self;
        read(blob, ALL_HOURS, true, |part| match part {
            Part::Hour(h, n) => day.hours[h] = n,
            Part::Value {
                dim, code, hours, ..
            } => {
                let mut e = Entry::new(code);
                e.hours = hours.copied().unwrap_or_default();
                day.dims[dim].push(e);
            }
        })
    }

    /// The whole day back from its blob.
    pub fn decode(blob: &[u8]) -> Result<DayTraffic, String> {
        let mut day = DayTraffic::default();
        day.decode_into(blob)?;
        Ok(day)
    }
}

/// What [`read`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part<'a> {
    /// Clicks in an hour (only hours inside the mask).
    Hour(usize, u32),
    /// Clicks of a value inside the mask: `count` in all; `hours` each, when the reader read
    /// them (the whole day's detail was asked for, or the mask cuts the day).
    Value {
        dim: usize,
        code: u64,
        count: u64,
        hours: Option<&'a [u32; 24]>,
    },
}

/// Reads a blob, reporting the hours inside `mask` (bit h = hour h) and, with `values`, each
/// value's clicks in those hours. Days wholly inside the mask never decode the hourly detail.
pub fn read(
    blob: &[u8],
    mask: u32,
    values: bool,
    mut sink: impl FnMut(Part<'_>),
) -> Result<(), String> {
    read_inner(blob, mask, values, &mut sink).map_err(str::to_owned)
}

fn read_inner(
    blob: &[u8],
    mask: u32,
    values: bool,
    sink: &mut impl FnMut(Part<'_>),
) -> Result<(), &'static str> {
    let mut r = Reader { blob, at: 0 };
    if r.byte()? != VERSION {
        return Err("unknown traffic format");
    }
    let day_mask = r.u32()?;
    let mut last_hour = 0;
    for h in (0..24).filter(|h| day_mask & 1 << h != 0) {
        let n = r.u32()?;
        last_hour = h;
        if mask & 1 << h != 0 {
            sink(Part::Hour(h, n));
        }
    }
    if !values || day_mask & mask == 0 {
        return Ok(());
    }
    // The whole day's clicks fall inside the mask: day totals say it all.
    let whole = day_mask & !mask == 0;
    let single = (day_mask.count_ones() == 1).then_some(last_hour);
    let want_hours = mask == ALL_HOURS;
    let mut entries: Vec<(u64, u64)> = Vec::new();
    let mut hours: [u32; 24];
    for dim in 0..DIMS {
        // A day written before a dimension existed ends before it: none of its values.
        if r.at == blob.len() {
            break;
        }
        let n = r.len()?;
        entries.clear();
        entries.reserve(n.min(MAX_VALUES * 2));
        let mut code = 0u64;
        for _ in 0..n {
            code = code
                .checked_add(r.varint()?)
                .ok_or("a value code overflows")?;
            entries.push((code, r.varint()?));
        }
        if let Some(h) = single {
            for &(code, total) in &entries {
                hours = [0; 24];
                hours[h] = u32::try_from(total).unwrap_or(u32::MAX);
                sink(Part::Value {
                    dim,
                    code,
                    count: total,
                    hours: Some(&hours),
                });
            }
            continue;
        }
        let detail_len = r.len()?;
        let detail_end = r.at.checked_add(detail_len).ok_or("bad detail length")?;
        if detail_end > blob.len() {
            return Err("truncated traffic");
        }
        if whole && !want_hours {
            for &(code, total) in &entries {
                sink(Part::Value {
                    dim,
                    code,
                    count: total,
                    hours: None,
                });
            }
        } else {
            for &(code, total) in &entries {
                let tag = r.varint()?;
                hours = [0; 24];
                if tag < 24 {
                    hours[tag as usize] = u32::try_from(total).unwrap_or(u32::MAX);
                } else {
                    let m = u32::try_from(tag - 24).map_err(|_| "bad hour mask")?;
                    for h in (0..24).filter(|h| m & 1 << h != 0) {
                        hours[h] = r.u32()?;
                    }
                }
                let count: u64 = hours
                    .iter()
                    .enumerate()
                    .filter(|(h, _)| mask & 1 << h != 0)
                    .map(|(_, &n)| u64::from(n))
                    .sum();
                if count > 0 {
                    sink(Part::Value {
                        dim,
                        code,
                        count,
                        hours: Some(&hours),
                    });
                }
            }
        }
        r.at = detail_end;
    }
    Ok(())
}

/// The clicks per hour of a blob, without its values.
pub fn hours(blob: &[u8]) -> Result<[u32; 24], String> {
    let mut out = [0; 24];
    read(blob, ALL_HOURS, false, |p| {
        if let Part::Hour(h, n) = p {
            out[h] = n;
        }
    })?;
    Ok(out)
}

fn put(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

struct Reader<'a> {
    blob: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, &'static str> {
        let b = *self.blob.get(self.at).ok_or("truncated traffic")?;
        self.at += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, &'static str> {
        // Most numbers are one byte.
        let first = self.byte()?;
        if first & 0x80 == 0 {
            return Ok(u64::from(first));
        }
        let mut n = u64::from(first & 0x7f);
        for shift in (7..64).step_by(7) {
            let b = self.byte()?;
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err("a number is too long")
    }

    fn u32(&mut self) -> Result<u32, &'static str> {
        u32::try_from(self.varint()?).map_err(|_| "a count is too large")
    }

    fn len(&mut self) -> Result<usize, &'static str> {
        let n = usize::try_from(self.varint()?).map_err(|_| "bad length")?;
        if n > self.blob.len() * 8 {
            return Err("bad length");
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn visit(day: &mut DayTraffic, hour: usize, country: u64, referrer: u64) {
        day.add(hour, [country, NONE, 2, referrer, NONE, NONE], 1);
    }

    #[test]
    fn a_day_survives_its_blob() {
        let mut day = DayTraffic::default();
        visit(&mut day, 3, 5, NONE);
        visit(&mut day, 3, 5, 9);
        visit(&mut day, 17, 6, 9);
        let blob = day.encode();
        assert_eq!(DayTraffic::decode(&blob).unwrap(), day);
        assert_eq!(hours(&blob).unwrap()[3], 2);
        // Only hours 0–10 (the edge of a period): the value of hour 17 is left out.
        let mut countries = Vec::new();
        read(&blob, (1 << 11) - 1, true, |p| {
            if let Part::Value {
                dim: 0,
                code,
                count,
                ..
            } = p
            {
                countries.push((code, count));
            }
        })
        .unwrap();
        assert_eq!(countries, vec![(5, 2)]);
    }

    #[test]
    fn one_visit_is_a_few_bytes() {
        let mut day = DayTraffic::default();
        visit(&mut day, 12, 40, 300);
        assert!(day.encode().len() <= 20, "{} bytes", day.encode().len());
    }

    #[test]
    fn a_full_dimension_folds_the_smallest_into_other() {
        let mut day = DayTraffic::default();
        for code in 2..(2 + MAX_VALUES as u64) {
            day.add(1, [code, NONE, NONE, NONE, NONE, NONE], 2);
        }
        // A newcomer with fewer clicks than every kept value goes straight to OTHER…
        day.add(1, [9_999, NONE, NONE, NONE, NONE, NONE], 1);
        assert_eq!(day.dims[0].len(), MAX_VALUES + 1);
        assert_eq!(day.dims[0][0].code, OTHER);
        assert_eq!(day.dims[0][0].total(), 1);
        // …one with as many takes the place of the smallest.
        day.add(1, [10_000, NONE, NONE, NONE, NONE, NONE], 2);
        assert!(day.dims[0].iter().any(|e| e.code == 10_000));
        assert_eq!(day.dims[0][0].total(), 3);
        let total: u64 = day.dims[0].iter().map(Entry::total).sum();
        assert_eq!(total, day.clicks(), "no click lost");
    }

    #[test]
    fn subtracting_a_merged_day_leaves_the_rest() {
        let (mut a, mut b) = (DayTraffic::default(), DayTraffic::default());
        visit(&mut a, 1, 5, 7);
        visit(&mut b, 2, 5, 8);
        let mut sum = a.clone();
        sum.merge(&b);
        sum.subtract(&b);
        assert_eq!(sum, a);
    }

    /// A day no rule sent a visit in stores nothing for rules (so it is written as days were
    /// before rules were counted, and reads back the same). A rule's visits are kept by its code.
    #[test]
    fn a_day_without_rules_is_written_as_before_them() {
        let mut day = DayTraffic::default();
        visit(&mut day, 3, 5, 9);
        visit(&mut day, 4, 6, NONE);
        let before = day.clone();
        let mut rule = 0;
        read(&day.encode(), ALL_HOURS, true, |p| {
            if let Part::Value { dim, count, .. } = p
                && dim == DIMS - 1
            {
                rule += count;
            }
        })
        .unwrap();
        assert_eq!(rule, 0, "no rule sent them: nothing stored for the rule");
        assert_eq!(DayTraffic::decode(&day.encode()).unwrap(), before);
        day.add(5, [6, NONE, 2, NONE, NONE, 40], 3);
        let mut rules = Vec::new();
        read(&day.encode(), ALL_HOURS, true, |p| {
            if let Part::Value {
                dim, code, count, ..
            } = p
                && dim == DIMS - 1
            {
                rules.push((code, count));
            }
        })
        .unwrap();
        assert_eq!(rules, [(40, 3)]);
    }

    #[test]
    fn damaged_blobs_are_errors_not_panics() {
        assert!(DayTraffic::decode(&[]).is_err());
        assert!(DayTraffic::decode(&[2, 0]).is_err());
        assert!(DayTraffic::decode(&[1, 0xff, 0xff, 0xff, 0xff, 0xff]).is_err());
    }

    proptest! {
        #[test]
        fn any_day_round_trips(visits in proptest::collection::vec(
            (0usize..24, 0u64..40, 0u64..3, 0u64..300, 1u32..5), 0..200)) {
            let mut day = DayTraffic::default();
            for (hour, c, p, r, n) in visits {
                day.add(hour, [c, p, NONE, r, c % 3, p % 2], n);
            }
            let blob = day.encode();
            prop_assert_eq!(DayTraffic::decode(&blob).unwrap(), day.clone());
            // Summing any window of hours from the blob agrees with the day itself.
            let mask = 0b0000_1111_1111_0000_0000_1111u32;
            let mut refs = 0u64;
            read(&blob, mask, true, |p| if let Part::Value { dim: 3, count, .. } = p { refs += count; })
                .unwrap();
            let want: u64 = day.hours.iter().enumerate()
                .filter(|(h, _)| mask & 1 << h != 0).map(|(_, &n)| u64::from(n)).sum();
            prop_assert_eq!(refs, want);
        }

        #[test]
        fn any_bytes_decode_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = DayTraffic::decode(&bytes);
        }
    }
}
