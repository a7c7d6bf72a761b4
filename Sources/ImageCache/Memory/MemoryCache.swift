import Foundation

/// A thread-safe, strictly least-recently-used in-memory cache with cost and count limits.
///
/// Unlike `NSCache`, eviction order is exact LRU (reads count as use) and happens at the
/// moment a limit is exceeded, so what stays is predictable. Every operation is O(1) and
/// takes one short pthread-mutex critical section; a hit never hops to an actor.
///
/// ```swift
/// let thumbnails = MemoryCache<URL, Bitmap>()
/// thumbnails.setValue(bitmap, forKey: url, cost: bitmap.byteCount)
/// let cached = thumbnails.value(forKey: url)
/// ```
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    // @unchecked: all mutable state below is only touched while `lock` is held, which is
    // also why the runtime's exclusivity checks are switched off for it (they cost more than
    // the rest of a hit).
    public let configuration: MemoryCacheConfiguration
    @usableFromInline let clock: any CacheClock
    @usableFromInline let lock = Lock()
    @exclusivity(unchecked) @usableFromInline var list = LRUList<Key, Value>()
    @exclusivity(unchecked) @usableFromInline var hits = 0
    @exclusivity(unchecked) @usableFromInline var misses = 0
    @exclusivity(unchecked) @usableFromInline var evictions = 0

    public init(configuration: MemoryCacheConfiguration = MemoryCacheConfiguration(), clock: any CacheClock = SystemClock()) {
        self.configuration = configuration
        self.clock = clock
    }

    /// The value for `key`, marking it most recently used; `nil` on a miss or once expired.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        var expired: LRUList<Key, Value>.Entry?
        let value: Value? = lock.withLock {
            guard let entry = list.touch(key) else {
                misses += 1
                return nil
            }
            if let expiry = entry.expiry, expiry <= clock.now {
                expired = list.remove(key)
                misses += 1
                return nil
            }
            hits += 1
            return entry.value
        }
        _ = expired  // released after unlocking
        return value
    }

    /// Stores `value`. Returns false, storing nothing, when `cost` exceeds
    /// `maximumEntryCostFraction` of the cost limit. Least recently used entries are evicted
    /// until both limits hold again.
    @inlinable @discardableResult
    public func setValue(_ value: Value, forKey key: Key, cost: Int = 1, timeToLive: TimeInterval? = nil) -> Bool {
        let cost = max(0, cost)
        guard Double(cost) <= Double(configuration.costLimit) * configuration.maximumEntryCostFraction else {
            removeValue(forKey: key)  // a stale smaller version must not outlive the new one
            return false
        }
        let lifetime = timeToLive ?? configuration.defaultTimeToLive
        let expiry = lifetime.map { clock.now.addingTimeInterval($0) }
        var evicted: [Value] = []
        lock.withLock {
            list.insert(key, value: value, cost: cost, expiry: expiry)
            while list.totalCost > configuration.costLimit || list.count > configuration.countLimit,
                  let entry = list.removeLeastRecent() {
                evicted.append(entry.value)
                evictions += 1
            }
        }
        return true
    }

    /// Removes and returns the value for `key`, if any.
    @inlinable @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        lock.withLock { list.remove(key)?.value }
    }

    /// Empties the cache; the values are released after the lock is dropped.
    public func removeAll() {
        var old = LRUList<Key, Value>()
        lock.withLock { swap(&old, &list) }
    }

    /// Evicts least recently used entries until the total cost is at most `cost`, for example
    /// when the system reports memory pressure.
    public func trim(toCost cost: Int) {
        var evicted: [Value] = []
        lock.withLock {
            while list.totalCost > max(0, cost), let entry = list.removeLeastRecent() {
                evicted.append(entry.value)
                evictions += 1
            }
        }
    }

    /// Hits, misses, evictions, count and total cost, read together.
    public var statistics: MemoryCacheStatistics {
        lock.withLock {
            MemoryCacheStatistics(hits: hits, misses: misses, evictions: evictions, count: list.count, totalCost: list.totalCost)
        }
    }
}
