//! A wait for a batch that timed out long before its slice: what traceq does before it
//! waits again.

use std::time::Duration;

/// After a wait that timed out long before its slice (a driver, or a layer beneath, that
/// answers `VK_TIMEOUT` at once), traceq pauses this long before it waits again, so that
/// it does not spin a core the application and the driver need.
const EARLY_TIMEOUT_PAUSE: Duration = Duration::from_millis(1);

/// The pause after a wait of `slice` that timed out after `waited`, if it came early.
pub fn pause_after_timeout(waited: Duration, slice: Duration) -> Option<Duration> {
    (waited < slice / 4).then_some(EARLY_TIMEOUT_PAUSE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_that_came_at_once_is_followed_by_a_pause() {
        let slice = Duration::from_millis(100);
        assert_eq!(
            pause_after_timeout(Duration::ZERO, slice),
            Some(EARLY_TIMEOUT_PAUSE)
        );
        assert_eq!(
            pause_after_timeout(Duration::from_millis(24), slice),
            Some(EARLY_TIMEOUT_PAUSE)
        );
        assert_eq!(pause_after_timeout(Duration::from_millis(25), slice), None);
        assert_eq!(pause_after_timeout(slice, slice), None);
    }
}
