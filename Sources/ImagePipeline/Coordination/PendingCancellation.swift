import Locking

/// Something that can be cancelled but may not exist yet when the cancellation arrives (a job
/// subscription being made, a transfer being started, a waiter being queued): a cancellation
/// that comes first is kept, and whoever attaches the handle later cancels it at once. The one
/// answer to "cancelled before the handle exists" in the pipeline.
final class PendingCancellation<Handle: Sendable>: @unchecked Sendable {
    // @unchecked: the state is only touched under `lock`.
    private let lock = Lock()
    private var handle: Handle?
    private var cancelled = false

    init() {}

    /// Keeps `handle` for a later `cancel()`. Returns false when the cancellation came first:
    /// the caller must then cancel `handle` itself (and nothing is kept).
    func attach(_ handle: Handle) -> Bool {
        lock.withLock {
            guard !cancelled else { return false }
            self.handle = handle
            return true
        }
    }

    /// Marks it cancelled; returns the handle to cancel, if one was attached (once).
    func cancel() -> Handle? {
        lock.withLock {
            cancelled = true
            defer { handle = nil }
            return handle
        }
    }

    /// Forgets the handle (its work is done); a later `cancel()` finds nothing to cancel.
    func detach() {
        lock.withLock { handle = nil }
    }

    var isCancelled: Bool { lock.withLock { cancelled } }

    /// The attached handle, if any (nil once cancelled or detached).
    var currentHandle: Handle? { lock.withLock { handle } }
}
