//! What `[keys]` may bind: the app's actions by their config names, each with its default keys
//! and the places it works in.

use std::fmt;

/// Everything a key can be bound to. The names (`as_str`) are the `[keys]` config names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    Quit,
    Help,
    Palette,
    NextPane,
    PrevPane,
    Down,
    Up,
    Top,
    Bottom,
    PageDown,
    PageUp,
    HalfPageDown,
    HalfPageUp,
    Select,
    New,
    Edit,
    EditInEditor,
    Delete,
    Search,
    CycleBy,
    CycleStatus,
    StatusAll,
    StatusActive,
    StatusExpired,
    StatusDisabled,
    CycleSort,
    SpaceFilter,
    DomainFilter,
    TagFilter,
    ClearFilters,
    Columns,
    Refresh,
    CopyShortUrl,
    CopyDestination,
    CopyAlias,
    CopyMarkdown,
    ToggleDisabled,
    TogglePublic,
    MoveToSpace,
    SetExpiry,
    TagLinks,
    OpenInBrowser,
    ShowQr,
    OpenShortUrl,
    Mark,
    MarkRange,
    MarkAll,
    ClearMarks,
    Undo,
    Restore,
    EmptyTrash,
    Submit,
    Cancel,
    NextField,
    PrevField,
    Toggle,
    AddRow,
    RemoveRow,
    MoveRowUp,
    MoveRowDown,
    Yes,
    No,
    Stats,
    Dashboard,
    CyclePeriod,
    EarlierPeriod,
    LaterPeriod,
    Webhooks,
}

/// Where the app is when a key arrives: the lists (panes, filters, global actions), a form,
/// or a dialog. A key may mean one thing in each; it may not mean two things in one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeyContext {
    Lists,
    Forms,
    Dialogs,
}

impl KeyContext {
    pub const ALL: [KeyContext; 3] = [KeyContext::Lists, KeyContext::Forms, KeyContext::Dialogs];
}

impl Action {
    pub const ALL: [Action; 68] = [
        Action::Quit,
        Action::Help,
        Action::Palette,
        Action::NextPane,
        Action::PrevPane,
        Action::Down,
        Action::Up,
        Action::Top,
        Action::Bottom,
        Action::PageDown,
        Action::PageUp,
        Action::HalfPageDown,
        Action::HalfPageUp,
        Action::Select,
        Action::New,
        Action::Edit,
        Action::EditInEditor,
        Action::Delete,
        Action::Search,
        Action::CycleBy,
        Action::CycleStatus,
        Action::StatusAll,
        Action::StatusActive,
        Action::StatusExpired,
        Action::StatusDisabled,
        Action::CycleSort,
        Action::SpaceFilter,
        Action::DomainFilter,
        Action::TagFilter,
        Action::ClearFilters,
        Action::Columns,
        Action::Refresh,
        Action::CopyShortUrl,
        Action::CopyDestination,
        Action::CopyAlias,
        Action::CopyMarkdown,
        Action::ToggleDisabled,
        Action::TogglePublic,
        Action::MoveToSpace,
        Action::SetExpiry,
        Action::TagLinks,
        Action::OpenInBrowser,
        Action::ShowQr,
        Action::OpenShortUrl,
        Action::Mark,
        Action::MarkRange,
        Action::MarkAll,
        Action::ClearMarks,
        Action::Undo,
        Action::Restore,
        Action::EmptyTrash,
        Action::Submit,
        Action::Cancel,
        Action::NextField,
        Action::PrevField,
        Action::Toggle,
        Action::AddRow,
        Action::RemoveRow,
        Action::MoveRowUp,
        Action::MoveRowDown,
        Action::Yes,
        Action::No,
        Action::Stats,
        Action::Dashboard,
        Action::CyclePeriod,
        Action::EarlierPeriod,
        Action::LaterPeriod,
        Action::Webhooks,
    ];

    /// The name used in the `[keys]` section of the configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::Help => "help",
            Action::Palette => "palette",
            Action::NextPane => "next_pane",
            Action::PrevPane => "prev_pane",
            Action::Down => "down",
            Action::Up => "up",
            Action::Top => "top",
            Action::Bottom => "bottom",
            Action::PageDown => "page_down",
            Action::PageUp => "page_up",
            Action::HalfPageDown => "half_page_down",
            Action::HalfPageUp => "half_page_up",
            Action::Select => "select",
            Action::New => "new",
            Action::Edit => "edit",
            Action::EditInEditor => "edit_in_editor",
            Action::Delete => "delete",
            Action::Search => "search",
            Action::CycleBy => "cycle_by",
            Action::CycleStatus => "cycle_status",
            Action::StatusAll => "status_all",
            Action::StatusActive => "status_active",
            Action::StatusExpired => "status_expired",
            Action::StatusDisabled => "status_disabled",
            Action::CycleSort => "cycle_sort",
            Action::SpaceFilter => "space_filter",
            Action::DomainFilter => "domain_filter",
            Action::TagFilter => "tag_filter",
            Action::ClearFilters => "clear_filters",
            Action::Columns => "columns",
            Action::Refresh => "refresh",
            Action::CopyShortUrl => "copy_short_url",
            Action::CopyDestination => "copy_destination",
            Action::CopyAlias => "copy_alias",
            Action::CopyMarkdown => "copy_markdown",
            Action::ToggleDisabled => "toggle_disabled",
            Action::TogglePublic => "toggle_public",
            Action::MoveToSpace => "move_to_space",
            Action::SetExpiry => "set_expiry",
            Action::TagLinks => "tag_links",
            Action::OpenInBrowser => "open_in_browser",
            Action::ShowQr => "show_qr",
            Action::OpenShortUrl => "open_short_url",
            Action::Mark => "mark",
            Action::MarkRange => "mark_range",
            Action::MarkAll => "mark_all",
            Action::ClearMarks => "clear_marks",
            Action::Undo => "undo",
            Action::Restore => "restore",
            Action::EmptyTrash => "empty_trash",
            Action::Submit => "submit",
            Action::Cancel => "cancel",
            Action::NextField => "next_field",
            Action::PrevField => "prev_field",
            Action::Toggle => "toggle",
            Action::AddRow => "add_row",
            Action::RemoveRow => "remove_row",
            Action::MoveRowUp => "move_row_up",
            Action::MoveRowDown => "move_row_down",
            Action::Yes => "yes",
            Action::No => "no",
            Action::Stats => "stats",
            Action::Dashboard => "dashboard",
            Action::CyclePeriod => "cycle_period",
            Action::EarlierPeriod => "earlier_period",
            Action::LaterPeriod => "later_period",
            Action::Webhooks => "webhooks",
        }
    }

    pub fn parse(name: &str) -> Option<Action> {
        Self::ALL.into_iter().find(|a| a.as_str() == name.trim())
    }

    /// The keys the action has when `[keys]` leaves it alone.
    pub(super) fn default_keys(self) -> &'static [&'static str] {
        match self {
            Action::Quit => &["q"],
            Action::Help => &["?"],
            Action::Palette => &[":", "ctrl-p"],
            Action::NextPane => &["tab", "l"],
            Action::PrevPane => &["shift-tab", "h"],
            Action::Down => &["j", "down"],
            Action::Up => &["k", "up"],
            Action::Top => &["g", "home"],
            Action::Bottom => &["G", "end"],
            Action::PageDown => &["pgdn", "ctrl-f"],
            Action::PageUp => &["pgup", "ctrl-b"],
            Action::HalfPageDown => &["ctrl-d"],
            Action::HalfPageUp => &["ctrl-u"],
            Action::Select => &["enter"],
            Action::New => &["n"],
            Action::Edit => &["e"],
            Action::EditInEditor => &["ctrl-e"],
            Action::Delete => &["d"],
            Action::Search => &["/"],
            Action::CycleBy => &["b"],
            Action::CycleStatus => &["s"],
            Action::StatusAll => &["1"],
            Action::StatusActive => &["2"],
            Action::StatusExpired => &["3"],
            Action::StatusDisabled => &["4"],
            Action::CycleSort => &["o"],
            Action::SpaceFilter => &["f"],
            Action::DomainFilter => &["F"],
            Action::TagFilter => &["t"],
            Action::ClearFilters => &["c"],
            Action::Columns => &["C"],
            Action::Refresh => &["r"],
            Action::CopyShortUrl => &["y"],
            Action::CopyDestination => &["Y"],
            Action::CopyAlias => &["A"],
            Action::CopyMarkdown => &["M"],
            Action::ToggleDisabled => &["x"],
            Action::TogglePublic => &["P"],
            Action::MoveToSpace => &["m"],
            Action::SetExpiry => &["E"],
            Action::TagLinks => &["#"],
            Action::OpenInBrowser => &["w"],
            Action::ShowQr => &["Q"],
            Action::OpenShortUrl => &["W"],
            Action::Mark => &["space"],
            Action::MarkRange => &["V"],
            Action::MarkAll => &["*"],
            Action::ClearMarks => &["esc"],
            Action::Undo => &["u"],
            Action::Restore => &["R"],
            Action::EmptyTrash => &["X"],
            Action::Submit => &["ctrl-s"],
            Action::Cancel => &["esc"],
            Action::NextField => &["tab"],
            Action::PrevField => &["shift-tab"],
            Action::Toggle => &["space"],
            Action::AddRow => &["a"],
            Action::RemoveRow => &["delete"],
            Action::MoveRowUp => &["K", "alt-up"],
            Action::MoveRowDown => &["J", "alt-down"],
            Action::Yes => &["y"],
            Action::No => &["n"],
            Action::Stats => &["S"],
            Action::Dashboard => &["T"],
            Action::CyclePeriod => &["p"],
            Action::EarlierPeriod => &["[", "left"],
            Action::LaterPeriod => &["]", "right"],
            Action::Webhooks => &["H"],
        }
    }

    /// Whether the action changes data: what a read-only profile refuses, and the app then
    /// neither offers nor hints at.
    pub fn changes_data(self) -> bool {
        matches!(
            self,
            Action::New
                | Action::Edit
                | Action::EditInEditor
                | Action::Delete
                | Action::ToggleDisabled
                | Action::TogglePublic
                | Action::MoveToSpace
                | Action::SetExpiry
                | Action::TagLinks
                | Action::Undo
                | Action::Restore
                | Action::EmptyTrash
        )
    }

    /// Where the action's keys work: moving works everywhere, the rest in their context.
    pub fn works_in(self, context: KeyContext) -> bool {
        match self {
            Action::Down
            | Action::Up
            | Action::Top
            | Action::Bottom
            | Action::PageDown
            | Action::PageUp
            | Action::HalfPageDown
            | Action::HalfPageUp
            | Action::Select => true,
            Action::Submit
            | Action::NextField
            | Action::PrevField
            | Action::Toggle
            | Action::AddRow
            | Action::RemoveRow
            | Action::MoveRowUp
            | Action::MoveRowDown => context == KeyContext::Forms,
            Action::Cancel => context != KeyContext::Lists,
            Action::Yes | Action::No => context == KeyContext::Dialogs,
            // A filter's picker shows the traffic of the line under the cursor, and the tag
            // picker renames the tag under it.
            Action::Stats | Action::Edit => context != KeyContext::Forms,
            _ => context == KeyContext::Lists,
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
