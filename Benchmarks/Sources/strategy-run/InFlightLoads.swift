import Foundation

/// One load per product in flight, shared by every display and prefetch that asks for it, as
/// the engine coalesces: without it, a display load started while the same product's prefetch
/// runs downloads the image a second time. Each subscriber's completion runs once (nil when it
/// cancelled or the load failed); the load itself is cancelled when its last subscriber cancels.
final class InFlightLoads<Value: Sendable>: @unchecked Sendable {
    /// Guarded by the owner's lock.
    private final class Load: @unchecked Sendable {
        var work: (any Cancellable)?
        var subscribers: [Int: @Sendable (Value?) -> Void] = [:]
        var abandoned = false
    }

    private struct Subscription: Cancellable {
        let cancelHandler: @Sendable () -> Void
        func cancel() { cancelHandler() }
    }

    private let lock = NSLock()
    private var loads: [Int: Load] = [:]
    private var nextSubscriber = 0

    /// Joins the product's load, or starts one with `start` (which calls its argument once with
    /// the result).
    func subscribe(_ product: Int, start: (@escaping @Sendable (Value?) -> Void) -> any Cancellable,
                   completion: @escaping @Sendable (Value?) -> Void) -> any Cancellable {
        let (load, subscriber, isNew) = lock.withLock { () -> (Load, Int, Bool) in
            nextSubscriber += 1
            let existing = loads[product]
            let load = existing ?? Load()
            loads[product] = load
            load.subscribers[nextSubscriber] = completion
            return (load, nextSubscriber, existing == nil)
        }
        if isNew {
            let work = start { [self] value in finish(product, load, value) }
            let cancelNow = lock.withLock { () -> Bool in
                load.work = work
                return load.abandoned
            }
            if cancelNow { work.cancel() }
        }
        return Subscription { [self] in unsubscribe(product, load, subscriber) }
    }

    private func finish(_ product: Int, _ load: Load, _ value: Value?) {
        let subscribers = lock.withLock { () -> [@Sendable (Value?) -> Void] in
            if loads[product] === load { loads[product] = nil }
            defer { load.subscribers = [:] }
            return Array(load.subscribers.values)
        }
        subscribers.forEach { $0(value) }
    }

    private func unsubscribe(_ product: Int, _ load: Load, _ subscriber: Int) {
        let (completion, work) = lock.withLock { () -> ((@Sendable (Value?) -> Void)?, (any Cancellable)?) in
            guard let completion = load.subscribers.removeValue(forKey: subscriber) else { return (nil, nil) }
            guard load.subscribers.isEmpty else { return (completion, nil) }
            load.abandoned = true
            if loads[product] === load { loads[product] = nil }
            return (completion, load.work)
        }
        completion?(nil)
        work?.cancel()
    }
}
