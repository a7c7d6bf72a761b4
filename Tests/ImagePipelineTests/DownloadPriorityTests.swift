import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageServer
import Testing
import TestSupport

@testable import ImagePipeline

/// The download's priority reaches the transport: `URLSessionTask.priority` follows the
/// highest priority of the requests that wait for the download, while it runs.
@Suite("Pipeline: download priority", .timeLimit(.minutes(2)))
struct DownloadPriorityTests {
    /// The URLSession tasks a loader made, in order.
    final class Tasks: @unchecked Sendable {
        private let lock = NSLock()
        private var tasks: [URLSessionTask] = []
        func append(_ task: URLSessionTask) { lock.withLock { tasks.append(task) } }
        var all: [URLSessionTask] { lock.withLock { tasks } }
    }

    @Test("URLSessionTask.priority follows the download's subscribers: raised, joined, left")
    func sessionTaskFollows() async throws {
        // The server holds the answer until the end: the download runs throughout, whatever
        // the machine's speed.
        let fixture = try await PipelineFixture.start()
        fixture.server.hold("kite.jpg")
        defer { fixture.server.release("kite.jpg") }
        let tasks = Tasks()
        let loader = URLSessionDataLoader(configuration: .init(), taskSeam: { tasks.append($0) })
        let pipeline = fixture.pipeline { $0.dataLoader = loader }
        let request = ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 100)
        let visible = pipeline.imageTask(with: request)
        #expect(await pollUntil { tasks.all.count == 1 && fixture.server.heldRequests == 1 })
        let task = try #require(tasks.all.first)
        #expect(task.priority == URLSessionTask.defaultPriority)
        visible.priority = .high
        #expect(await pollUntil { task.priority == URLSessionTask.highPriority })
        var urgent = request
        urgent.priority = .veryHigh
        let detail = pipeline.imageTask(with: urgent)
        #expect(await pollUntil { task.priority == 1 }, "a joined request at .veryHigh raises the running download")
        detail.cancel()
        #expect(await pollUntil { task.priority == URLSessionTask.highPriority }, "back to the remaining request's")
        visible.priority = .low
        #expect(await pollUntil { task.priority == URLSessionTask.lowPriority })
        #expect(tasks.all.count == 1, "one download throughout")
        visible.cancel()
        await #expect(throws: ImagePipelineError.cancelled) { try await visible.response }
    }
}
