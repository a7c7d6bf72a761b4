import Foundation

/// Limits and policies of a `MemoryCache`.
public struct MemoryCacheConfiguration: Sendable, Hashable {
    /// Largest total cost kept. For decoded bitmaps, cost should be the bytes they occupy
    /// (`bytesPerRow × height`), so the limit is a memory budget in bytes.
    public var costLimit: Int
    /// Largest number of entries kept.
    public var countLimit: Int
    /// Entries costing more than this fraction of `costLimit` are not stored at all: one huge
    /// image would otherwise evict everything else for a single use.
    public var maximumEntryCostFraction: Double
    /// Lifetime of entries stored without their own time-to-live; `nil` means no expiry.
    public var defaultTimeToLive: TimeInterval?

    public init(costLimit: Int = MemoryCacheConfiguration.defaultCostLimit, countLimit: Int = .max,
                maximumEntryCostFraction: Double = 0.25, defaultTimeToLive: TimeInterval? = nil) {
        self.costLimit = costLimit
        self.countLimit = countLimit
        self.maximumEntryCostFraction = maximumEntryCostFraction
        self.defaultTimeToLive = defaultTimeToLive
    }

    /// 15% of physical memory, at most 512 MiB: room for a few hundred 1080 px thumbnails on a
    /// phone-sized device without becoming the process's largest consumer.
    public static var defaultCostLimit: Int {
        let fraction = Double(ProcessInfo.processInfo.physicalMemory) * 0.15
        return Int(min(fraction, Double(512 << 20)))
    }
}
