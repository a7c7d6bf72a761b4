import Locking

/// Keeps the requests of grid cells that scrolled off before their image arrived running, at
/// the prefetch's priority, instead of cancelling them, up to a limit.
///
/// Cancelling a scrolled-off request throws away a download that a user scrolling back will
/// need again; never cancelling has no bound, and keeps work for rows the user left ahead of
/// the rows now on screen. Parking is in between: a parked task runs at `.low` by default (with
/// the prefetches, behind every visible request), finishes into the caches, and a cell that
/// shows the image again makes a new request, which joins the parked one's work in flight
/// (raising it to its own priority) or hits the cache. Beyond ``limit`` parked tasks still
/// running, the oldest is cancelled.
///
/// The revisit after a flick needs exactly the images that scrolled off, so parking recovers
/// part of what cancelling loses, and `priority: nil` (each task keeps its own priority)
/// recovers all of it, at the cost of the rows the user scrolls on into; the grid article and
/// the strategy benchmark give the figures.
///
/// A parked task's completion still runs: key it by what the cell shows now, not by the cell
/// (see <doc:LoadingImagesInAGrid>).
///
/// ```swift
/// override func prepareForReuse() {
///     if let task { scrolledOff.park(task) }   // instead of task.cancel()
///     task = nil
/// }
/// ```
public final class ScrolledOffTasks: @unchecked Sendable {
    // @unchecked: `parked` is only touched while `lock` is held.
    /// How many parked tasks may still be running; the oldest beyond it is cancelled.
    public let limit: Int
    /// The priority parked tasks run at; nil: each keeps its own.
    public let priority: ImageRequest.Priority?
    private let lock = Lock()
    private var parked: [ImageTask] = []

    /// Parks at most `limit` running tasks (about six screens of a two-column grid by default),
    /// at `priority` (nil: each task's own).
    public init(limit: Int = 96, priority: ImageRequest.Priority? = .low) {
        self.limit = max(0, limit)
        self.priority = priority
    }

    /// The cell no longer shows `task`'s image: sets it to ``priority`` and keeps it running,
    /// cancelling the oldest parked tasks beyond ``limit``. A task that already finished is
    /// not kept.
    public func park(_ task: ImageTask) {
        guard task.result == nil else { return }
        if let priority { task.priority = priority }
        let evicted = lock.withLock { () -> [ImageTask] in
            parked.removeAll { $0.result != nil || $0 === task }
            parked.append(task)
            let excess = max(0, parked.count - limit)
            defer { parked.removeFirst(excess) }
            return Array(parked.prefix(excess))
        }
        evicted.forEach { $0.cancel() }
    }

    /// Parked tasks still running.
    public var count: Int {
        lock.withLock {
            parked.removeAll { $0.result != nil }
            return parked.count
        }
    }

    /// Cancels every parked task (the grid went away).
    public func cancelAll() {
        let all = lock.withLock { () -> [ImageTask] in
            defer { parked.removeAll() }
            return parked
        }
        all.forEach { $0.cancel() }
    }

    deinit {
        parked.forEach { $0.cancel() }
    }
}
