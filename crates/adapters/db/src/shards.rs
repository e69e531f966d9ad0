//! PostgreSQL connections kept on the thread that uses them.
//!
//! A tokio-postgres connection is driven by a task on the thread that opened it. With one
//! pool shared by every HTTP worker thread, a request on one worker handed a connection
//! opened by another sends its query to that other thread and waits for the answer to
//! come back: two cross-thread wake-ups (an `eventfd` write each, and often a sleeping
//! thread woken) on about half the requests. So the pool is split: each HTTP worker thread
//! that [`Database::pin_current_thread`](crate::Database::pin_current_thread) pinned uses
//! a shard of its own, whose connections it opened itself; every other thread (start-up,
//! the background loops, the command line, tests) uses the first shard. The sizes add up
//! to `db_max_connections`. docs/benchmarks.md ("Connections kept on their thread")
//! measures it; docs/operations.md ("Database connections") tells how the total is split.

use deadpool::managed::{Object, PoolError};
use diesel_async::AsyncPgConnection;
use diesel_async::pooled_connection::deadpool::Pool;
use std::cell::RefCell;
use std::sync::{Arc, Mutex};

type Manager = diesel_async::pooled_connection::AsyncDieselConnectionManager<AsyncPgConnection>;

thread_local! {
    /// This thread's shard, once pinned; `None` on threads that are not HTTP workers.
    static HOLD: RefCell<Option<Hold>> = const { RefCell::new(None) };
}

/// The calling thread's shard, if it is pinned.
fn held_shard() -> Option<usize> {
    HOLD.with_borrow(|hold| hold.as_ref().map(|hold| hold.shard))
}

/// A pinned thread's hold on its shard, released when the thread ends: a worker thread
/// that actix starts again after one died takes the shard the dead one left.
struct Hold {
    shard: usize,
    holders: Arc<Mutex<Vec<usize>>>,
}

impl Drop for Hold {
    fn drop(&mut self) {
        let mut holders = self.holders.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = holders.get_mut(self.shard) {
            *count = count.saturating_sub(1);
        }
    }
}

/// The shards of the PostgreSQL pool: `[0]` for threads that are not pinned, then one per
/// HTTP worker thread (none when the pool is not split).
pub(crate) struct PgPools {
    shards: Box<[Pool<AsyncPgConnection>]>,
    /// How many live pinned threads hold each shard (`[0]` is never held).
    holders: Arc<Mutex<Vec<usize>>>,
}

impl PgPools {
    /// One shard per size of [`shard_sizes`], built by `build`.
    pub(crate) fn new<E>(
        sizes: &[usize],
        build: impl Fn(usize) -> Result<Pool<AsyncPgConnection>, E>,
    ) -> Result<Self, E> {
        let shards = sizes.iter().map(|&size| build(size)).collect::<Result<Vec<_>, E>>()?;
        let holders = Arc::new(Mutex::new(vec![0; shards.len()]));
        Ok(PgPools { shards: shards.into_boxed_slice(), holders })
    }

    /// Makes the calling thread an HTTP worker with a shard of its own: the worker shard
    /// the fewest live threads hold (the first such), so the workers actix starts get one
    /// each, and a worker started again after one died takes the shard it left. Without
    /// worker shards, or on a thread already pinned, nothing changes.
    pub(crate) fn pin_current_thread(&self) {
        if self.shards.len() < 2 || held_shard().is_some() {
            return;
        }
        let mut holders = self.holders.lock().unwrap_or_else(|e| e.into_inner());
        let Some((shard, count)) = holders.iter_mut().enumerate().skip(1).min_by_key(|(_, count)| **count)
        else {
            return;
        };
        *count += 1;
        drop(holders);
        HOLD.set(Some(Hold { shard, holders: self.holders.clone() }));
    }

    /// The shard of the calling thread.
    pub(crate) fn pool(&self) -> &Pool<AsyncPgConnection> {
        let index = held_shard().filter(|&shard| shard < self.shards.len()).unwrap_or(0);
        &self.shards[index]
    }

    /// A connection from the calling thread's shard.
    pub(crate) async fn get(
        &self,
    ) -> Result<Object<Manager>, PoolError<diesel_async::pooled_connection::PoolError>> {
        self.pool().get().await
    }

    /// Closes every shard.
    pub(crate) fn close(&self) {
        for shard in &self.shards {
            shard.close();
        }
    }
}

/// How `total` connections are split for `workers` HTTP worker threads: the threads that
/// are not workers (start-up, background loops) get `total / (workers + 1)`, at least one,
/// and the workers share the rest as evenly as it divides. Without workers, or with fewer
/// connections than it takes to give every worker two and the rest one, one pool of
/// `total` (at least 1) serves every thread.
pub(crate) fn shard_sizes(total: usize, workers: usize) -> Vec<usize> {
    let total = total.max(1);
    if workers == 0 || total < 2 * workers + 1 {
        return vec![total];
    }
    let background = (total / (workers + 1)).max(1);
    let shared = total - background;
    let mut sizes = vec![background];
    sizes.extend((0..workers).map(|w| shared / workers + usize::from(w < shared % workers)));
    sizes
}

#[cfg(test)]
mod tests {
    use super::{PgPools, shard_sizes};
    use diesel_async::AsyncPgConnection;
    use diesel_async::pooled_connection::AsyncDieselConnectionManager;
    use diesel_async::pooled_connection::deadpool::Pool;
    use std::sync::Barrier;

    /// Shards of `sizes` whose connections would go nowhere (none is opened here).
    fn pools(sizes: &[usize]) -> PgPools {
        PgPools::new(sizes, |size| {
            let manager =
                AsyncDieselConnectionManager::<AsyncPgConnection>::new("postgres://nowhere.invalid/db");
            Pool::builder(manager).max_size(size).build()
        })
        .expect("shards")
    }

    /// Which shard the calling thread is given, by its size (the sizes below all differ).
    fn size_here(pools: &PgPools) -> usize {
        pools.pool().status().max_size
    }

    #[test]
    fn each_pinned_thread_has_a_shard_of_its_own_and_the_others_share_the_first() {
        let pools = pools(&[2, 3, 4]);
        assert_eq!(size_here(&pools), 2, "a thread that is not a worker");
        let all_pinned = Barrier::new(3);
        let mut workers: Vec<usize> = std::thread::scope(|scope| {
            let started: Vec<_> = (0..3)
                .map(|_| {
                    scope.spawn(|| {
                        pools.pin_current_thread();
                        pools.pin_current_thread();
                        let size = size_here(&pools);
                        all_pinned.wait();
                        size
                    })
                })
                .collect();
            started.into_iter().map(|t| t.join().expect("worker")).collect()
        });
        // Two workers get the two worker shards, whichever pins first; the third, pinned
        // while they live, shares the first of them. Pinning again changes nothing.
        workers.sort_unstable();
        assert_eq!(workers, [3, 3, 4], "the first of the least held shards");
        assert_eq!(size_here(&pools), 2, "this thread is still not a worker");
    }

    #[test]
    fn a_worker_started_again_takes_the_shard_the_dead_one_left() {
        let pools = pools(&[2, 3, 4]);
        let (pinned, leave) = (Barrier::new(2), Barrier::new(2));
        std::thread::scope(|scope| {
            let live = scope.spawn(|| {
                pools.pin_current_thread();
                let size = size_here(&pools);
                pinned.wait();
                leave.wait();
                size
            });
            pinned.wait();
            let dead = scope.spawn(|| {
                pools.pin_current_thread();
                size_here(&pools)
            });
            let dead = dead.join().expect("the worker that ends");
            let successor = scope
                .spawn(|| {
                    pools.pin_current_thread();
                    size_here(&pools)
                })
                .join()
                .expect("its successor");
            leave.wait();
            let live = live.join().expect("the worker that stays");
            assert_eq!(live, 3, "the first worker shard");
            assert_eq!(dead, 4, "the other one");
            assert_eq!(successor, 4, "the shard the ended worker left, not the live one's");
        });
    }

    #[test]
    fn without_worker_shards_pinning_changes_nothing() {
        let pools = pools(&[5]);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                pools.pin_current_thread();
                assert_eq!(size_here(&pools), 5);
            });
        });
    }

    #[test]
    fn the_shards_add_up_to_the_total() {
        for total in 0..40 {
            for workers in 0..9 {
                let sizes = shard_sizes(total, workers);
                assert_eq!(sizes.iter().sum::<usize>(), total.max(1), "{total} over {workers}");
                assert!(sizes.iter().all(|&s| s >= 1), "{total} over {workers}: {sizes:?}");
                if sizes.len() > 1 {
                    assert_eq!(sizes.len(), workers + 1);
                    assert!(sizes[1..].iter().all(|&s| s >= 2), "{total} over {workers}: {sizes:?}");
                    let (min, max) = (sizes[1..].iter().min(), sizes[1..].iter().max());
                    assert!(max.zip(min).is_some_and(|(max, min)| max - min <= 1), "{sizes:?}");
                }
            }
        }
    }

    #[test]
    fn the_default_pool_of_ten_over_two_workers() {
        assert_eq!(shard_sizes(10, 2), vec![3, 4, 3]);
        assert_eq!(shard_sizes(10, 0), vec![10]);
        assert_eq!(shard_sizes(4, 2), vec![4], "too few to split");
        assert_eq!(shard_sizes(5, 2), vec![1, 2, 2]);
        // The examples of docs/operations.md "Database connections".
        assert_eq!(shard_sizes(10, 4), vec![2, 2, 2, 2, 2]);
        assert_eq!(shard_sizes(32, 8), vec![3, 4, 4, 4, 4, 4, 3, 3, 3]);
        assert_eq!(shard_sizes(16, 8), vec![16], "fewer than 2 x 8 + 1");
    }
}
