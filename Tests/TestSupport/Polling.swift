/// Polls `condition` every 2 ms until it holds or `timeout` passes; returns whether it held.
/// Tests wait for state another task changes this way, with a deadline, so that a broken
/// behaviour fails its test instead of hanging the run.
public func pollUntil(timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return true
}
