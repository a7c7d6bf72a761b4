import Foundation
import Locking

/// A thread-safe, least-recently-used in-memory cache with cost and count limits.
///
/// Unlike `NSCache`, eviction order is LRU (reads count as use) and happens at the moment a
/// limit is exceeded, so what stays is predictable. Keys are spread over independently locked
/// shards, so threads hitting the cache together rarely wait for each other; each entry records
/// when it was last used, and eviction removes the least recently used entry across all shards,
/// so the order is that of one list. Every operation is O(1) but eviction, which looks at each
/// shard's oldest entry. A hit never hops to an actor.
///
/// ```swift
/// let thumbnails = MemoryCache<URL, Bitmap>()
/// thumbnails.setValue(bitmap, forKey: url, cost: bitmap.byteCount)
/// let cached = thumbnails.value(forKey: url)
/// ```
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    // @unchecked: each shard's state is only touched under its lock, the totals under theirs.
    /// The limits the cache was created with.
    public let configuration: MemoryCacheConfiguration
    @usableFromInline let clock: any CacheClock
    @usableFromInline let shards: [MemoryCacheShard<Key, Value>]
    @usableFromInline let shardMask: Int
    /// Total cost and count across shards; changed on insert and removal only, never on a hit.
    @usableFromInline let totals = MemoryCacheTotals()
    /// One evictor at a time, so two inserts that both overshoot do not evict twice as much.
    @usableFromInline let evictionLock = Lock()

    /// A cache with the given limits; `clock` drives time-to-live (inject one in tests).
    public convenience init(configuration: MemoryCacheConfiguration = MemoryCacheConfiguration(), clock: any CacheClock = SystemClock()) {
        self.init(configuration: configuration, clock: clock, shardCount: 64)
    }

    /// `shardCount` is rounded up to a power of two.
    init(configuration: MemoryCacheConfiguration, clock: any CacheClock, shardCount: Int) {
        self.configuration = configuration
        self.clock = clock
        var count = 1
        while count < shardCount { count *= 2 }
        shards = (0..<count).map { _ in MemoryCacheShard() }
        shardMask = count - 1
    }

    @inlinable
    func shard(for key: Key) -> MemoryCacheShard<Key, Value> {
        shards[key.hashValue & shardMask]
    }

    /// The value for `key`, marking it most recently used; `nil` on a miss or once expired.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        let shard = shard(for: key)
        var expired: LRUList<Key, Value>.Entry?
        let value: Value? = shard.lock.withLock {
            guard let entry = shard.list.touch(key, stamp: MonotonicStamp.now()) else {
                shard.misses += 1
                return nil
            }
            if let expiry = entry.expiry, expiry <= clock.now {
                expired = shard.list.remove(key)
                shard.misses += 1
                return nil
            }
            shard.hits += 1
            return entry.value
        }
        if let expired { totals.subtract(cost: expired.cost, count: 1) }
        return value
    }

    /// Stores `value` at `cost` (for bitmaps, their bytes: `Bitmap.byteCount`), replacing any
    /// value for `key`, then evicts least recently used entries until both limits hold.
    ///
    /// Returns false, storing nothing and removing any older value for `key`, when `cost` is
    /// above `maximumEntryCost`: one huge value would otherwise evict everything else for a
    /// single use. Returns false, storing nothing, when `key` has been offered fewer than
    /// `minimumUses` times (a value already stored for it is replaced at once).
    @inlinable @discardableResult
    public func setValue(_ value: Value, forKey key: Key, cost: Int, timeToLive: TimeInterval? = nil) -> Bool {
        guard let stored = insert(value, forKey: key, cost: cost, timeToLive: timeToLive, if: nil) else {
            removeValue(forKey: key) // a stale smaller version must not outlive the new one
            return false
        }
        return stored
    }

    /// Replaces the value for `key` with `value` only if there is one and `current` accepts it,
    /// in one step under the cache's lock: a compare-and-set for writers that refresh what they
    /// read earlier (a 304 confirming an entry) and must not overwrite a newer value stored
    /// meanwhile, nor bring back one removed meanwhile. Returns whether it stored `value`.
    @inlinable @discardableResult
    public func replaceValue(
        _ value: Value, forKey key: Key, cost: Int, timeToLive: TimeInterval? = nil, if current: (Value) -> Bool
    ) -> Bool {
        withoutActuallyEscaping(current) { insert(value, forKey: key, cost: cost, timeToLive: timeToLive, if: $0) } ?? false
    }

    /// The store both writers share: nil (nothing stored) when `cost` is over the entry limit;
    /// otherwise, under the shard's lock, `value` stored (only over a present value `current`
    /// accepts, when there is a `current`), the totals moved and the cache evicted down to its
    /// limits. Returns whether it stored `value`.
    @inlinable
    func insert(_ value: Value, forKey key: Key, cost: Int, timeToLive: TimeInterval?, if current: ((Value) -> Bool)?) -> Bool? {
        let cost = max(0, cost)
        guard cost <= configuration.maximumEntryCost, configuration.countLimit > 0 else { return nil }
        let lifetime = timeToLive ?? configuration.defaultTimeToLive
        let expiry = lifetime.map { clock.now.addingTimeInterval($0) }
        let shard = shard(for: key)
        let (stored, replaced) = shard.lock.withLock { () -> (Bool, LRUList<Key, Value>.Entry?) in
            if let current {
                guard let existing = shard.list.peek(key), current(existing.value) else { return (false, nil) }
            } else if configuration.minimumUses > 1, shard.list.peek(key) == nil,
                shard.offers(of: key) < configuration.minimumUses
            {
                return (false, nil)
            }
            return (true, shard.list.insert(key, value: value, cost: cost, expiry: expiry, stamp: MonotonicStamp.now()))
        }
        guard stored else { return false }
        totals.add(cost: cost - (replaced?.cost ?? 0), count: replaced == nil ? 1 : 0)
        evictIfNeeded()
        return true // `replaced` is released here, after the lock
    }

    /// Removes and returns the value for `key`, if any.
    @inlinable @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        let shard = shard(for: key)
        guard let removed = shard.lock.withLock({ shard.list.remove(key) }) else { return nil }
        totals.subtract(cost: removed.cost, count: 1)
        return removed.value
    }

    /// Removes every value whose key `shouldRemove` picks, for example all sizes of one URL's
    /// image when its response was invalidated. It looks at every key, one shard at a time
    /// under that shard's lock: meant for rare events, not for every request. The values are
    /// released after the locks are dropped.
    public func removeValues(where shouldRemove: (Key) -> Bool) {
        for shard in shards {
            let removed = shard.lock.withLock { () -> [LRUList<Key, Value>.Entry] in
                shard.list.positions.keys.filter(shouldRemove).compactMap { shard.list.remove($0) }
            }
            totals.subtract(cost: removed.reduce(0) { $0 + $1.cost }, count: removed.count)
        }
    }

    /// Empties the cache; the values are released after the locks are dropped.
    public func removeAll() {
        for shard in shards {
            var old = LRUList<Key, Value>()
            shard.lock.withLock { swap(&old, &shard.list) }
            totals.subtract(cost: old.totalCost, count: old.count)
        }
    }

    /// Evicts least recently used entries until the total cost is at most `cost`, for example
    /// when the system reports memory pressure.
    public func trim(toCost cost: Int) {
        evictionLock.withLock {
            while totals.exceeds(costLimit: max(0, cost), countLimit: .max), evictLeastRecent() {}
        }
    }

    /// Hits, misses, evictions, count and total cost.
    public var statistics: MemoryCacheStatistics {
        var statistics = MemoryCacheStatistics(hits: 0, misses: 0, evictions: 0, count: 0, totalCost: 0)
        for shard in shards {
            shard.lock.withLock {
                statistics.hits += shard.hits
                statistics.misses += shard.misses
                statistics.evictions += shard.evictions
                statistics.count += shard.list.count
                statistics.totalCost += shard.list.totalCost
            }
        }
        return statistics
    }

    @usableFromInline
    func evictIfNeeded() {
        guard totals.exceeds(costLimit: configuration.costLimit, countLimit: configuration.countLimit) else { return }
        evictionLock.withLock {
            while totals.exceeds(costLimit: configuration.costLimit, countLimit: configuration.countLimit), evictLeastRecent() {}
        }
    }

    /// Removes the entry used longest ago across all shards: each shard's least recent entry is
    /// its oldest, so the oldest of those is the oldest overall. False when the cache is empty.
    @usableFromInline
    func evictLeastRecent() -> Bool {
        var oldest: (shard: Int, stamp: UInt64)?
        for (index, shard) in shards.enumerated() {
            let stamp = shard.lock.withLock { shard.list.leastRecentEntry?.stamp }
            if let stamp, stamp < oldest?.stamp ?? .max { oldest = (index, stamp) }
        }
        guard let oldest else { return false }
        let shard = shards[oldest.shard]
        let evicted = shard.lock.withLock { () -> LRUList<Key, Value>.Entry? in
            let entry = shard.list.removeLeastRecent()
            if entry != nil { shard.evictions += 1 }
            return entry
        }
        if let evicted { totals.subtract(cost: evicted.cost, count: 1) }
        return true // `evicted` is released here, after the lock
    }
}

/// One independently locked part of a `MemoryCache`.
@usableFromInline
final class MemoryCacheShard<Key: Hashable, Value>: @unchecked Sendable {
    // @unchecked: the state below is only touched while `lock` is held, which is also why the
    // runtime's exclusivity checks are switched off for it (they cost more than the rest of a hit).
    @usableFromInline let lock = Lock()
    @exclusivity(unchecked) @usableFromInline var list = LRUList<Key, Value>()
    @exclusivity(unchecked) @usableFromInline var hits = 0
    @exclusivity(unchecked) @usableFromInline var misses = 0
    @exclusivity(unchecked) @usableFromInline var evictions = 0
    /// Keys offered to a cache with `minimumUses` above 1, by hash, and how often (allocated at
    /// the first such offer): a direct-mapped table, so a key is forgotten when another takes
    /// its slot, and two keys whose hashes collide in full count as one (their values are still
    /// told apart by the list).
    @exclusivity(unchecked) @usableFromInline var offeredHashes: [Int] = []
    @exclusivity(unchecked) @usableFromInline var offerCounts: [UInt8] = []
    /// Keeps the next shard's header and counters off this one's cache lines: every hit
    /// retains its shard and bumps its counters, and shards are allocated one after another.
    @usableFromInline let padding = CacheLinePadding()

    @usableFromInline init() {}

    @inlinable static var offerSlots: Int { 256 }

    /// Counts one more offer of `key` and returns how many the table remembers, this one
    /// included. Called under `lock`.
    @inlinable func offers(of key: Key) -> Int {
        if offeredHashes.isEmpty {
            offeredHashes = [Int](repeating: 0, count: Self.offerSlots)
            offerCounts = [UInt8](repeating: 0, count: Self.offerSlots)
        }
        let hash = key.hashValue
        // The low bits chose the shard: the slot comes from others.
        let slot = (hash >> 8) & (Self.offerSlots - 1)
        if offeredHashes[slot] == hash, offerCounts[slot] > 0 {
            if offerCounts[slot] < .max { offerCounts[slot] += 1 }
        } else {
            (offeredHashes[slot], offerCounts[slot]) = (hash, 1)
        }
        return Int(offerCounts[slot])
    }
}

/// Total cost and count of a `MemoryCache`, under their own lock.
@usableFromInline
final class MemoryCacheTotals: @unchecked Sendable {
    @usableFromInline let lock = Lock()
    @exclusivity(unchecked) @usableFromInline var cost = 0
    @exclusivity(unchecked) @usableFromInline var count = 0

    @usableFromInline init() {}

    @inlinable func add(cost delta: Int, count added: Int) {
        lock.withLock {
            cost += delta
            count += added
        }
    }

    @inlinable func subtract(cost delta: Int, count removed: Int) {
        add(cost: -delta, count: -removed)
    }

    @inlinable func exceeds(costLimit: Int, countLimit: Int) -> Bool {
        lock.withLock { cost > costLimit || count > countLimit }
    }
}

/// Monotonic nanoseconds, for last-use stamps: no shared counter, so stamping a hit writes no
/// memory that other threads also write.
@usableFromInline
enum MonotonicStamp {
    @inlinable static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}
