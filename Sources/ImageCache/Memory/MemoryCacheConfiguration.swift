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
    /// How many times a key must be offered (`setValue`) before it is stored, as nginx's
    /// `proxy_cache_min_uses`; 1 to 255. With 1 (the default) every value is stored at once. With
    /// 2, the first offer of a key is only remembered and the second stores it: a stream of
    /// keys used once (a service behind a CDN, which answers the repeats itself) then holds no
    /// memory, while a key used twice is cached from then on. Offers are remembered in a small
    /// table per shard (256 keys each, 64 shards), which forgets a key once others take its slot.
    public var minimumUses: Int {
        didSet { minimumUses = Self.clampedUses(minimumUses) }
    }

    /// Limits and policies; by default `defaultCostLimit`, no count limit, entries up to a
    /// quarter of the cost limit, no expiry, every value stored at its first offer.
    public init(
        costLimit: Int = MemoryCacheConfiguration.defaultCostLimit, countLimit: Int = .max,
        maximumEntryCostFraction: Double = 0.25, defaultTimeToLive: TimeInterval? = nil, minimumUses: Int = 1
    ) {
        self.costLimit = Self.clamped(costLimit)
        self.countLimit = countLimit
        self.maximumEntryCostFraction = maximumEntryCostFraction
        self.defaultTimeToLive = defaultTimeToLive
        self.minimumUses = Self.clampedUses(minimumUses)
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

    /// Offers are counted in a byte per remembered key.
    private static func clampedUses(_ uses: Int) -> Int { min(max(uses, 1), 255) }
}
