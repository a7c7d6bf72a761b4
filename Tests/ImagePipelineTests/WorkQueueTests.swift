import Foundation
@testable import ImagePipeline
import Testing
import TestSupport

/// The work queue's order (R5): highest priority first, first come first served among equals,
/// priority changes pushed in while waiting, cancelled waiters gone.
@Suite("Pipeline: work queue", .timeLimit(.minutes(2)))
struct WorkQueueTests {
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var order: [Int] = []
        func append(_ id: Int) { lock.withLock { order.append(id) } }
        var values: [Int] { lock.withLock { order } }
    }

    @Test("200 waiters with random priorities, 30 raised or lowered while waiting, 10 cancelled: run in priority then arrival order")
    func order() async throws {
        var generator = SeededGenerator()
        let seed = generator.seed
        let queue = WorkQueue(maximumConcurrent: 1)
        let blocker = await CellReuseTests.SlotBlocker.taking(queue)
        let log = Log()
        var jobs: [(job: SharedJob<Int>, subscription: JobSubscription, priority: ImageRequest.Priority)] = []
        var tasks: [Task<Void, Never>] = []
        for id in 0..<200 {
            let priority = ImageRequest.Priority.allCases.randomElement(using: &generator)!
            let (job, subscription) = SharedJob<Int>.make(priority: priority, handler: { _ in }, onEnd: { _ in })
            jobs.append((job, subscription, priority))
            tasks.append(Task { _ = try? await queue.run(for: job) { log.append(id) } })
            // One at a time, so arrival order is the id order.
            #expect(await pollUntil { queue.waitingCount == id + 1 }, "seed \(seed)")
        }
        for _ in 0..<30 {
            let id = Int.random(in: 0..<200, using: &generator)
            let priority = ImageRequest.Priority.allCases.randomElement(using: &generator)!
            jobs[id].subscription.setPriority(priority)
            jobs[id].priority = priority
        }
        let cancelled = Set((0..<10).map { _ in Int.random(in: 0..<200, using: &generator) })
        for id in cancelled { tasks[id].cancel() }
        #expect(await pollUntil { queue.waitingCount == 200 - cancelled.count }, "seed \(seed)")
        blocker.release()
        for task in tasks { await task.value }
        let expected = (0..<200).filter { !cancelled.contains($0) }.sorted { a, b in
            jobs[a].priority != jobs[b].priority ? jobs[a].priority > jobs[b].priority : a < b
        }
        #expect(log.values == expected, "seed \(seed)")
        #expect(queue.waitingCount == 0 && queue.runningCount == 0)
    }
}
