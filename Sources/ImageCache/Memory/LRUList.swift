import Foundation

/// Least-recently-used bookkeeping with O(1) lookup, touch, insert and removal.
///
/// Entries live in one array and the recency links in two plain `Int` arrays, so reordering
/// on a hit touches no reference-counted memory (linking through a `[Node?]` costs a retain
/// and release of key and value per link update, several times slower). Not thread-safe:
/// the caches guard it with their lock. Inlinable so clients' caches are specialised for
/// their key and value types instead of going through generic witness tables.
@usableFromInline
struct LRUList<Key: Hashable, Value> {
    @inlinable init() {}

    @usableFromInline
    struct Entry {
        @usableFromInline var key: Key
        @usableFromInline var value: Value
        @usableFromInline var cost: Int
        @usableFromInline var expiry: Date?
        /// When the entry was last used (monotonic nanoseconds), for callers that compare the
        /// least recent entries of several lists; 0 when unused.
        @usableFromInline var stamp: UInt64

        @inlinable
        init(key: Key, value: Value, cost: Int, expiry: Date?, stamp: UInt64 = 0) {
            self.key = key
            self.value = value
            self.cost = cost
            self.expiry = expiry
            self.stamp = stamp
        }
    }

    @inlinable static var none: Int { -1 }
    @usableFromInline var entries: [Entry?] = []
    /// Towards the most recently used end.
    @usableFromInline var previous: [Int] = []
    /// Towards the least recently used end.
    @usableFromInline var next: [Int] = []
    @usableFromInline var freeSlots: [Int] = []
    @usableFromInline var positions: [Key: Int] = [:]
    @usableFromInline var mostRecent = LRUList.none
    @usableFromInline var leastRecent = LRUList.none
    @usableFromInline private(set) var totalCost = 0

    @inlinable var count: Int { positions.count }

    /// Value, cost and expiry for `key`, which becomes the most recently used (at `stamp`).
    @inlinable mutating func touch(_ key: Key, stamp: UInt64 = 0) -> (value: Value, cost: Int, expiry: Date?)? {
        guard let position = positions[key] else { return nil }
        moveToFront(position)
        entries[position]?.stamp = stamp
        return entries[position].map { ($0.value, $0.cost, $0.expiry) }
    }

    /// Value, cost and expiry for `key` without changing the order.
    @inlinable func peek(_ key: Key) -> (value: Value, cost: Int, expiry: Date?)? {
        guard let position = positions[key] else { return nil }
        return entries[position].map { ($0.value, $0.cost, $0.expiry) }
    }

    /// Inserts or replaces; the entry becomes the most recently used. Returns the entry it
    /// replaced, so the caller can release it outside its lock.
    @discardableResult
    @inlinable mutating func insert(_ key: Key, value: Value, cost: Int, expiry: Date?, stamp: UInt64 = 0) -> Entry? {
        if let position = positions[key] {
            let old = entries[position]
            totalCost += cost - (old?.cost ?? 0)
            entries[position] = Entry(key: key, value: value, cost: cost, expiry: expiry, stamp: stamp)
            moveToFront(position)
            return old
        }
        let entry = Entry(key: key, value: value, cost: cost, expiry: expiry, stamp: stamp)
        let position: Int
        if let free = freeSlots.popLast() {
            position = free
            entries[position] = entry
        } else {
            position = entries.count
            entries.append(entry)
            previous.append(Self.none)
            next.append(Self.none)
        }
        linkAtFront(position)
        positions[key] = position
        totalCost += cost
        return nil
    }

    @discardableResult
    @inlinable mutating func remove(_ key: Key) -> Entry? {
        guard let position = positions[key] else { return nil }
        return remove(at: position)
    }

    @inlinable mutating func removeLeastRecent() -> Entry? {
        leastRecent == Self.none ? nil : remove(at: leastRecent)
    }

    /// The least recently used entry whose key `skip` does not contain, without removing it.
    @inlinable func leastRecent(skipping skip: Set<Key>) -> (key: Key, value: Value, cost: Int)? {
        var position = leastRecent
        while position != Self.none, let entry = entries[position] {
            if !skip.contains(entry.key) { return (entry.key, entry.value, entry.cost) }
            position = previous[position]
        }
        return nil
    }

    /// The least recently used entry, without removing it.
    @inlinable var leastRecentEntry: Entry? {
        leastRecent == Self.none ? nil : entries[leastRecent]
    }

    /// Keys and costs from least to most recently used, without touching anything.
    @inlinable var entriesFromLeastRecent: [(key: Key, cost: Int)] {
        var result: [(key: Key, cost: Int)] = []
        result.reserveCapacity(count)
        var position = leastRecent
        while position != Self.none, let entry = entries[position] {
            result.append((entry.key, entry.cost))
            position = previous[position]
        }
        return result
    }

    @inlinable mutating func removeAll() {
        self = LRUList()
    }

    @inlinable mutating func remove(at position: Int) -> Entry? {
        guard let entry = entries[position] else { return nil }
        unlink(position)
        entries[position] = nil
        freeSlots.append(position)
        positions[entry.key] = nil
        totalCost -= entry.cost
        return entry
    }

    @inlinable mutating func unlink(_ position: Int) {
        let (before, after) = (previous[position], next[position])
        if before != Self.none { next[before] = after } else { mostRecent = after }
        if after != Self.none { previous[after] = before } else { leastRecent = before }
    }

    @inlinable mutating func linkAtFront(_ position: Int) {
        previous[position] = Self.none
        next[position] = mostRecent
        if mostRecent != Self.none { previous[mostRecent] = position }
        mostRecent = position
        if leastRecent == Self.none { leastRecent = position }
    }

    @inlinable mutating func moveToFront(_ position: Int) {
        guard position != mostRecent else { return }
        unlink(position)
        linkAtFront(position)
    }
}
