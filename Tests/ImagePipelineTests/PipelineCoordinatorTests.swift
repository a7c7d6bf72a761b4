import Foundation
import ImageCodec
@testable import ImagePipeline
import Testing
import TestSupport

/// The coordinator's queues: highest priority first, first come first served among equals,
/// priority changes pushed in while waiting, cancelled waiters gone (with their heap entries),
/// decodes admitted by memory, and a job's priority carried to the download it waits for.
@Suite("Pipeline: coordinator", .timeLimit(.minutes(2)))
struct PipelineCoordinatorTests {
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var order: [Int] = []
        func append(_ id: Int) { lock.withLock { order.append(id) } }
        var values: [Int] { lock.withLock { order } }
    }

    static func coordinator(downloads: Int = 1, decodes: Int = 1, memory: MemoryBudget? = nil) -> PipelineCoordinator {
        PipelineCoordinator(coalesces: true, maximumDownloads: downloads, maximumDecodes: decodes, decodeMemory: memory)
    }

    @Test("200 waiters with random priorities, 30 raised or lowered while waiting, 10 cancelled: run in priority then arrival order")
    func order() async throws {
        var generator = SeededGenerator()
        let seed = generator.seed
        let coordinator = Self.coordinator()
        let blocker = await SlotBlocker.taking(coordinator, .download)
        let log = Log()
        var jobs: [(subscription: JobSubscription, priority: ImageRequest.Priority)] = []
        for id in 0..<200 {
            let priority = ImageRequest.Priority.allCases.randomElement(using: &generator)!
            let job = CoordinatorProbe.slotJob("job-\(id)", queue: .download) { log.append(id) }
            jobs.append((coordinator.subscribe(job, priority: priority) { _ in }.subscription, priority))
            // One at a time, so arrival order is the id order.
            #expect(await pollUntil { coordinator.waitingCount(.download) == id + 1 }, "seed \(seed)")
        }
        for _ in 0..<30 {
            let id = Int.random(in: 0..<200, using: &generator)
            let priority = ImageRequest.Priority.allCases.randomElement(using: &generator)!
            jobs[id].subscription.setPriority(priority)
            jobs[id].priority = priority
        }
        let cancelled = Set((0..<10).map { _ in Int.random(in: 0..<200, using: &generator) })
        for id in cancelled { jobs[id].subscription.cancel() }
        // Gone from the queue in the same step as the cancel: no polling needed.
        #expect(coordinator.waitingCount(.download) == 200 - cancelled.count, "seed \(seed)")
        blocker.release()
        #expect(await pollUntil { log.values.count == 200 - cancelled.count }, "seed \(seed)")
        let expected = (0..<200).filter { !cancelled.contains($0) }.sorted { a, b in
            jobs[a].priority != jobs[b].priority ? jobs[a].priority > jobs[b].priority : a < b
        }
        #expect(log.values == expected, "seed \(seed)")
        #expect(await pollUntil { coordinator.runningCount(.download) == 0 && coordinator.jobCount == 0 })
    }

    @Test("cancelled and re-prioritised waiters do not pile up in the heap")
    func heapStaysBounded() async throws {
        let coordinator = Self.coordinator()
        let blocker = await SlotBlocker.taking(coordinator, .download)
        let waiting = (0..<10).map { id in
            coordinator.subscribe(CoordinatorProbe.slotJob("kept-\(id)", queue: .download) {}, priority: .normal) { _ in }.subscription
        }
        #expect(await pollUntil { coordinator.waitingCount(.download) == 10 })
        for round in 0..<400 {
            let subscription = coordinator.subscribe(CoordinatorProbe.slotJob("gone-\(round)", queue: .download) {}, priority: .low) { _ in }
                .subscription
            #expect(await pollUntil { coordinator.waitingCount(.download) == 11 })
            subscription.setPriority(.high)
            subscription.cancel()
            waiting[round % 10].setPriority(round % 2 == 0 ? .high : .normal)
        }
        #expect(coordinator.waitingCount(.download) == 10)
        // Stale entries are rebuilt away once they outnumber the live ones (and 64).
        #expect(coordinator.heapCount(.download) <= 10 + 65, "\(coordinator.heapCount(.download)) heap entries for 10 waiters")
        blocker.release()
        #expect(await pollUntil { coordinator.jobCount == 0 && coordinator.runningCount(.download) == 0 })
    }

    @Test("decodes are admitted by planned memory: the one that does not fit waits, one over the budget runs alone")
    func memoryAdmission() async throws {
        let memory = MemoryBudget(capacity: 100)
        let coordinator = Self.coordinator(decodes: 4, memory: memory)
        let gates = (0..<4).map { _ in Gate() }
        let log = Log()
        func job(_ id: Int, cost: Int) -> JobSubscription {
            coordinator.subscribe(
                CoordinatorProbe.slotJob("decode-\(id)", queue: .decode, cost: cost) {
                    log.append(id)
                    await gates[id].wait()
                }, priority: .normal
            ) { _ in }.subscription
        }
        _ = job(0, cost: 60)
        #expect(await pollUntil { log.values == [0] })
        _ = job(1, cost: 60) // 120 > 100: waits, although a slot is free
        #expect(await pollUntil { coordinator.waitingCount(.decode) == 1 })
        _ = job(2, cost: 30) // behind it in the queue: first come first served, no overtaking
        #expect(await pollUntil { coordinator.waitingCount(.decode) == 2 })
        #expect(log.values == [0] && memory.bytesInUse == 60)
        gates[0].open()
        #expect(await pollUntil { log.values == [0, 1, 2] })
        #expect(memory.bytesInUse == 90)
        _ = job(3, cost: 500) // over the whole budget: waits until nothing else holds memory
        #expect(await pollUntil { coordinator.waitingCount(.decode) == 1 })
        gates[1].open()
        gates[2].open()
        #expect(await pollUntil { log.values == [0, 1, 2, 3] })
        #expect(memory.bytesInUse == 500 && memory.peakBytesInUse == 500)
        gates[3].open()
        #expect(await pollUntil { coordinator.jobCount == 0 && memory.bytesInUse == 0 })
    }

    /// Decode jobs that log their id when they start and then wait for their gate.
    struct GatedDecodes {
        let coordinator: PipelineCoordinator
        let memory = MemoryBudget(capacity: 100)
        let gates = (0..<4).map { _ in Gate() }
        let log = Log()

        init() { coordinator = PipelineCoordinatorTests.coordinator(decodes: 4, memory: memory) }

        func job(_ id: Int, cost: Int, priority: ImageRequest.Priority) -> JobSubscription {
            let (gates, log) = (gates, log)
            return coordinator.subscribe(
                CoordinatorProbe.slotJob("decode-\(id)", queue: .decode, cost: cost) {
                    log.append(id)
                    await gates[id].wait()
                }, priority: priority
            ) { _ in }.subscription
        }

        func finish() async {
            gates.forEach { $0.open() }
            #expect(await pollUntil { coordinator.jobCount == 0 && memory.bytesInUse == 0 })
        }
    }

    @Test("a joined job runs at the highest Swift task priority of its subscribers: a prefetch's job is raised by the cell that joins it")
    func joinerRaisesTaskPriority() async throws {
        let coordinator = Self.coordinator()
        let gate = Gate()
        let job = JobSpec<Int>(key: CoordinatorProbe.key("raised")) { _ throws(ImagePipelineError) in
            await gate.wait()
            return Int(Task.currentPriority.rawValue)
        }
        let joined = Log()
        let prefetch = Task(priority: .low) { await coordinator.result(of: job, priority: .low) }
        #expect(await pollUntil { coordinator.jobCount == 1 })
        let cell = Task(priority: .high) { await coordinator.result(of: job, priority: .high, onJoin: { joined.append(1) }) }
        #expect(await pollUntil { joined.values == [1] })
        gate.open()
        let (ran, shown) = (try await prefetch.value.get(), try await cell.value.get())
        #expect(ran == shown && ran >= Int(TaskPriority.high.rawValue), "the job ran at \(ran), below the joiner's \(TaskPriority.high.rawValue)")
    }

    @Test("D-B: an urgent decode that fits starts at once, ahead of a large waiter it outranks")
    func urgentDecodeStartsAtOnce() async throws {
        let decodes = GatedDecodes()
        _ = decodes.job(0, cost: 60, priority: .low)
        #expect(await pollUntil { decodes.log.values == [0] })
        _ = decodes.job(1, cost: 60, priority: .low) // does not fit: waits
        #expect(await pollUntil { decodes.coordinator.waitingCount(.decode) == 1 })
        _ = decodes.job(2, cost: 30, priority: .veryHigh) // fits, and outranks the waiter
        // Started in the subscribe's own step, while decode 0 still runs.
        #expect(await pollUntil { decodes.log.values == [0, 2] })
        #expect(decodes.coordinator.waitingCount(.decode) == 1 && decodes.memory.bytesInUse == 90)
        await decodes.finish()
        #expect(decodes.log.values == [0, 2, 1])
    }

    @Test("D-B: a cancelled head no longer holds up the waiters behind it; a raised priority starts what now fits")
    func leavingAndRaisingDrainTheQueue() async throws {
        let decodes = GatedDecodes()
        _ = decodes.job(0, cost: 60, priority: .normal)
        #expect(await pollUntil { decodes.log.values == [0] })
        let head = decodes.job(1, cost: 60, priority: .normal)
        #expect(await pollUntil { decodes.coordinator.waitingCount(.decode) == 1 })
        _ = decodes.job(2, cost: 30, priority: .normal) // behind a waiter that does not fit: no overtaking
        #expect(await pollUntil { decodes.coordinator.waitingCount(.decode) == 2 })
        #expect(decodes.log.values == [0])
        head.cancel()
        #expect(await pollUntil { decodes.log.values == [0, 2] })
        #expect(decodes.coordinator.waitingCount(.decode) == 0 && decodes.memory.bytesInUse == 90)

        let raised = GatedDecodes()
        _ = raised.job(0, cost: 60, priority: .normal)
        #expect(await pollUntil { raised.log.values == [0] })
        _ = raised.job(1, cost: 60, priority: .normal)
        #expect(await pollUntil { raised.coordinator.waitingCount(.decode) == 1 })
        let small = raised.job(2, cost: 30, priority: .low)
        #expect(await pollUntil { raised.coordinator.waitingCount(.decode) == 2 })
        #expect(raised.log.values == [0])
        small.setPriority(.high)
        #expect(await pollUntil { raised.log.values == [0, 2] })
        await decodes.finish()
        await raised.finish()
    }

    @Test("N5: an image job's priority reaches the download it waits for, in the same step, every change")
    func priorityReachesTheDownload() async throws {
        let queued = try await QueuedDownload.start(priority: .low)
        let coordinator = queued.pipeline.coordinator
        #expect(coordinator.priority(of: queued.dataKey) == .low)
        for priority in [ImageRequest.Priority.veryHigh, .veryLow, .high, .normal, .veryHigh] {
            queued.task.priority = priority
            // No polling: the change is made under the coordinator's lock, download and queue entry included.
            #expect(coordinator.priority(of: queued.dataKey) == priority)
            #expect(coordinator.waitingPriorities(.download) == [priority])
        }
        try await queued.finish()
    }

    @Test("pipeline decodes are admitted by planned memory: under a budget smaller than any plan they run one at a time")
    func pipelineDecodesByMemory() async throws {
        let fixture = try await PipelineFixture.start()
        let pipeline = fixture.pipeline {
            $0.maximumConcurrentDecodes = 4; $0.decodeMemoryLimit = 1
        }
        let names = ["kite.jpg", "ladybird.jpg", "grey.jpg", "calla.png"]
        let plans = try names.map { name in
            try ImageSource(data: try #require(PipelineFixture.photos[name])).plan(pipeline.decodingOptions(nil)).memoryBytes
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for name in names { group.addTask { _ = try await pipeline.image(for: ImageRequest(url: fixture.url(name))) } }
            try await group.waitForAll()
        }
        #expect(pipeline.statistics.decodes == 4)
        // Each ran alone: the most ever reserved is the largest single plan, never a sum.
        #expect(pipeline.decodeMemory.peakBytesInUse == plans.max())
        #expect(pipeline.decodeMemory.bytesInUse == 0)
    }
}
