/// Polls `condition` every 2 ms until it holds or `timeout` passes; returns whether it held.
/// Tests wait for state another task changes this way, with a deadline, so that a broken
/// behaviour fails its test instead of hanging the run.
///
/// The deadline only guards against a hang; it is not a speed check. It is generous because CI
/// runs a whole test group in parallel on two cores in a debug build: a prefetch test that takes
/// 0.76 s alone took 10.1 s there, and a 10 s deadline failed it while the pipeline was right.
public func pollUntil(timeout: Duration = hangGuard, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return true
}

/// How long a test waits for something another task does before calling it a hang (see
/// `pollUntil`).
public let hangGuard: Duration = .seconds(60)
