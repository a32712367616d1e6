//! Clicks reserved in the database before the visitor is answered, on either store: every click
//! of a link with a click limit (and, where several servers share the database, every click of
//! a rotating link, whose turn is shared). A reserved click is stored before its redirect
//! leaves, so a server killed at any moment has let no link past its limit and has counted
//! every click it served.
//!
//! Reservations are grouped: the clicks that arrive while earlier ones are being reserved are
//! reserved together, by one transaction, each link's count moved once by the clicks its limit
//! admits, in the order they came. A click waits for at most one transaction before its own, and
//! under load the cost of a transaction and its commit is shared by many clicks. What a group
//! does to its links' rows is each store's; the queue, the grouping and the answers are here.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, OnceLock};

use tokio::sync::{Semaphore, mpsc, oneshot};

use linkdeck_domain::{Error, Id, Result};

/// What a reservation found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reserved {
    /// Counted: the link's clicks after this one and the saved rotation position (the next
    /// visit's).
    Counted { clicks: u64, next: u32 },
    /// The link's click limit is reached.
    Refused,
    /// The database keeps no reserved count for the link: it has neither a click limit nor (on a
    /// shared database) a rotation any more (the caller's copy is older than an edit), or it is
    /// gone. Its click is counted as any other link's is.
    NoQuota,
}

/// Requests taken into one group at most.
const GROUP_MAX: usize = 512;

/// One click waiting for its reservation.
pub struct Request {
    id: Id,
    rotation: u32,
    answer: oneshot::Sender<Result<Reserved>>,
}

/// Where a store's clicks wait to be reserved: the queue's task starts with the first click and
/// ends when the store's last handle is dropped.
pub type Queue = OnceLock<mpsc::UnboundedSender<Request>>;

/// What a group asks of one link: its clicks, and its rotation's URLs (as the first click of
/// it says; 0 when it does not rotate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asked {
    pub clicks: i64,
    pub turns: i64,
}

/// What one link's row said to a group: its clicks and rotation position before, its
/// rotation's URLs, and how many of the group's clicks it admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Granted {
    pub used: i64,
    pub position: i64,
    pub turns: i64,
    pub granted: i64,
}

impl Granted {
    /// What a row with `used` clicks of `cap` (0: no limit) at rotation `position` admits of
    /// `asked`: as many clicks as its limit has room for.
    pub fn of(used: i64, cap: i64, position: i64, asked: Asked) -> Granted {
        let granted = if cap <= 0 {
            asked.clicks
        } else {
            asked.clicks.min((cap - used).max(0))
        };
        Granted {
            used,
            position,
            turns: asked.turns,
            granted,
        }
    }

    /// The rotation position once the admitted clicks have taken their turns.
    pub fn next_position(&self) -> i64 {
        if self.turns > 0 {
            (self.position % self.turns + self.granted) % self.turns
        } else {
            self.position
        }
    }
}

/// Reserves one click of link `id` through `queue`, whose task `start` begins with the first
/// click: counted unless its click limit is reached, its rotation position moved on when it
/// has `rotation` URLs.
pub async fn reserve(
    queue: &Queue,
    start: impl FnOnce(mpsc::UnboundedReceiver<Request>),
    id: Id,
    rotation: u32,
) -> Result<Reserved> {
    let stopped = || Error::Unavailable("the click reserver has stopped".into());
    let (answer, answered) = oneshot::channel();
    let queue = queue.get_or_init(|| {
        let (tx, rx) = mpsc::unbounded_channel();
        start(rx);
        tx
    });
    let request = Request {
        id,
        rotation,
        answer,
    };
    queue.send(request).map_err(|_| stopped())?;
    answered.await.map_err(|_| stopped())?
}

/// Takes requests as they come and reserves them in groups, `in_flight` groups at most at once,
/// each by `reserve_group` (which answers, per link it found, what its row admitted); ends when
/// the queue's sender is dropped.
pub async fn run<F, Fut>(
    mut queue: mpsc::UnboundedReceiver<Request>,
    in_flight: usize,
    reserve_group: F,
) where
    F: Fn(BTreeMap<Id, Asked>) -> Fut,
    Fut: Future<Output = Result<HashMap<Id, Granted>>> + Send + 'static,
{
    let slots = Arc::new(Semaphore::new(in_flight.max(1)));
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let mut group = Vec::new();
        if queue.recv_many(&mut group, GROUP_MAX).await == 0 {
            return;
        }
        let reserved = reserve_group(asked(&group));
        tokio::spawn(async move {
            answer(group, reserved.await);
            drop(slot);
        });
    }
}

/// What a group asks of each of its links, in id order (the order rows are locked in, so two
/// groups never wait for each other in a circle).
fn asked(group: &[Request]) -> BTreeMap<Id, Asked> {
    let mut asked: BTreeMap<Id, Asked> = BTreeMap::new();
    for r in group {
        asked
            .entry(r.id)
            .or_insert(Asked {
                clicks: 0,
                turns: i64::from(r.rotation),
            })
            .clicks += 1;
    }
    asked
}

/// Tells each click of the group what its link's row decided, in the order the clicks came.
fn answer(group: Vec<Request>, outcome: Result<HashMap<Id, Granted>>) {
    let mut rows = match outcome {
        Ok(rows) => rows,
        Err(e) => {
            for r in group {
                let _ = r.answer.send(Err(e.clone()));
            }
            return;
        }
    };
    for r in group {
        let reserved = match rows.get_mut(&r.id) {
            None => Reserved::NoQuota,
            Some(g) if g.granted <= 0 => Reserved::Refused,
            Some(g) => {
                g.used += 1;
                g.granted -= 1;
                g.position = if g.turns > 0 {
                    (g.position % g.turns + 1) % g.turns
                } else {
                    g.position
                };
                Reserved::Counted {
                    clicks: g.used.max(0) as u64,
                    next: g.position.clamp(0, i64::from(u32::MAX)) as u32,
                }
            }
        };
        let _ = r.answer.send(Ok(reserved));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(id: Id, rotation: u32) -> (Request, oneshot::Receiver<Result<Reserved>>) {
        let (answer, answered) = oneshot::channel();
        (
            Request {
                id,
                rotation,
                answer,
            },
            answered,
        )
    }

    #[test]
    fn a_group_answers_each_click_in_the_order_it_came() {
        let (group, mut answers): (Vec<_>, Vec<_>) =
            [(1, 0), (2, 3), (1, 0), (2, 3), (1, 0), (9, 0)]
                .into_iter()
                .map(|(id, rotation)| request(id, rotation))
                .unzip();
        assert_eq!(
            asked(&group),
            BTreeMap::from([
                (
                    1,
                    Asked {
                        clicks: 3,
                        turns: 0
                    }
                ),
                (
                    2,
                    Asked {
                        clicks: 2,
                        turns: 3
                    }
                ),
                (
                    9,
                    Asked {
                        clicks: 1,
                        turns: 0
                    }
                ),
            ])
        );
        // Link 1 has room for two more of its three clicks; link 2 is unlimited, at turn 2 of
        // 3; link 9 is not found.
        let one = Granted::of(
            8,
            10,
            0,
            Asked {
                clicks: 3,
                turns: 0,
            },
        );
        let two = Granted::of(
            5,
            0,
            2,
            Asked {
                clicks: 2,
                turns: 3,
            },
        );
        assert_eq!((one.granted, two.granted, two.next_position()), (2, 2, 1));
        answer(group, Ok(HashMap::from([(1, one), (2, two)])));
        let got: Vec<Reserved> = answers
            .iter_mut()
            .map(|a| a.try_recv().unwrap().unwrap())
            .collect();
        assert_eq!(
            got,
            [
                Reserved::Counted { clicks: 9, next: 0 },
                Reserved::Counted { clicks: 6, next: 0 },
                Reserved::Counted {
                    clicks: 10,
                    next: 0
                },
                Reserved::Counted { clicks: 7, next: 1 },
                Reserved::Refused,
                Reserved::NoQuota,
            ]
        );
    }
}
