//! How a window over rows scrolls: the one rule every scrolled list and the form keep their
//! cursor in view by.

/// The scroll offset of a window `rows` tall that shows row `row` and moves the least from
/// `offset`: every scrolled list and the form keep their cursor in view this way.
pub fn offset_showing(row: usize, offset: usize, rows: usize) -> usize {
    if row < offset {
        row
    } else if row >= offset + rows {
        row + 1 - rows
    } else {
        offset
    }
}
