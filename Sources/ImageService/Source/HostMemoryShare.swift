import ImageCodec
import Locking

/// The memory budget as source downloads see it: what one host's bodies hold together is capped
/// at a share of the whole, so one origin (eight slow downloads announcing 64 MiB each, say)
/// cannot hold the memory every other host's requests need. Bytes are reserved here and in the
/// budget together, and given back to both together.
final class HostMemoryShare: @unchecked Sendable {
    // @unchecked: `held` is only touched while `lock` is held.
    let budget: MemoryBudget
    /// The most one host's bodies may hold at once.
    let maximumPerHost: Int
    private let lock = Lock()
    private var held: [String: Int] = [:]

    /// A quarter of `budget` a host, room for the other three quarters' hosts whatever one does,
    /// but never less than `floor` (the largest source a download may have, so that one can
    /// always be had), nor more than the budget.
    init(budget: MemoryBudget, fraction: Double = 0.25, floor: Int = 0) {
        self.budget = budget
        maximumPerHost = min(budget.capacity, max(1, Int(Double(budget.capacity) * fraction), floor))
    }

    /// Reserves `bytes` for `host`, in its share and in the budget, or neither.
    func reserve(_ bytes: Int, for host: String) -> Bool {
        guard bytes > 0 else { return true }
        let admitted = lock.withLock { () -> Bool in
            let now = held[host, default: 0]
            guard now + bytes <= maximumPerHost else { return false }
            held[host] = now + bytes
            return true
        }
        guard admitted else { return false }
        if budget.reserve(bytes) { return true }
        unhold(bytes, for: host)
        return false
    }

    /// Gives back `bytes` of `host`'s, to its share and to the budget.
    func release(_ bytes: Int, for host: String) {
        guard bytes > 0 else { return }
        unhold(bytes, for: host)
        budget.release(bytes)
    }

    /// What `host`'s bodies hold now.
    func bytesHeld(by host: String) -> Int { lock.withLock { held[host, default: 0] } }

    private func unhold(_ bytes: Int, for host: String) {
        lock.withLock {
            let left = held[host, default: 0] - bytes
            held[host] = left > 0 ? left : nil
        }
    }
}
