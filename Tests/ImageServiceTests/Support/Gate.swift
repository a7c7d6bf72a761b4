import Foundation
import TestSupport

/// Holds whoever calls `pass()` until `open()`, counting them: a test keeps a worker slot busy
/// exactly as long as it needs, with no clock involved.
final class Gate: @unchecked Sendable {
    // @unchecked: the state is only touched while `lock` is held.
    private let lock = NSLock()
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var arrivals = 0

    /// Waits until the gate is open (returns at once if it is).
    func pass() async {
        await withCheckedContinuation { continuation in
            let wait = lock.withLock { () -> Bool in
                arrivals += 1
                guard !isOpen else { return false }
                waiting.append(continuation)
                return true
            }
            if !wait { continuation.resume() }
        }
    }

    /// Lets everyone through, now and later.
    func open() {
        let waiting = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            isOpen = true
            defer { self.waiting.removeAll() }
            return self.waiting
        }
        waiting.forEach { $0.resume() }
    }

    /// Calls to `pass()` so far.
    var count: Int { lock.withLock { arrivals } }

    /// Waits until `pass()` has been called `count` times.
    func waitForArrivals(_ count: Int, timeout: Duration = .seconds(20)) async -> Bool {
        await pollUntil(timeout: timeout) { self.count >= count }
    }
}
