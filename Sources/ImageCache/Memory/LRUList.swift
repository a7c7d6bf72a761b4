import Foundation

/// Least-recently-used bookkeeping with O(1) lookup, touch, insert and removal.
///
/// Nodes live in one array and link to each other by index, so a hit moves no memory and
/// does no reference counting. Not thread-safe: `MemoryCache` guards it with its lock.
struct LRUList<Key: Hashable, Value> {
    struct Node {
        var key: Key
        var value: Value
        var cost: Int
        var expiry: Date?
        /// Towards the most recently used end.
        var previous: Int
        /// Towards the least recently used end.
        var next: Int
    }

    private static var none: Int { -1 }
    private var nodes: [Node?] = []
    private var freeSlots: [Int] = []
    private var positions: [Key: Int] = [:]
    private var mostRecent = LRUList.none
    private var leastRecent = LRUList.none
    private(set) var totalCost = 0

    var count: Int { positions.count }

    /// The entry for `key`, marked as most recently used.
    mutating func touch(_ key: Key) -> Node? {
        guard let position = positions[key] else { return nil }
        moveToFront(position)
        return nodes[position]
    }

    /// Inserts or replaces; the entry becomes the most recently used.
    mutating func insert(_ key: Key, value: Value, cost: Int, expiry: Date?) {
        if let position = positions[key] {
            totalCost += cost - nodes[position]!.cost
            nodes[position]!.value = value
            nodes[position]!.cost = cost
            nodes[position]!.expiry = expiry
            moveToFront(position)
            return
        }
        let node = Node(key: key, value: value, cost: cost, expiry: expiry, previous: Self.none, next: mostRecent)
        let position: Int
        if let free = freeSlots.popLast() {
            position = free
            nodes[position] = node
        } else {
            position = nodes.count
            nodes.append(node)
        }
        if mostRecent != Self.none { nodes[mostRecent]!.previous = position }
        mostRecent = position
        if leastRecent == Self.none { leastRecent = position }
        positions[key] = position
        totalCost += cost
    }

    @discardableResult
    mutating func remove(_ key: Key) -> Node? {
        guard let position = positions[key] else { return nil }
        return remove(at: position)
    }

    mutating func removeLeastRecent() -> Node? {
        leastRecent == Self.none ? nil : remove(at: leastRecent)
    }

    /// Keys and costs from least to most recently used, without touching anything.
    var entriesFromLeastRecent: [(key: Key, cost: Int)] {
        var result: [(key: Key, cost: Int)] = []
        result.reserveCapacity(count)
        var position = leastRecent
        while position != Self.none, let node = nodes[position] {
            result.append((node.key, node.cost))
            position = node.previous
        }
        return result
    }

    /// The least recently used entry, without touching it.
    var leastRecentNode: Node? { leastRecent == Self.none ? nil : nodes[leastRecent] }

    mutating func removeAll() {
        self = LRUList()
    }

    private mutating func remove(at position: Int) -> Node? {
        guard let node = nodes[position] else { return nil }
        unlink(position, node)
        nodes[position] = nil
        freeSlots.append(position)
        positions[node.key] = nil
        totalCost -= node.cost
        return node
    }

    private mutating func unlink(_ position: Int, _ node: Node) {
        if node.previous != Self.none { nodes[node.previous]!.next = node.next } else { mostRecent = node.next }
        if node.next != Self.none { nodes[node.next]!.previous = node.previous } else { leastRecent = node.previous }
    }

    private mutating func moveToFront(_ position: Int) {
        guard position != mostRecent, let node = nodes[position] else { return }
        unlink(position, node)
        nodes[position]!.previous = Self.none
        nodes[position]!.next = mostRecent
        if mostRecent != Self.none { nodes[mostRecent]!.previous = position }
        mostRecent = position
        if leastRecent == Self.none { leastRecent = position }
    }
}
