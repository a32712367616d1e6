//! QR codes already drawn, for the next visitor who asks for the same one: a page that embeds a
//! code is fetched by each of its readers. Bounded in count and in bytes; the least recently
//! asked go first. Nothing needs forgetting on an edit: a code is keyed by the text it holds,
//! and a link whose short URL changes asks for another key.

use std::num::NonZeroUsize;
use std::sync::Mutex;

use axum::body::Bytes;
use lru::LruCache;

use super::Image;

/// Images kept at most…
const MAX_IMAGES: usize = 1_000;
/// …and bytes (images and the URLs they are kept under): a code of a short URL at the largest
/// size is about 10 KB as PNG or SVG, so the count is the bound that usually holds.
const MAX_BYTES: usize = 16 << 20;

/// What an image is drawn from: the short URL it holds, the format and the size asked for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    pub url: String,
    pub image: Image,
    pub size: u32,
}

impl Key {
    fn weight(&self, image: &Bytes) -> usize {
        self.url.len() + image.len()
    }
}

struct Kept {
    images: LruCache<Key, Bytes>,
    bytes: usize,
}

pub struct ImageCache {
    kept: Mutex<Kept>,
    max_bytes: usize,
}

impl ImageCache {
    pub fn new() -> ImageCache {
        ImageCache::bounded(MAX_IMAGES, MAX_BYTES)
    }

    fn bounded(max_images: usize, max_bytes: usize) -> ImageCache {
        ImageCache {
            kept: Mutex::new(Kept {
                images: LruCache::new(NonZeroUsize::new(max_images).expect("not zero")),
                bytes: 0,
            }),
            max_bytes,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn get(&self, key: &Key) -> Option<Bytes> {
        self.lock().images.get(key).cloned()
    }

    pub fn put(&self, key: Key, image: Bytes) {
        let weight = key.weight(&image);
        if weight > self.max_bytes {
            return;
        }
        let mut kept = self.lock();
        kept.bytes += weight;
        if let Some((old_key, old)) = kept.images.push(key, image) {
            kept.bytes -= old_key.weight(&old);
        }
        while kept.bytes > self.max_bytes {
            let Some((old_key, old)) = kept.images.pop_lru() else {
                break;
            };
            kept.bytes -= old_key.weight(&old);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(url: &str, size: u32) -> Key {
        Key {
            url: url.to_owned(),
            image: Image::Png,
            size,
        }
    }

    fn image(len: usize) -> Bytes {
        Bytes::from(vec![7u8; len])
    }

    #[test]
    fn the_least_recently_asked_go_first_when_the_count_is_reached() {
        let cache = ImageCache::bounded(2, 1 << 20);
        cache.put(key("a", 64), image(10));
        cache.put(key("b", 64), image(10));
        assert!(cache.get(&key("a", 64)).is_some());
        cache.put(key("c", 64), image(10));
        assert!(
            cache.get(&key("b", 64)).is_none(),
            "the least recently asked"
        );
        assert!(cache.get(&key("a", 64)).is_some());
        assert!(cache.get(&key("c", 64)).is_some());
        assert!(
            cache.get(&key("c", 65)).is_none(),
            "another size is another image"
        );
        assert_eq!(cache.lock().bytes, 2 * 11);
    }

    #[test]
    fn bytes_are_bounded_too() {
        let cache = ImageCache::bounded(100, 100);
        for n in 0..10 {
            cache.put(key(&format!("u{n}"), 64), image(30));
        }
        let kept = cache.lock();
        assert_eq!(kept.images.len(), 3);
        assert_eq!(kept.bytes, 3 * 32);
        drop(kept);
        assert!(cache.get(&key("u9", 64)).is_some());
        // An image larger than the whole cache is not kept, and pushes nothing out.
        cache.put(key("huge", 64), image(101));
        assert!(cache.get(&key("huge", 64)).is_none());
        assert_eq!(cache.lock().images.len(), 3);
        // The same key again replaces its image, and its bytes.
        cache.put(key("u9", 64), image(10));
        assert_eq!(cache.lock().bytes, 2 * 32 + 12);
    }
}
