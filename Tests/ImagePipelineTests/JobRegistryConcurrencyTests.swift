import Foundation
@testable import ImagePipeline
import Testing
import TestSupport

/// Shared jobs under contention (run again under the thread sanitizer: the name contains
/// "Concurrency"): many subscribers joining, leaving and arriving as jobs end.
@Suite("Pipeline: job registry concurrency")
struct JobRegistryConcurrencyTests {
    final class Outcomes: @unchecked Sendable {
        private let lock = NSLock()
        private var finished = 0, duplicated = 0
        private var seen = Set<Int>()
        func record(_ subscriber: Int) {
            lock.withLock {
                if !seen.insert(subscriber).inserted { duplicated += 1 }
                finished += 1
            }
        }
        var counts: (finished: Int, duplicated: Int) { lock.withLock { (finished, duplicated) } }
    }

    @Test("4000 subscribers on 8 keys, a third leaving at once, jobs that end as others arrive: each gets exactly one result")
    func contention() async throws {
        let registry = JobRegistry<Int, Int>(coalesces: true)
        let outcomes = Outcomes()
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<500 {
                        let subscriber = worker * 500 + index
                        let (subscription, _) = registry.subscribe(
                            index % 8, priority: .normal,
                            operation: { _ in
                                await Task.yield()
                                return index
                            }, handler: { event in if case .finished = event { outcomes.record(subscriber) } })
                        if index % 3 == 0 { subscription.cancel() }
                        if index % 50 == 0 { await Task.yield() }
                    }
                }
            }
        }
        #expect(await pollUntil { outcomes.counts.finished == 4000 })
        #expect(outcomes.counts.duplicated == 0)
        #expect(await pollUntil { registry.count == 0 })
    }
}
