@testable import ImageService
import Testing

@Suite("Service: deadlines", .timeLimit(.minutes(1)))
struct DeadlineTests {
    @Test("an operation that finishes in time gives its result")
    func inTime() async {
        #expect(await withDeadline(.seconds(60), late: -1) { 42 } == 42)
    }

    @Test("past the deadline the caller gets `late` at once, and the operation is cancelled")
    func late() async {
        let (cancelled, signal) = AsyncStream<Bool>.makeStream()
        let result = await withDeadline(.milliseconds(50), late: -1) {
            // Sleeps until cancelled (an hour otherwise), then says whether it was.
            let wasCancelled = (try? await Task.sleep(for: .seconds(3600))) == nil
            signal.yield(wasCancelled)
            return 7
        }
        #expect(result == -1)
        var iterator = cancelled.makeAsyncIterator()
        #expect(await iterator.next() == true)
    }

    @Test("cancelling the caller cancels the operation, whose own answer is returned")
    func callerCancelled() async {
        let (started, signal) = AsyncStream<Void>.makeStream()
        let caller = Task {
            await withDeadline(.seconds(3600), late: -1) {
                signal.yield()
                return (try? await Task.sleep(for: .seconds(3600))) == nil ? 5 : 6
            }
        }
        var iterator = started.makeAsyncIterator()
        await iterator.next()
        caller.cancel()
        #expect(await caller.value == 5)
    }
}
