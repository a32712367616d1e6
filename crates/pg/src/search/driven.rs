//! Tagged lists answered from id sets, as on SQLite. Each tag's links are rows of `link_tags`
//! and a disabled or expired status's are in its partial indexes: sets of ids read without
//! touching a link, at a tenth of what reading a link costs. The smallest set, narrowed by the
//! others where reading them costs less than the links they rule out, is the list's
//! candidates; their rows are read by id and checked for what no set said (the term, the
//! space, an active status), and the matches sorted here: an exact total and any page. Left to
//! the planner, a tag beside a term most URLs hold, or beside a status, was a semi-join it
//! sized as if the two were independent: a walk of the whole clicks index, or every posting of
//! the term read, for 0.3 to 1.5 s at a million links.

use deadpool_postgres::GenericClient;
use linkdeck_domain::{Id, Result, Sort, StatusFilter, TagMatch};
use linkdeck_store::ListFilter;
use roaring::RoaringTreemap;

use super::{
    Lookup, Matches, PG_BY_CLICKS_IDS, PG_BY_DATE_IDS, PG_DISABLED_IDS, ROW_CHECK_POSTINGS,
    estimated_rows, filter, in_order, owner_links, postings,
};
use crate::sql::{Args, all, col, value};

/// The most candidates a list is read from one by one: each costs its row's read and check,
/// 2 to 3.5 µs measured (a term's `strpos` on the row the dearer end; 1.7 µs with every page
/// in PostgreSQL's own buffers), so this many cost about 100 ms at the most. Left to the
/// planner, tagged lists with more took 0.1 to 0.3 s at a million links: a road of its own
/// would cost them as much.
const CANDIDATES_MAX: u64 = 30_000;

/// The most candidates beside a term the trigram index would read more postings for than
/// checking them costs ([`ROW_CHECK_POSTINGS`] each): the index alone then costs more than
/// this road, and the planner took 0.5 to 1.5 s for such lists. Bounded all the same, as the
/// ids are held here.
const CANDIDATES_BESIDE_TERM_MAX: u64 = 100_000;

/// What reading a link's row and checking it costs against reading one id of a set: 2.5 µs
/// against 0.15 to 0.2 µs (`link_tags`' index and the partial indexes, read index-only).
const ROW_PER_ID: u64 = 12;

/// A set of link ids one of the list's conditions gives: a statement answering them, its
/// values, how many rows the planner expects of it, and which condition it settles.
struct Set {
    select: String,
    args: Args,
    rows: u64,
    settles: Settles,
}

#[derive(Clone, Copy, PartialEq)]
enum Settles {
    /// One of the tags when a link must carry every one; all of them when any will do.
    Tags,
    Status,
}

/// The ids of `f`'s matches in its order, when its sets leave few enough candidates and its
/// term, if any, is dearer to look up in the trigram index than to check on them; `None`
/// leaves the list to the planner.
pub(super) async fn matches<C: GenericClient>(
    c: &C,
    f: &ListFilter<'_>,
) -> Result<Option<Vec<Id>>> {
    if f.tags.is_empty() {
        return Ok(None);
    }
    let mut sets = sets(f);
    for set in &mut sets {
        set.rows = estimated_rows(c, &set.select, &set.args).await?;
    }
    sets.sort_by_key(|set| set.rows);
    let Some(smallest) = sets.first() else {
        return Ok(None);
    };
    if smallest.rows > CANDIDATES_BESIDE_TERM_MAX {
        return Ok(None);
    }
    let links = owner_links(c, f.owner).await?.max(1);
    // A term the trigram index finds in fewer postings than checking the candidates the sets
    // are expected to leave would cost (each set taken as independent of the others) is left
    // to the index before any set is read; a term of two characters or less never is.
    let postings = postings(c, f).await?;
    let expected = (sets.iter().skip(1)).fold(smallest.rows as f64, |n, set| {
        n * set.rows as f64 / links as f64
    });
    if postings.is_some_and(|p| p as f64 <= expected * ROW_CHECK_POSTINGS as f64) {
        return Ok(None);
    }
    // Nor is a set read when the candidates it is expected to leave are more than this road
    // takes.
    let most = match postings {
        Some(_) => CANDIDATES_BESIDE_TERM_MAX,
        None => CANDIDATES_MAX,
    };
    if expected > most as f64 {
        return Ok(None);
    }
    // The smallest set, then each other one whose ids cost less to read than the rows it
    // would rule out (as many as it leaves out of the candidates, taken as independent).
    let mut candidates: Option<RoaringTreemap> = None;
    let mut tags_read = 0;
    let mut status_read = false;
    for set in &sets {
        if let Some(candidates) = &candidates {
            let ruled_out = candidates.len() * links.saturating_sub(set.rows) / links;
            if set.rows >= ruled_out * ROW_PER_ID {
                continue;
            }
        }
        // One array rather than a row an id: each row costs its own decoding here.
        let select = format!("SELECT array_agg(s.id) FROM ({}) s(id)", set.select);
        let ids: Option<Vec<Id>> = value(c, &select, &set.args.refs()).await?;
        let ids: RoaringTreemap = ids
            .unwrap_or_default()
            .into_iter()
            .map(|id| id as u64)
            .collect();
        candidates = Some(match candidates {
            Some(candidates) => candidates & ids,
            None => ids,
        });
        match set.settles {
            Settles::Tags => tags_read += 1,
            Settles::Status => status_read = true,
        }
    }
    let candidates = candidates.unwrap_or_default();
    let dearer = postings.is_some_and(|p| p <= candidates.len() * ROW_CHECK_POSTINGS);
    if dearer || candidates.len() > most {
        return Ok(None);
    }
    // What no set has said is checked on the candidates' rows.
    let all_tags = match f.tag_match {
        TagMatch::All => f.tags.len(),
        TagMatch::Any => 1,
    };
    let rest = ListFilter {
        tags: if tags_read == all_tags { &[] } else { f.tags },
        status: if status_read {
            StatusFilter::All
        } else {
            f.status
        },
        ..f.clone()
    };
    let settled = rest.search.is_none()
        && rest.tags.is_empty()
        && rest.status == StatusFilter::All
        && rest.space.is_any()
        && rest.domain.is_none();
    let found: Matches = match (settled, f.sort) {
        (true, Sort::Desc | Sort::Asc) => candidates.iter().map(|id| (id as Id, 0)).collect(),
        _ => {
            let (sql, mut args) = filter(&rest, Lookup::OnRows, Lookup::OnRows);
            let ids = args.push(candidates.iter().map(|id| id as Id).collect::<Vec<_>>());
            let select =
                format!("SELECT l.id, l.clicks FROM links l WHERE l.id = ANY({ids}) AND {sql}");
            all(c, &select, &args.refs(), |r| Ok((col(r, 0)?, col(r, 1)?))).await?
        }
    };
    Ok(Some(in_order(found, f.sort)))
}

/// The sets `f`'s own indexes give, not yet sized: each tag's links when a link must carry
/// every one, all the tags' when any will do, and the links of a disabled or expired status.
fn sets(f: &ListFilter<'_>) -> Vec<Set> {
    let set = |select: String, args: Args, settles: Settles| Set {
        select,
        args,
        rows: 0,
        settles,
    };
    let tagged = "SELECT link_id FROM link_tags WHERE owner_id = $1 AND tag";
    let mut sets = Vec::new();
    match f.tag_match {
        TagMatch::All => {
            for tag in f.tags {
                let mut args = Args::default();
                args.push(f.owner);
                args.push(tag.clone());
                sets.push(set(format!("{tagged} = $2"), args, Settles::Tags));
            }
        }
        TagMatch::Any => {
            let mut args = Args::default();
            args.push(f.owner);
            args.push(f.tags.to_vec());
            sets.push(set(format!("{tagged} = ANY($2)"), args, Settles::Tags));
        }
    }
    let mut args = Args::default();
    args.push(f.owner);
    match f.status {
        StatusFilter::Disabled => sets.push(set(PG_DISABLED_IDS.to_owned(), args, Settles::Status)),
        StatusFilter::Expired => {
            args.push(f.now.as_second());
            // A link expired both ways comes twice: a set holds it once.
            let select = format!("{PG_BY_DATE_IDS} UNION ALL {PG_BY_CLICKS_IDS}");
            sets.push(set(select, args, Settles::Status));
        }
        StatusFilter::All | StatusFilter::Active => {}
    }
    sets
}
