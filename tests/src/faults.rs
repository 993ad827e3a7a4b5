//! Fault injection for the storage trait: a [`FaultStore`] wraps any [`ShardStore`] and
//! damages chosen objects on the way out — missing, truncated, one byte flipped, a storage
//! error, or slow (a future that yields many times before answering, so no test sleeps) —
//! and records what was read.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use wikantik::error::{Error, Result};
use wikantik::reader::ShardStore;

/// What happens to one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The object does not exist (`Ok(None)`).
    Missing,
    /// Only the first `n` bytes arrive.
    Truncated(usize),
    /// The byte at `index % len` has all its bits flipped.
    FlippedByte(usize),
    /// The store itself fails (network error, permission denied).
    StoreError,
    /// The object arrives intact after the future has returned `Pending` this many times.
    Slow(u32),
}

impl Fault {
    /// Every kind of damage, one representative each.
    pub const DAMAGE: [Fault; 4] = [Fault::Missing, Fault::Truncated(7), Fault::FlippedByte(40), Fault::StoreError];
}

/// A [`ShardStore`] that applies [`Fault`]s to named objects and counts reads.
#[derive(Clone)]
pub struct FaultStore<S> {
    inner: S,
    faults: Arc<Mutex<BTreeMap<String, Fault>>>,
    reads: Arc<AtomicUsize>,
    names: Arc<Mutex<Vec<String>>>,
}

impl<S: ShardStore + Clone> FaultStore<S> {
    pub fn new(inner: S) -> FaultStore<S> {
        FaultStore { inner, faults: Arc::default(), reads: Arc::default(), names: Arc::default() }
    }

    /// Damage `name` from now on (shared by every clone).
    pub fn inject(&self, name: &str, fault: Fault) {
        self.faults.lock().unwrap().insert(name.to_string(), fault);
    }

    /// Stop damaging anything.
    pub fn heal(&self) {
        self.faults.lock().unwrap().clear();
    }

    /// Reads so far.
    pub fn reads(&self) -> usize {
        self.reads.load(Ordering::SeqCst)
    }

    /// The names read so far, in order (with repeats).
    pub fn read_names(&self) -> Vec<String> {
        self.names.lock().unwrap().clone()
    }
}

/// A future that returns `Pending` `n` times (waking itself each time) before `Ready`.
pub struct YieldTimes(pub u32);

impl Future for YieldTimes {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 == 0 {
            return Poll::Ready(());
        }
        self.0 -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl<S: ShardStore> ShardStore for FaultStore<S> {
    async fn get(&self, name: &str) -> Result<Option<Vec<u8>>> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.names.lock().unwrap().push(name.to_string());
        let fault = self.faults.lock().unwrap().get(name).copied();
        if let Some(Fault::Slow(n)) = fault {
            YieldTimes(n).await;
        }
        let bytes = self.inner.get(name).await?;
        Ok(match (fault, bytes) {
            (Some(Fault::Missing), _) => None,
            (Some(Fault::StoreError), _) => return Err(Error::Invalid(format!("injected storage failure reading {name}"))),
            (Some(Fault::Truncated(n)), Some(b)) => Some(b[..n.min(b.len().saturating_sub(1))].to_vec()),
            (Some(Fault::FlippedByte(i)), Some(mut b)) if !b.is_empty() => {
                let at = i % b.len();
                b[at] ^= 0xff;
                Some(b)
            }
            (_, b) => b,
        })
    }
}
