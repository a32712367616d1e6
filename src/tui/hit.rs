//! Where a mouse click lands in a row of spans: the tabs, the filter bar, a dialog's answers.

use ratatui::layout::Rect;
use ratatui::text::Span;

/// The action of the span of `spans` (laid out in `area`, from its left edge or, `right`,
/// against its right edge) that covers `column`.
pub fn clicked<T: Copy>(
    spans: &[(Span<'_>, Option<T>)],
    area: Rect,
    column: u16,
    right: bool,
) -> Option<T> {
    let width: usize = spans.iter().map(|(s, _)| s.width()).sum();
    let mut x = usize::from(area.x);
    if right {
        x += usize::from(area.width).saturating_sub(width);
    }
    for (span, action) in spans {
        let end = x + span.width();
        if (x..end).contains(&usize::from(column)) {
            return *action;
        }
        x = end;
    }
    None
}
