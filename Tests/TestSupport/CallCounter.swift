import Foundation

/// Counts calls made from any thread (a callback's invocations, say).
public final class CallCounter: @unchecked Sendable {
    // @unchecked: `count` is only touched while `lock` is held.
    private let lock = NSLock()
    private var count = 0

    public init() {}

    public func increment() { lock.withLock { count += 1 } }

    public var value: Int { lock.withLock { count } }
}
