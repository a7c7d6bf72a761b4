import Dispatch

extension ImageRequest {
    /// How urgently an image is needed. Shared work runs at the highest priority of the
    /// requests waiting for it, and queued work is started highest first.
    public enum Priority: Int, Sendable, Hashable, Comparable, CaseIterable, Codable {
        /// Work nobody waits for yet, e.g. prefetching far ahead.
        case veryLow
        /// Prefetching the next rows.
        case low
        /// A cell on screen (the default).
        case normal
        /// An image the user is looking at, e.g. a detail screen.
        case high
        /// Needed right now, ahead of everything else.
        case veryHigh

        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }
}

extension ImageRequest.Priority {
    /// The QoS of the thread a decode at this priority runs on: what is on screen (`.normal`
    /// and up) at `.userInitiated`, prefetching (`.low`, `.veryLow`) at `.utility`, so that
    /// where the system honours QoS a visible cell's decode runs ahead of a prefetch's on a
    /// busy machine. Not `.background`: Darwin throttles its I/O and may hold it for minutes.
    var threadQoS: DispatchQoS.QoSClass {
        self >= .normal ? .userInitiated : .utility
    }
}
