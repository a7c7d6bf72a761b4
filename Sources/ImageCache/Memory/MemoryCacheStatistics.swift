/// Counters of a `MemoryCache`, read together under its lock.
public struct MemoryCacheStatistics: Sendable, Hashable {
    public var hits: Int
    public var misses: Int
    /// Entries removed to make room (not by `remove`, `removeAll` or expiry).
    public var evictions: Int
    public var count: Int
    public var totalCost: Int
}
