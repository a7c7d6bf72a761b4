import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct TaskCancellable: Cancellable {
    let task: URLSessionTask
    func cancel() { task.cancel() }
}

/// Work whose parts start later (a cache lookup off the frame thread, then a download; a
/// download, then a decode): a cancel reaches whichever part exists, a part set after the
/// cancel is cancelled at once, and a part not yet started asks `isCancelled`.
final class DeferredTask: Cancellable, @unchecked Sendable {
    private let lock = NSLock()
    private var cancelled = false
    private var current: (any Cancellable)?
    /// The download's completion handler ran: nothing may cancel that task any more.
    private var downloadCompleted = false

    var isCancelled: Bool { lock.withLock { cancelled } }

    var part: (any Cancellable)? {
        get { lock.withLock { current } }
        set {
            let cancelNow = lock.withLock { () -> Bool in
                guard !downloadCompleted else { return false }
                current = newValue
                return cancelled
            }
            if cancelNow { newValue?.cancel() }
        }
    }

    /// Resumes `task` and makes it the current part (resumed first: corelibs' URLSession does
    /// not expect a cancel before `resume`).
    func start(_ task: URLSessionTask) {
        task.resume()
        part = TaskCancellable(task: task)
    }

    /// Called first thing in the download's completion handler. A cancel after it must not
    /// reach the task: corelibs' URLSession traps ("a task that is not in the registry") when
    /// a cancel lands on a task it has already completed.
    func downloadFinished() {
        lock.withLock {
            downloadCompleted = true
            current = nil
        }
    }

    func cancel() {
        let part = lock.withLock { () -> (any Cancellable)? in
            cancelled = true
            return current
        }
        part?.cancel()
    }
}

/// Prefetches by product, so scrolling past them can cancel them.
final class PrefetchTasks: @unchecked Sendable {
    private let lock = NSLock()
    private var tasks: [Int: any Cancellable] = [:]

    func start(_ product: Int, _ make: () -> any Cancellable) {
        lock.withLock {
            if tasks[product] == nil { tasks[product] = make() }
        }
    }

    func finished(_ product: Int) { _ = lock.withLock { tasks.removeValue(forKey: product) } }

    func cancel(_ products: [Int]) {
        let cancelled = lock.withLock { products.compactMap { tasks.removeValue(forKey: $0) } }
        cancelled.forEach { $0.cancel() }
    }
}
