import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import ImagePipeline
import Testing
import TestSupport

/// Jobs made directly on a coordinator, for tests of its queues and priorities.
enum CoordinatorProbe {
    /// A job key of its own for `name` (any value type may be used with it, consistently).
    static func key(_ name: String) -> JobKey {
        .data(
            DataJobKey(dataKey: name, policy: .useCache, variant: RequestVariant(URLRequest(url: URL(string: "http://test/")!))))
    }

    /// A job that runs `body` in a slot of `queue`.
    static func slotJob(
        _ name: String, queue: PipelineCoordinator.Queue, cost: Int = 0, _ body: @escaping @Sendable () async -> Void
    ) -> JobSpec<Int> {
        JobSpec(key: key(name)) { job throws(ImagePipelineError) in
            try await job.coordinator.run(queue, for: job, cost: cost) { await body() }
            return 0
        }
    }
}

/// A pipeline whose one download slot a scripted `blocker.jpg` holds, and a task for `a.jpg`
/// queued behind it: the download's priority can be watched while it waits.
struct QueuedDownload {
    let loader: ScriptedLoader
    let pipeline: ImagePipeline
    let blocker: ImageTask
    let task: ImageTask
    /// The key of `a.jpg`'s data job.
    let dataKey: JobKey

    static func start(priority: ImageRequest.Priority) async throws -> QueuedDownload {
        let loader = ScriptedLoader()
        for name in ["a.jpg", "blocker.jpg"] { loader.set(name, try #require(PipelineFixture.photos["grey.jpg"])) }
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, maximumConcurrentDownloads: 1))
        let blocker = pipeline.imageTask(with: ImageRequest(url: URL(string: "http://test/blocker.jpg")!, maxPixelSize: 10))
        #expect(await loader.waitForStarts(1))
        let request = ImageRequest(url: URL(string: "http://test/a.jpg")!, maxPixelSize: 32, priority: priority)
        let task = pipeline.imageTask(with: request)
        #expect(await pollUntil { pipeline.coordinator.waitingCount(.download) == 1 })
        return QueuedDownload(
            loader: loader, pipeline: pipeline, blocker: blocker, task: task, dataKey: pipeline.dataJob(for: request, staleInMemory: nil).key)
    }

    /// Lets both downloads finish; `a.jpg`'s image is then 32 px wide.
    func finish() async throws {
        loader.finish("blocker.jpg")
        #expect(await pollUntil { loader.startedNames == ["blocker.jpg", "a.jpg"] })
        loader.finish("a.jpg")
        _ = try await blocker.response
        #expect(try await task.response.bitmap.width == 32)
    }
}

/// Holds slots of a coordinator's queue until released, so the next work must queue.
struct SlotBlocker {
    private let gate: Gate
    private let subscriptions: [JobSubscription]

    /// Returns once every slot of `queue` is taken.
    static func taking(_ coordinator: PipelineCoordinator, _ queue: PipelineCoordinator.Queue) async -> SlotBlocker {
        let gate = Gate()
        let subscriptions = (0..<coordinator.limit(queue)).map { index in
            coordinator.subscribe(CoordinatorProbe.slotJob("blocker-\(queue)-\(index)", queue: queue) { await gate.wait() }, priority: .veryHigh) {
                _ in
            }.subscription
        }
        _ = await pollUntil { coordinator.runningCount(queue) == coordinator.limit(queue) }
        return SlotBlocker(gate: gate, subscriptions: subscriptions)
    }

    private init(gate: Gate, subscriptions: [JobSubscription]) {
        self.gate = gate
        self.subscriptions = subscriptions
    }

    func release() { gate.open() }
}

/// Opens once; every waiter before and after passes.
final class Gate: @unchecked Sendable {
    private let lock = NSLock()
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var isOpen = false

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = lock.withLock { () -> Bool in
                if !isOpen { waiters.append(continuation) }
                return isOpen
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        let waiters = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            isOpen = true
            defer { self.waiters.removeAll() }
            return self.waiters
        }
        waiters.forEach { $0.resume() }
    }
}
