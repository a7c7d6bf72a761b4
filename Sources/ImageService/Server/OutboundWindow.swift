import Locking

/// How many bytes of an answer a connection has been handed and not yet written to its socket:
/// the writer of an answer waits here for room, so an answer nobody reads holds its own bytes
/// (charged to the memory budget) and at most ``limit`` more in the connection, never a copy of
/// itself.
///
/// The channel's own writability is not enough: it is updated on the event loop, and a writer
/// on another thread hands over slices faster than a busy loop marks the channel unwritable —
/// an 18 MB answer to a client that read nothing went whole into the connection's buffers,
/// uncharged, while the loop was busy with other connections. Here the writer counts every
/// slice before it hands it over (so the bytes between it and the event loop count too), and
/// the connection's handler uncounts it when its write completes or fails, under one lock.
final class OutboundWindow: @unchecked Sendable {
    // @unchecked: `pending`, `waiters` and `closed` are only touched while `lock` is held.
    /// Bytes handed over and not written that make a writer wait.
    let limit: Int
    private let lock = Lock()
    private var pending = 0
    private var closed = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    /// Told when the window fills (true: the client is not reading) and when it drains.
    private let onStall: @Sendable (Bool) -> Void

    init(limit: Int = 256 << 10, onStall: @escaping @Sendable (Bool) -> Void = { _ in }) {
        self.limit = limit
        self.onStall = onStall
    }

    /// `bytes` of an answer are about to be handed to the connection (the writer's side).
    func handedOver(_ bytes: Int) {
        let stalled = lock.withLock { () -> Bool in
            let before = pending
            pending += bytes
            return before < limit && pending >= limit
        }
        if stalled { onStall(true) }
    }

    /// `bytes` handed over earlier were written (or dropped with the connection): the
    /// connection's side. (Bodies the service did not count, Hummingbird's own error answers,
    /// can only make the window a little larger, never stick it.)
    func written(_ bytes: Int) {
        let (ready, drained) = lock.withLock { () -> ([CheckedContinuation<Void, Never>], Bool) in
            let before = pending
            pending = max(0, pending - bytes)
            guard pending < limit else { return ([], false) }
            defer { waiters.removeAll() }
            return (waiters, before >= limit)
        }
        if drained { onStall(false) }
        ready.forEach { $0.resume() }
    }

    /// The connection is gone: nothing waits for room any more (the next write fails).
    func close() {
        let ready = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            closed = true
            defer { waiters.removeAll() }
            return waiters
        }
        ready.forEach { $0.resume() }
    }

    /// Returns once fewer than ``limit`` bytes are waiting to be written, or the connection is
    /// gone.
    func waitForRoom() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = lock.withLock { () -> Bool in
                guard !closed, pending >= limit else { return true }
                waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Bytes handed over and not yet written (tests).
    var bytesPending: Int { lock.withLock { pending } }
}
