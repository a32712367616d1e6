//! The `shop` generator, unlike `words` in every way a search feels: a few hosts hold most
//! links (a power law), every URL of a host shares a long prefix (`/collections/…/products/`),
//! half carry `utm_` query strings, titles mix accented Latin, Greek, Japanese and emoji, a
//! fifth of the aliases are chosen words, and clicks follow a power law (a few links have
//! hundreds of thousands).

use jiff::tz::TimeZone;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use linkdeck::domain::LinkInput;

use super::{SPACES, now};

const HOSTS: &[&str] = &[
    "shop.example-store.com",
    "www.bigretailer.co.uk",
    "store.boutique-paris.fr",
    "outlet.example.de",
    "m.marketplace.example",
    "kaufhaus.example.at",
    "tienda.example.es",
    "negozio.example.it",
];
const SEASONS: &[&str] = &[
    "spring",
    "summer",
    "autumn",
    "winter",
    "holiday",
    "clearance",
];
const PRODUCTS: &[&str] = &[
    "linen-shirt",
    "wool-coat",
    "leather-boots",
    "silk-scarf",
    "denim-jacket",
    "running-shoes",
    "canvas-bag",
    "cashmere-sweater",
    "rain-jacket",
    "summer-dress",
    "sunglasses",
    "watch",
    "backpack",
    "sneakers",
    "trousers",
    "t-shirt",
    "hoodie",
    "cardigan",
    "belt",
    "hat",
];
const COLOURS: &[&str] = &[
    "black", "white", "navy", "olive", "sand", "burgundy", "grey", "ivory", "rust", "teal",
];
const SOURCES: &[&str] = &[
    "newsletter",
    "instagram",
    "facebook",
    "google",
    "tiktok",
    "partner",
];
const MEDIUMS: &[&str] = &["email", "social", "cpc", "affiliate", "display"];
/// Title words: accented Latin, Greek, Japanese and emoji beside plain English.
const TITLE_WORDS: &[&str] = &[
    "Größe",
    "Überraschung",
    "Café",
    "été",
    "naïve",
    "Straße",
    "Ñandú",
    "crème",
    "brûlée",
    "Ελλάδα",
    "καλοκαίρι",
    "東京",
    "ラーメン",
    "夏のセール",
    "限定",
    "🎉",
    "🔥",
    "✨",
    "Sale",
    "New",
    "arrivals",
    "limited",
    "edition",
    "collection",
    "offer",
    "week",
    "only",
    "today",
    "Schnäppchen",
    "Rabatt",
    "soldes",
    "offerta",
    "rebajas",
    "neu",
    "nouveau",
    "für",
    "pour",
];

/// A host index by a power law: the first hosts hold most links.
fn host(rng: &mut StdRng) -> &'static str {
    let u: f64 = rng.random();
    HOSTS[((u * u * u) * HOSTS.len() as f64) as usize]
}

fn pick<'a>(rng: &mut StdRng, from: &[&'a str]) -> &'a str {
    from[rng.random_range(0..from.len())]
}

/// The generated links as import rows, deterministic for a given `n` and `seed`.
pub fn rows(n: usize, seed: u64) -> Vec<(usize, LinkInput, Option<String>)> {
    let mut rng = StdRng::seed_from_u64(seed ^ OWN_SEED);
    let mut tag_rng = super::tag_rng(seed ^ OWN_SEED);
    (0..n)
        .map(|i| {
            let year = 2020 + rng.random_range(0..7);
            let mut url = format!(
                "https://{}/collections/{}-{year}/products/{}-{}-{}",
                host(&mut rng),
                pick(&mut rng, SEASONS),
                pick(&mut rng, PRODUCTS),
                pick(&mut rng, COLOURS),
                seed as usize + i
            );
            if rng.random_range(0..2) == 0 {
                url.push_str(&format!(
                    "?utm_source={}&utm_medium={}&utm_campaign={}-{year}",
                    pick(&mut rng, SOURCES),
                    pick(&mut rng, MEDIUMS),
                    pick(&mut rng, SEASONS)
                ));
            }
            let mut input = LinkInput::with_url(url);
            if rng.random_range(0..5) == 0 {
                input.alias = Some(format!(
                    "{}-{}",
                    pick(&mut rng, PRODUCTS),
                    seed as usize + i
                ));
            }
            let roll: u32 = rng.random_range(0..1000);
            if roll < 40 {
                // 4 % carry a date, about half of them past.
                let day = rng.random_range(-365..365);
                let date = now()
                    .checked_add(jiff::SignedDuration::from_hours(24 * day))
                    .unwrap()
                    .to_zoned(TimeZone::UTC);
                input.expiration_date = Some(date.strftime("%Y-%m-%d").to_string());
                input.expiration_time = Some("08:00".into());
            } else if roll < 70 {
                // 3 % carry a click limit (see `clicks`: many reach it).
                input.expiration_clicks = Some("100".into());
            }
            if rng.random_range(0..100) < 5 {
                input.disabled = Some("1".into());
            }
            let space = (rng.random_range(0..100) < 30)
                .then(|| format!("Space {}", rng.random_range(0..SPACES)));
            input.tags = Some(shop_tags(&mut tag_rng));
            (i + 1, input, space)
        })
        .collect()
}

/// The title of link `id`: two to five words.
pub fn title(id: u64) -> String {
    let mut rng = StdRng::seed_from_u64(id ^ OWN_SEED);
    let words = rng.random_range(2..=5);
    (0..words)
        .map(|_| pick(&mut rng, TITLE_WORDS))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A seed of its own, so the two generators never draw the same numbers.
const OWN_SEED: u64 = 0x5140_7ab1_e5ee_d000;

/// Link `id`'s clicks, by a power law: one link in 997 hundreds of thousands, one in 31
/// thousands, the rest a handful.
pub fn clicks(id: u64) -> u64 {
    if id.is_multiple_of(997) {
        (id * 7919) % 900_000
    } else if id.is_multiple_of(31) {
        (id * 7919) % 9000
    } else {
        (id * 13) % 12
    }
}

/// Tags of the `shop` links, unlike `words`: every link has a campaign (a season and a year, 42
/// of them, evenly), half carry `sale` as well, and one in fifty a rare one of 2,000 SKU tags.
pub fn shop_tags(rng: &mut StdRng) -> String {
    let mut tags = vec![format!(
        "{}-{}",
        pick(rng, SEASONS),
        2020 + rng.random_range(0..7)
    )];
    if rng.random_range(0..2) == 0 {
        tags.push("sale".into());
    }
    if rng.random_range(0..50) == 0 {
        tags.push(format!("sku-{}", rng.random_range(0..2000)));
    }
    tags.join(",")
}
