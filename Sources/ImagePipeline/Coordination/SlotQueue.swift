import HeapModule
import ImageCodec

/// The waiting line for one kind of slot (downloads, decodes): a value inside the coordinator's
/// state, only ever changed under its lock.
///
/// Waiters start highest priority first, first come first served among equals. A priority
/// change pushes a new heap entry and leaves the old one to be skipped when it surfaces, so a
/// change and a release cost O(log n); skipped entries are counted and the heap is rebuilt
/// from the live waiters once they outnumber them, so cancelled and re-prioritised waiters
/// never pile up. The invariant: every waiter has exactly one live entry, at its priority.
///
/// Every change drains the queue (entering, a priority change, leaving, a release): what fits
/// now starts now, so a small urgent decode never waits for unrelated work to finish, a raised
/// priority takes effect at once, and a cancelled head does not block the waiters behind it.
struct SlotQueue {
    struct Waiter {
        let job: JobID
        var priority: ImageRequest.Priority
        let arrival: Int
        /// Bytes the work may hold while it runs (its decode plan); 0 when only the count limits it.
        let cost: Int
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct Entry: Comparable {
        let priority: ImageRequest.Priority
        let arrival: Int
        let id: Int

        /// The heap's maximum is the highest priority, then the earliest arrival.
        static func < (lhs: Entry, rhs: Entry) -> Bool {
            lhs.priority != rhs.priority ? lhs.priority < rhs.priority : lhs.arrival > rhs.arrival
        }
    }

    /// Slots that may run at once.
    let limit: Int
    /// The memory the running work may hold together, if the queue admits by memory too.
    let memory: MemoryBudget?
    private(set) var running = 0
    private(set) var waiters: [Int: Waiter] = [:]
    private var heap = Heap<Entry>()
    private var staleEntries = 0
    private var nextArrival = 0

    init(limit: Int, memory: MemoryBudget?) {
        self.limit = max(1, limit)
        self.memory = memory
    }

    /// Queues a waiter at `priority` and drains the queue: `id` is the new waiter's, and
    /// `granted` the waiters that may start now, in order (the new one among them when it is
    /// the highest waiter and fits).
    mutating func enter(
        job: JobID, priority: ImageRequest.Priority, cost: Int, continuation: CheckedContinuation<Bool, Never>
    ) -> (id: Int, granted: [Waiter]) {
        nextArrival += 1
        let id = nextArrival
        waiters[id] = Waiter(job: job, priority: priority, arrival: id, cost: cost, continuation: continuation)
        heap.insert(Entry(priority: priority, arrival: id, id: id))
        return (id, grant())
    }

    /// The waiter's job changed priority: its entry moves with it. Returns the waiters that
    /// may start now.
    mutating func reprioritize(_ id: Int, to priority: ImageRequest.Priority) -> [Waiter] {
        guard var waiter = waiters[id], waiter.priority != priority else { return [] }
        waiter.priority = priority
        waiters[id] = waiter
        heap.insert(Entry(priority: priority, arrival: waiter.arrival, id: id))
        staleEntries += 1
        compactIfNeeded()
        return grant()
    }

    /// Removes a waiter that leaves without a slot (cancelled): the waiter, nil if it is gone
    /// already, and the waiters that may start now it no longer stands in their way.
    mutating func remove(_ id: Int) -> (removed: Waiter?, granted: [Waiter]) {
        guard let waiter = waiters.removeValue(forKey: id) else { return (nil, []) }
        staleEntries += 1
        compactIfNeeded()
        return (waiter, grant())
    }

    /// A slot (and its `cost`) is given back; returns the waiters that may start now, in order.
    mutating func release(cost: Int) -> [Waiter] {
        running -= 1
        memory?.release(cost)
        return grant()
    }

    /// Waiters that fit now, highest first; stops at the first that does not fit, so a large
    /// decode is not overtaken for ever by small ones behind it.
    private mutating func grant() -> [Waiter] {
        var granted: [Waiter] = []
        while let entry = heap.max {
            guard let waiter = waiters[entry.id], waiter.priority == entry.priority else {
                // From before a priority change, or for a waiter that left.
                _ = heap.popMax()
                staleEntries -= 1
                continue
            }
            guard admits(waiter.cost) else { break }
            _ = heap.popMax()
            waiters[entry.id] = nil
            granted.append(waiter)
        }
        return granted
    }

    /// Takes a slot for work of `cost` if the count and the memory allow: a cost over the whole
    /// budget runs alone (it has to run some time; the decoding limits bound it).
    private mutating func admits(_ cost: Int) -> Bool {
        guard running < limit else { return false }
        if let memory, !memory.reserve(cost, orAlone: true) { return false }
        running += 1
        return true
    }

    private mutating func compactIfNeeded() {
        guard staleEntries > 64, staleEntries > waiters.count else { return }
        heap = Heap(waiters.map { Entry(priority: $0.value.priority, arrival: $0.value.arrival, id: $0.key) })
        staleEntries = 0
    }

    /// Entries in the heap, live or stale (for tests of the bound).
    var heapCount: Int { heap.count }
}
