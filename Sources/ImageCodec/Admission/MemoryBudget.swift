import Foundation
import Locking

/// Bytes a process lets its decodes (and whatever else it counts) hold at once: each holder
/// reserves what its plan says before allocating it, and gives it back when done.
///
/// A reservation that does not fit is refused at once rather than waited for: a caller holding
/// other memory (a downloaded source, say) that waited for more could wait for memory that only
/// it, or another waiter, would free. The caller answers with back-pressure instead — a 429, a
/// retry later. What the budget admits never passes ``capacity``.
///
/// ```swift
/// let budget = MemoryBudget(capacity: 512 << 20)
/// let plan = try source.plan(options)
/// guard budget.reserve(plan.memoryBytes) else { throw Overloaded() }
/// defer { budget.release(plan.memoryBytes) }
/// let bitmap = try source.decode(options).bitmap
/// ```
public final class MemoryBudget: @unchecked Sendable {
    // @unchecked: `used` and `highWater` are only touched while `lock` is held.
    /// What the holders may hold together, in bytes.
    public let capacity: Int
    private let lock = Lock()
    private var used = 0
    private var highWater = 0
    /// Told the bytes in use after every change, while the lock is held, so that a gauge fed
    /// from here can never go back to a stale value.
    private let onChange: @Sendable (Int) -> Void
    /// Told, after the lock is released, every time bytes are given back: whoever waits for
    /// memory (a queue of renders) looks again.
    private var releaseObservers: [@Sendable () -> Void] = []

    /// What the decodes running at once may plan to hold together when the caller names no
    /// budget (a batch's `ThumbnailOptions.memoryBudget`, the pipeline's decode limit): an
    /// eighth of physical memory, at least 128 MiB and at most 1 GiB. Two 16-20 MP progressive
    /// JPEGs (50-60 MB each) or two HEICs (110-290 MB) run side by side where the memory is
    /// there, and two 250 MP decodes do not on a phone.
    public static var defaultDecodeBudget: Int {
        min(1 << 30, max(128 << 20, Int(clamping: ProcessInfo.processInfo.physicalMemory / 8)))
    }

    /// A budget of `capacity` bytes; `onChange` sees the bytes in use after every change.
    public init(capacity: Int, onChange: @escaping @Sendable (_ bytesInUse: Int) -> Void = { _ in }) {
        self.capacity = max(0, capacity)
        self.onChange = onChange
    }

    /// Reserves `bytes` when they fit beside what is held; false (and nothing reserved) when
    /// they do not.
    ///
    /// With `orAlone`, `bytes` larger than the whole capacity are reserved when nothing else is
    /// held: for a caller that queues work (a pipeline's decodes, a batch) such work has to run
    /// some time, and running it alone is the least it can hold. A caller that answers with
    /// back-pressure instead (a service) leaves it false and refuses such work outright.
    public func reserve(_ bytes: Int, orAlone: Bool = false) -> Bool {
        guard bytes >= 0 else { return false }
        return lock.withLock {
            guard bytes <= capacity - used || (orAlone && used == 0) else { return false }
            used += bytes
            highWater = max(highWater, used)
            onChange(used)
            return true
        }
    }

    /// Gives back `bytes` reserved earlier.
    public func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        let observers = lock.withLock { () -> [@Sendable () -> Void] in
            used = max(0, used - bytes)
            onChange(used)
            return releaseObservers
        }
        for observer in observers { observer() }
    }

    /// Calls `observer` after every release, on the releasing thread, without the budget's lock
    /// held (it may reserve): for a queue that waits for memory others hold.
    public func observeReleases(_ observer: @escaping @Sendable () -> Void) {
        lock.withLock { releaseObservers.append(observer) }
    }

    /// Bytes reserved now.
    public var bytesInUse: Int { lock.withLock { used } }

    /// The most reserved at once so far.
    public var peakBytesInUse: Int { lock.withLock { highWater } }
}
