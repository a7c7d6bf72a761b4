import Foundation
import ImageCache
import ImageCodec
@testable import ImagePipeline
import ImageServer
import Locking
import Testing
import TestSupport

/// What a reused grid cell relies on: a cancelled request never delivers an image, cancelling
/// queued work loses nothing already stored or downloaded, and completions never run on the
/// caller's stack.
@Suite("Pipeline: cell reuse and cancellation", .timeLimit(.minutes(2)))
struct CellReuseTests {
    @Test("D1: cancelling a thumbnail decode queued for a slot leaves the stored thumbnail on disk")
    func cancelledThumbnailDecodeKeepsThumbnail() async throws {
        let fixture = try await PipelineFixture.start()
        let disk = try fixture.diskCache()
        let request = ImageRequest(url: fixture.url("kite.jpg"), resize: .fill(width: 120, height: 120))
        let warm = fixture.pipeline(disk: disk, storesThumbnails: true)
        _ = try await warm.image(for: request)
        await warm.flushDiskWrites()
        let thumbnailKey = try #require(warm.thumbnailKey(for: request))
        #expect(try disk.value(forKey: thumbnailKey) != nil)

        let cold = fixture.pipeline(disk: disk, storesThumbnails: true) { $0.maximumConcurrentDecodes = 1 }
        let blocker = await SlotBlocker.taking(cold.coordinator, .decode)
        let cell = Task { try await cold.image(for: request) }
        #expect(await pollUntil { cold.coordinator.waitingCount(.decode) == 1 }, "the thumbnail decode must be queued behind the blocker")
        cell.cancel()
        await #expect(throws: ImagePipelineError.cancelled) { try await cell.value }
        blocker.release()
        await cold.flushDiskWrites()
        #expect(try disk.value(forKey: thumbnailKey) != nil, "cancelled is not failed: the thumbnail stays")
        let again = try await cold.image(for: request)
        #expect(again.source == .disk && cold.statistics.thumbnailDiskHits == 1)
        #expect(fixture.server.requests("kite.jpg") == 1)
    }

    @Test("R1: a download whose request is cancelled while waiting for a decode slot is kept")
    func cancelledWhileQueuedForDecodeKeepsDownload() async throws {
        let fixture = try await PipelineFixture.start()
        let disk = try fixture.diskCache()
        let pipeline = fixture.pipeline(disk: disk) { $0.maximumConcurrentDecodes = 1 }
        let blocker = await SlotBlocker.taking(pipeline.coordinator, .decode)
        let request = ImageRequest(url: fixture.url("ladybird.jpg"), maxPixelSize: 100)
        let cell = Task { try await pipeline.image(for: request) }
        #expect(await pollUntil { pipeline.coordinator.waitingCount(.decode) == 1 }, "downloaded, waiting for the decode slot")
        cell.cancel()
        await #expect(throws: ImagePipelineError.cancelled) { try await cell.value }
        blocker.release()
        await pipeline.flushDiskWrites()
        #expect(try disk.value(forKey: fixture.url("ladybird.jpg").absoluteString) == PipelineFixture.photos["ladybird.jpg"])
        let fresh = fixture.pipeline(disk: disk)
        #expect(try await fresh.image(for: request).source == .disk)
        #expect(fixture.server.requests("ladybird.jpg") == 1)
    }

    @Test("D4: a cancelled caller gets .cancelled even when the image is right there in memory")
    func cancelledCallerNeverGetsAnImage() async throws {
        let fixture = try await PipelineFixture.start()
        let pipeline = fixture.pipeline()
        let request = ImageRequest(url: fixture.url("grey.jpg"), maxPixelSize: 64)
        _ = try await pipeline.image(for: request)
        #expect(pipeline.cachedImage(for: request) != nil)
        // The cell's task is cancelled (the cell was reused) before it asks.
        let gate = Gate()
        let cell = Task {
            await gate.wait()
            return try await pipeline.image(for: request)
        }
        cell.cancel()
        gate.open()
        await #expect(throws: ImagePipelineError.cancelled) { try await cell.value }
        // The same for the bytes.
        let gate2 = Gate()
        let bytes = Task {
            await gate2.wait()
            return try await pipeline.data(for: request)
        }
        bytes.cancel()
        gate2.open()
        await #expect(throws: ImagePipelineError.cancelled) { try await bytes.value }
    }

    @Test("R7: completions never run inside imageTask(with:) or cancel(), even for a memory hit")
    func completionsAreNeverReentrant() async throws {
        let fixture = try await PipelineFixture.start()
        let pipeline = fixture.pipeline()
        let request = ImageRequest(url: fixture.url("grey.jpg"), maxPixelSize: 64)
        _ = try await pipeline.image(for: request)
        let probe = ReentrancyProbe()
        probe.inside {
            pipeline.imageTask(with: request) { result in probe.completed(result) }
        }
        // Held in flight by the server, then cancelled.
        fixture.server.hold("kite.jpg")
        let pending = pipeline.imageTask(with: ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 64)) { result in probe.completed(result) }
        #expect(await pollUntil { fixture.server.heldRequests == 1 })
        probe.inside { pending.cancel() }
        fixture.server.release("kite.jpg")
        #expect(await pollUntil { probe.completions.count == 2 })
        #expect(probe.completions.allSatisfy { !$0.reentrant }, "\(probe.completions)")
        #expect(probe.completions.contains { if case .success = $0.result { true } else { false } })
        #expect(probe.completions.contains { $0.result == .failure(.cancelled) })
    }

    /// Records whether a completion ran while a call into the pipeline was still on the stack.
    final class ReentrancyProbe: @unchecked Sendable {
        struct Completion: Sendable {
            let result: Result<ImageResponse, ImagePipelineError>
            let reentrant: Bool
        }
        private let lock = NSLock()
        private var depth = 0
        private var recorded: [Completion] = []
        private let thread = ThreadIdentity()

        func inside(_ body: () -> Void) {
            lock.withLock { depth += 1 }
            thread.mark()
            body()
            thread.clear()
            lock.withLock { depth -= 1 }
        }

        func completed(_ result: Result<ImageResponse, ImagePipelineError>) {
            let reentrant = thread.isMarkedHere && lock.withLock { depth > 0 }
            lock.withLock { recorded.append(Completion(result: result, reentrant: reentrant)) }
        }

        var completions: [Completion] { lock.withLock { recorded } }
    }

    /// Which thread is inside a call (pthread identity, compared on the completing thread).
    final class ThreadIdentity: @unchecked Sendable {
        private let lock = NSLock()
        private var marked: pthread_t?
        func mark() { lock.withLock { marked = pthread_self() } }
        func clear() { lock.withLock { marked = nil } }
        var isMarkedHere: Bool { lock.withLock { marked.map { pthread_equal($0, pthread_self()) != 0 } ?? false } }
    }

    final class ResultBox: @unchecked Sendable {
        private let lock = NSLock()
        private var results: [Result<ImageResponse, ImagePipelineError>] = []
        func append(_ result: Result<ImageResponse, ImagePipelineError>) { lock.withLock { results.append(result) } }
        var values: [Result<ImageResponse, ImagePipelineError>] { lock.withLock { results } }
    }

    @Test("N6: cancel() right after a memory hit: the completion and the events get .cancelled, never the image")
    func cancelledMemoryHitDeliversCancelled() async throws {
        let fixture = try await PipelineFixture.start()
        let callbacks = DispatchQueue(label: "callbacks")
        let pipeline = fixture.pipeline { $0.callbackQueue = callbacks }
        let request = ImageRequest(url: fixture.url("grey.jpg"), maxPixelSize: 64)
        _ = try await pipeline.image(for: request)
        // The completion cannot run before the cell's next line: its queue is held.
        callbacks.suspend()
        let box = ResultBox()
        let task = pipeline.imageTask(with: request) { box.append($0) }
        #expect(task.result.map { (try? $0.get()) != nil } == true, "a memory hit: the result is there at once")
        task.cancel()
        callbacks.resume()
        #expect(await pollUntil { box.values.count == 1 })
        #expect(box.values.first == .failure(.cancelled))
        #expect(task.result == .failure(.cancelled))
        var events: [ImageTask.Event] = []
        for await event in task.events { events.append(event) }
        guard events.count == 1, case .finished(.failure(.cancelled)) = events[0] else {
            Issue.record("events: \(events)")
            return
        }
    }

    @Test("N6: a task awaiting response that is cancelled gets .cancelled, though the image never comes")
    func awaitingResponseIsCancelled() async throws {
        let fixture = try await PipelineFixture.start()
        let pipeline = fixture.pipeline()
        fixture.server.hold("kite.jpg")
        let imageTask = pipeline.imageTask(with: ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 64))
        let awaiting = Task { try await imageTask.response }
        #expect(await pollUntil { fixture.server.heldRequests == 1 })
        awaiting.cancel()
        // The server still holds the request: only the cancellation can end the wait.
        await #expect(throws: ImagePipelineError.cancelled) { try await awaiting.value }
        #expect(imageTask.result == .failure(.cancelled))
        fixture.server.release("kite.jpg")
    }

    @Test("D4: the result is resumed, then the cell is reused in the same main-actor job: the cell's task throws .cancelled")
    @MainActor
    func cancelAfterResultResumed() async throws {
        let fixture = try await PipelineFixture.start()
        let pipeline = fixture.pipeline()
        let request = ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 64)
        fixture.server.hold("kite.jpg")
        let cell = Task { @MainActor in try await pipeline.image(for: request) }
        // The cell's request is what reached the server: it is the job's first subscriber.
        #expect(await Self.heldRequest(fixture.server))
        // A second subscriber to the same job: results are handed out in subscription order, so
        // once it has its result, the cell's continuation has been resumed.
        let delivered = DispatchSemaphore(value: 0)
        let sibling = pipeline.imageTask(with: request) { _ in delivered.signal() }
        fixture.server.release("kite.jpg")
        // This main-actor job holds the main actor: the resumed cell cannot run before it ends.
        #expect(delivered.wait(timeout: .now() + 30) == .success)
        #expect(sibling.result.map { (try? $0.get()) != nil } == true)
        cell.cancel()
        await #expect(throws: ImagePipelineError.cancelled) { try await cell.value }
    }

    @Test("D-A: the result is resumed to `response`, then cancel() before the awaiting code runs: it throws .cancelled, as the completion gets")
    @MainActor
    func responseAgreesWithCancel() async throws {
        let fixture = try await PipelineFixture.start()
        // Completions wait in a suspended queue: cancel() comes before any delivery.
        let callbacks = DispatchQueue(label: "callbacks")
        callbacks.suspend()
        let pipeline = fixture.pipeline { $0.callbackQueue = callbacks }
        let request = ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 64)
        fixture.server.hold("kite.jpg")
        let completed = Completions()
        let task = pipeline.imageTask(with: request) { completed.record($0) }
        let cell = Task { @MainActor in try await task.response }
        #expect(await Self.heldRequest(fixture.server))
        // A second subscriber, on another executor: results are handed out in subscription
        // order, so once it has its image, `cell`'s continuation has been resumed.
        let delivered = DispatchSemaphore(value: 0)
        let sibling = Task.detached {
            _ = try await pipeline.image(for: request)
            delivered.signal()
        }
        fixture.server.release("kite.jpg")
        // This main-actor job holds the main actor: the resumed cell cannot run before it ends.
        #expect(delivered.wait(timeout: .now() + 30) == .success)
        #expect(task.result.map { (try? $0.get()) != nil } == true, "finished with the image")
        task.cancel()
        await #expect(throws: ImagePipelineError.cancelled) { try await cell.value }
        callbacks.resume()
        #expect(await Self.oneCompletion(completed))
        #expect(completed.results.first.map { $0 == .failure(.cancelled) } == true)
        _ = try await sibling.value
    }

    nonisolated static func oneCompletion(_ completions: Completions) async -> Bool {
        await pollUntil { completions.results.count == 1 }
    }

    final class Completions: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [Result<ImageResponse, ImagePipelineError>] = []
        func record(_ result: Result<ImageResponse, ImagePipelineError>) { lock.withLock { stored.append(result) } }
        var results: [Result<ImageResponse, ImagePipelineError>] { lock.withLock { stored } }
    }

    nonisolated static func heldRequest(_ server: ImageServer) async -> Bool {
        await pollUntil { server.heldRequests == 1 }
    }
}
