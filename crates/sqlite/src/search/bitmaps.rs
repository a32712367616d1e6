//! Sets of link ids as roaring bitmaps: built from ids in any order, and walked in order a
//! block at a time — the two things every search over ids does, fast.

use roaring::{RoaringBitmap, RoaringTreemap};

use linkdeck_domain::Result;

/// The set of `ids`, in any order and with repeats.
pub fn set_of(mut ids: Vec<u64>) -> RoaringTreemap {
    if !ids.is_sorted() {
        ids.sort_unstable();
    }
    ids.dedup();
    // A bitmap per 2³² ids, each built in order: several times quicker than the treemap's own
    // building, which looks its bitmap up for every id.
    let mut bitmaps = Vec::new();
    for run in ids.chunk_by(|a, b| a >> 32 == b >> 32) {
        let low = run.iter().map(|&id| id as u32);
        match RoaringBitmap::from_sorted_iter(low) {
            Ok(bitmap) => bitmaps.push(((run[0] >> 32) as u32, bitmap)),
            // Not reached: the ids were just sorted and made unique.
            Err(_) => return ids.into_iter().collect(),
        }
    }
    RoaringTreemap::from_bitmaps(bitmaps)
}

/// Calls `visit` with the members of `set` in order, in runs whose ids agree above their lowest
/// `block_bits` bits: each run as the ids' high 32 bits and every member's low 32. Taken from
/// the bitmaps thousands at a time, several times quicker than the treemap's iterator or a
/// bitmap's one by one; a block's members may come in more than one run.
pub fn each_run(
    set: &RoaringTreemap,
    block_bits: u32,
    mut visit: impl FnMut(u32, &[u32]) -> Result<()>,
) -> Result<()> {
    let mut lows = vec![0u32; 4096];
    for (high, bitmap) in set.bitmaps() {
        let uncompressed;
        let bitmap = if has_full_block(bitmap) {
            uncompressed = without_runs(bitmap);
            &uncompressed
        } else {
            bitmap
        };
        let mut iter = bitmap.iter();
        loop {
            let batch = iter.next_many(&mut lows);
            if batch.is_empty() {
                break;
            }
            // Sorted, so each run ends where a binary search says: no comparison per member.
            let mut rest = &*batch;
            while let Some(&first) = rest.first() {
                let len = rest.partition_point(|&low| low >> block_bits == first >> block_bits);
                let (run, after) = rest.split_at(len);
                visit(high, run)?;
                rest = after;
            }
        }
    }
    Ok(())
}

/// Whether any block of 65,536 ids of `bitmap` is full. roaring 0.12.0's `next_many` skips
/// such a block when it is held as one run (the run's length, 65,536, overflows its 16 bits):
/// the short-term index stores its rows run-compressed, and a term in every link of a block
/// listed nothing past the first page in clicks order.
fn has_full_block(bitmap: &RoaringBitmap) -> bool {
    let (Some(min), Some(max)) = (bitmap.min(), bitmap.max()) else {
        return false;
    };
    (min >> 16..=max >> 16).any(|block| bitmap.contains_range(block << 16..=(block << 16) | 0xffff))
}

fn without_runs(bitmap: &RoaringBitmap) -> RoaringBitmap {
    let mut copy = bitmap.clone();
    copy.remove_run_compression();
    copy
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of ids held as one run each, as the short-term index stores a term in every link:
    /// every member is visited, in order.
    #[test]
    fn every_member_of_full_run_compressed_blocks_is_visited() {
        let mut bitmap = RoaringBitmap::new();
        bitmap.insert_range(0..(2 << 16) + 5);
        bitmap.insert(7 << 16);
        bitmap.optimize();
        let set = RoaringTreemap::from_bitmaps([(0, bitmap.clone()), (3, bitmap)]);
        let (mut seen, mut last) = (0, None);
        each_run(&set, 12, |high, run| {
            for &low in run {
                let id = (u64::from(high) << 32) | u64::from(low);
                assert!(last < Some(id), "{id} after {last:?}");
                last = Some(id);
                seen += 1;
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, set.len());
    }
}
