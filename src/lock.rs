//! The one way this crate takes a mutex.

/// Locks `m`, taking the data of a poisoned lock as it is: a panic inside a handler must not
/// make the session (or stream) it touched unusable, and no critical section here leaves its
/// data half-changed.
pub fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
