import Foundation
@testable import ImagePipeline
import Testing
import TestSupport

/// The coordinator under contention (run again under the thread sanitizer: the name contains
/// "Concurrency"): subscribers joining and leaving as jobs end, and priorities flipping while
/// work queues and is cancelled.
@Suite("Pipeline: coordinator concurrency", .timeLimit(.minutes(3)))
struct PipelineCoordinatorConcurrencyTests {
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
        let coordinator = PipelineCoordinator(coalesces: true, maximumDownloads: 2, maximumDecodes: 2, decodeMemory: nil)
        let outcomes = Outcomes()
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<500 {
                        let subscriber = worker * 500 + index
                        let job = JobSpec<Int>(key: CoordinatorProbe.key("key-\(index % 8)")) { _ throws(ImagePipelineError) in
                            await Task.yield()
                            return index
                        }
                        let (subscription, _) = coordinator.subscribe(job, priority: .normal) { event in
                            if case .finished = event { outcomes.record(subscriber) }
                        }
                        if index % 3 == 0 { subscription.cancel() }
                        if index % 50 == 0 { await Task.yield() }
                    }
                }
            }
        }
        #expect(await pollUntil { outcomes.counts.finished == 4000 })
        #expect(outcomes.counts.duplicated == 0)
        #expect(await pollUntil { coordinator.jobCount == 0 })
    }

    /// Flips a subscription's priority between two values on a thread of its own until stopped.
    final class Flipper: @unchecked Sendable {
        private let stopped = NSLock()
        private var isStopped = false
        private let done = DispatchSemaphore(value: 0)

        init(_ subscription: JobSubscription, between first: ImageRequest.Priority, and second: ImageRequest.Priority) {
            Thread.detachNewThread { [self] in
                var flip = false
                while !stopped.withLock({ isStopped }) {
                    subscription.setPriority(flip ? first : second)
                    flip.toggle()
                }
                done.signal()
            }
        }

        func stop() {
            stopped.withLock { isStopped = true }
            done.wait()
        }
    }

    @Test("N1: priorities flipping A↔B on two threads while two loops queue and cancel work on a one-slot queue, 10⁵ rounds: nothing stalls")
    func flippingPrioritiesNeverStall() async throws {
        let rounds = 50_000 // per loop; two loops
        let coordinator = PipelineCoordinator(coalesces: true, maximumDownloads: 1, maximumDecodes: 1, decodeMemory: nil)
        let finished = Outcomes()
        let churn = JobSpec<Int>(key: CoordinatorProbe.key("churn")) { job throws(ImagePipelineError) in
            await withTaskGroup(of: Void.self) { group in
                for loop in 0..<2 {
                    group.addTask {
                        for round in 0..<rounds {
                            let work = Task { try await coordinator.run(.download, for: job) { await Task.yield() } }
                            if round % 3 == loop { work.cancel() }
                            _ = await work.result
                        }
                    }
                }
            }
            return rounds * 2
        }
        let (subscription, _) = coordinator.subscribe(churn, priority: .normal) { event in
            if case .finished = event { finished.record(0) }
        }
        let flippers = [Flipper(subscription, between: .low, and: .high), Flipper(subscription, between: .high, and: .low)]
        let churned = await pollUntil(timeout: .seconds(150)) { finished.counts.finished == 1 }
        flippers.forEach { $0.stop() }
        #expect(churned, "the churn stalled: \(coordinator.waitingCount(.download)) waiting, \(coordinator.runningCount(.download)) running")
        // One more job after all that: the queue still starts work.
        let last = Outcomes()
        _ = coordinator.subscribe(CoordinatorProbe.slotJob("last", queue: .download) {}, priority: .normal) { event in
            if case .finished(.success) = event { last.record(1) }
        }
        #expect(await pollUntil(timeout: .seconds(10)) { last.counts.finished == 1 }, "the one-slot queue stalled for good")
        #expect(coordinator.waitingCount(.download) == 0 && coordinator.heapCount(.download) <= 65)
    }

    @Test("D-E: a setter held on its way to the coordinator: the setter behind it waits, so task and job end agreeing")
    func heldPriorityChangeKeepsAgreement() async throws {
        let queued = try await QueuedDownload.start(priority: .normal)
        let (task, coordinator) = (queued.task, queued.pipeline.coordinator)
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), lowArrived = DispatchSemaphore(value: 0)
        coordinator.interceptPriorityChanges { priority in
            if priority == .high {
                held.signal()
                release.wait()
            } else if priority == .low {
                lowArrived.signal()
            }
        }
        let first = Thread { task.priority = .high }
        first.start()
        #expect(held.wait(timeout: .now() + 10) == .success)
        let second = Thread { task.priority = .low }
        second.start()
        // With one copy of the priority, the second setter cannot pass the first: it never
        // reaches the coordinator while the first is held (the bound only ends the wait).
        let overtook = lowArrived.wait(timeout: .now() + 2) == .success
        release.signal()
        #expect(!overtook, "the second setter reached the coordinator while the first was held")
        #expect(await pollUntil { coordinator.priority(of: queued.dataKey) == .low && task.priority == .low })
        #expect(coordinator.waitingPriorities(.download) == [.low])
        try await queued.finish()
    }

    @Test("N5: an image job's priority flipped on two threads ends where the last change put it, on the download too")
    func lastPriorityWins() async throws {
        let queued = try await QueuedDownload.start(priority: .normal)
        let (task, coordinator) = (queued.task, queued.pipeline.coordinator)
        for round in 0..<200 {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { for _ in 0..<50 { task.priority = .low } }
                group.addTask { for _ in 0..<50 { task.priority = .high } }
            }
            // D-E: whichever setter came last, the task and its queued work agree on it.
            let settled = task.priority
            #expect(coordinator.priority(of: queued.dataKey) == settled && coordinator.waitingPriorities(.download) == [settled], "round \(round)")
            let final: ImageRequest.Priority = round % 2 == 0 ? .veryLow : .veryHigh
            task.priority = final
            #expect(coordinator.priority(of: queued.dataKey) == final && coordinator.waitingPriorities(.download) == [final])
        }
        try await queued.finish()
    }
}
