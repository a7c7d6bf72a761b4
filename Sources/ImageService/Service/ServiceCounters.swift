import Synchronization

extension ThumbnailService {
    /// What the service has done since it started.
    public struct Statistics: Sendable, Hashable {
        /// Renders that decoded a source (one per coalesced group of identical requests).
        public var decodes: Int
        /// Requests that joined a render already in flight.
        public var coalescedRequests: Int
        /// Requests answered from the result cache (memory or disk).
        public var resultHits: Int
        /// Requests answered 304 Not Modified.
        public var notModified: Int
    }
}

/// The counters behind `ThumbnailService.Statistics`.
final class ServiceCounters: Sendable {
    private let decodes = Atomic<Int>(0)
    private let coalesced = Atomic<Int>(0)
    private let resultHits = Atomic<Int>(0)
    private let notModified = Atomic<Int>(0)

    func addDecode() { decodes.add(1, ordering: .relaxed) }
    func addCoalesced() { coalesced.add(1, ordering: .relaxed) }
    func addResultHit() { resultHits.add(1, ordering: .relaxed) }
    func addNotModified() { notModified.add(1, ordering: .relaxed) }

    var snapshot: ThumbnailService.Statistics {
        .init(
            decodes: decodes.load(ordering: .relaxed), coalescedRequests: coalesced.load(ordering: .relaxed),
            resultHits: resultHits.load(ordering: .relaxed), notModified: notModified.load(ordering: .relaxed))
    }
}
