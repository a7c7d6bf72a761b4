import Foundation

/// Limits and policies of a `MemoryCache`.
public struct MemoryCacheConfiguration: Sendable, Hashable {
    /// Largest total cost kept. For decoded bitmaps, cost should be the bytes they occupy
    /// (`Bitmap.byteCount`), so the limit is a memory budget in bytes.
    public var costLimit: Int {
        didSet { costLimit = Self.clamped(costLimit) }
    }
    /// Largest number of entries kept.
    public var countLimit: Int
    /// Entries costing more than this fraction of `costLimit` (at most 1) are not stored at
    /// all: one huge image would otherwise evict everything else for a single use.
    public var maximumEntryCostFraction: Double
    /// Lifetime of entries stored without their own time-to-live; `nil` means no expiry.
    public var defaultTimeToLive: TimeInterval?

    /// Limits and policies; by default `defaultCostLimit`, no count limit, entries up to a
    /// quarter of the cost limit, no expiry.
    public init(
        costLimit: Int = MemoryCacheConfiguration.defaultCostLimit, countLimit: Int = .max,
        maximumEntryCostFraction: Double = 0.25, defaultTimeToLive: TimeInterval? = nil
    ) {
        self.costLimit = Self.clamped(costLimit)
        self.countLimit = countLimit
        self.maximumEntryCostFraction = maximumEntryCostFraction
        self.defaultTimeToLive = defaultTimeToLive
    }

    /// The largest cost one entry may have: `maximumEntryCostFraction` of `costLimit`, and never
    /// more than the limit itself.
    public var maximumEntryCost: Int {
        let fraction = maximumEntryCostFraction.isFinite ? min(max(maximumEntryCostFraction, 0), 1) : 0
        return Int(Double(costLimit) * fraction)
    }

    /// 15% of physical memory, at most 512 MiB: room for a few hundred 1080 px thumbnails on a
    /// phone-sized device without becoming the process's largest consumer.
    public static var defaultCostLimit: Int {
        let fraction = Double(ProcessInfo.processInfo.physicalMemory) * 0.15
        return Int(min(fraction, Double(512 << 20)))
    }

    /// Costs are summed, so the limit stays far from `Int.max`: a limit plus one entry's cost
    /// never overflows.
    private static func clamped(_ limit: Int) -> Int { min(max(limit, 0), Int.max / 4) }
}
