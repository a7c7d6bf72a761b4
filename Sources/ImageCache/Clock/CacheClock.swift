import Foundation

/// The time source for expiry, injectable so tests can move time forward instead of sleeping.
///
/// Wall-clock `Date`, not a monotonic instant: disk entries carry HTTP expiry dates that must
/// survive restarts, and memory entries use the same clock so one fake drives both in tests.
public protocol CacheClock: Sendable {
    var now: Date { get }
}

/// The system clock.
public struct SystemClock: CacheClock {
    /// The system clock.
    public init() {}
    /// The current wall-clock time.
    public var now: Date { Date() }
}
