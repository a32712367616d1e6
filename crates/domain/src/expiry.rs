//! Expiry is typed as a civil date and time in the profile's time zone and stored as an instant.

use jiff::civil::{Date, DateTime, Time};
use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};

use super::{FieldErrors, LinkField};

/// Reads `expiration_date` (YYYY-MM-DD) and `expiration_time` (HH:MM) in `tz`. Both empty means
/// no expiry (`Ok(None)`); each is required with the other. Errors go into `errors` by field.
pub fn parse_expiry(
    date: &str,
    time: &str,
    tz: &TimeZone,
    errors: &mut FieldErrors,
) -> Option<Option<Timestamp>> {
    let (date, time) = (date.trim(), time.trim());
    if date.is_empty() && time.is_empty() {
        return Some(None);
    }
    // Each field is judged on its own first, so a form can show a field's mistake as soon as
    // it is left, whatever the other holds.
    let parsed_date = parse_date(date);
    if date.is_empty() {
        errors.add(
            LinkField::ExpirationDate.name(),
            "is required when an expiration time is given",
        );
    } else if parsed_date.is_none() {
        errors.add(
            LinkField::ExpirationDate.name(),
            "must be a date in the form YYYY-MM-DD",
        );
    }
    let parsed_time = parse_time(time);
    if time.is_empty() {
        errors.add(
            LinkField::ExpirationTime.name(),
            "is required when an expiration date is given",
        );
    } else if parsed_time.is_none() {
        errors.add(
            LinkField::ExpirationTime.name(),
            "must be a time in the form HH:MM",
        );
    }
    let dt = DateTime::from_parts(parsed_date?, parsed_time?);
    // In a DST gap the later instant is taken, as a person setting a wall clock would expect.
    match tz.to_ambiguous_zoned(dt).later() {
        Ok(zoned) => Some(Some(zoned.timestamp())),
        Err(_) => {
            errors.add(LinkField::ExpirationDate.name(), "is out of range");
            None
        }
    }
}

fn parse_date(s: &str) -> Option<Date> {
    let bytes = s.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return None;
    }
    s.parse::<Date>().ok()
}

fn parse_time(s: &str) -> Option<Time> {
    let (h, m) = s.split_once(':')?;
    if h.len() != 2 || m.len() != 2 || !h.bytes().chain(m.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    Time::new(h.parse().ok()?, m.parse().ok()?, 0, 0).ok()
}

/// The `(expiration_date, expiration_time)` pair that reads back as `at` in `tz`, for forms and
/// exports.
pub fn format_expiry_input(at: Timestamp, tz: &TimeZone) -> (String, String) {
    let zoned: Zoned = at.to_zoned(tz.clone());
    (
        zoned.strftime("%Y-%m-%d").to_string(),
        zoned.strftime("%H:%M").to_string(),
    )
}
