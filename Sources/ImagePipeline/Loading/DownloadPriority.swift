import Locking

/// How urgent a download is, now and as it changes: the highest priority of the image requests
/// that wait for it. The pipeline hands one to ``DataLoading/loadData(for:maximumBodySize:priority:progress:)``
/// and updates it in the same step as the download's place in the queue; a loader passes it
/// on to its transport (``URLSessionDataLoader`` sets `URLSessionTask.priority`, which HTTP/2
/// and HTTP/3 turn into stream priorities).
public final class DownloadPriority: @unchecked Sendable {
    // @unchecked: `state` is only touched while `lock` is held.
    private struct State {
        var current: ImageRequest.Priority
        var observers: [@Sendable (ImageRequest.Priority) -> Void] = []
    }
    private let lock = Lock()
    private var state: State

    /// A priority that starts at `priority` (tests and loaders that wrap another).
    public init(_ priority: ImageRequest.Priority) {
        state = State(current: priority)
    }

    /// The download's priority now.
    public var current: ImageRequest.Priority { lock.withLock { state.current } }

    /// Calls `observer` with every later change, on the thread that makes it, which may hold
    /// the pipeline's locks: the observer only stores the value (it must not call back into the
    /// pipeline or wait).
    public func onChange(_ observer: @escaping @Sendable (ImageRequest.Priority) -> Void) {
        lock.withLock { state.observers.append(observer) }
    }

    /// Sets the priority and tells the observers, if it changed.
    func update(_ priority: ImageRequest.Priority) {
        let observers = lock.withLock { () -> [@Sendable (ImageRequest.Priority) -> Void] in
            guard state.current != priority else { return [] }
            state.current = priority
            return state.observers
        }
        observers.forEach { $0(priority) }
    }
}
