/// Counters of a `MemoryCache`, summed over its shards.
public struct MemoryCacheStatistics: Sendable, Hashable {
    /// Lookups that returned a value.
    public var hits: Int
    /// Lookups that found nothing (or an expired value).
    public var misses: Int
    /// Entries removed to make room (not by `remove`, `removeAll` or expiry).
    public var evictions: Int
    /// Entries held.
    public var count: Int
    /// Their total cost.
    public var totalCost: Int

    /// Statistics with the given values, for example for a test double.
    public init(hits: Int, misses: Int, evictions: Int, count: Int, totalCost: Int) {
        self.hits = hits
        self.misses = misses
        self.evictions = evictions
        self.count = count
        self.totalCost = totalCost
    }
}
