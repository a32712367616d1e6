//! Numbers and counts as a person reads them, for every front end's messages.

/// `1,204`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1 link`, `3 links`, `1,204 links`.
pub fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", thousands(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_naturally() {
        assert_eq!(thousands(1_204_000), "1,204,000");
        assert_eq!(thousands(12), "12");
        assert_eq!(plural(1, "click"), "1 click");
        assert_eq!(plural(0, "click"), "0 clicks");
        assert_eq!(plural(2_500, "space"), "2,500 spaces");
    }
}
