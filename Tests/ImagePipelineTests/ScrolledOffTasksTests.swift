import Foundation
import ImageServer
import Testing
import TestSupport

@testable import ImagePipeline

/// Parking scrolled-off requests: they run on at the prefetch's priority, a revisit joins them instead of
/// downloading again, and no more than the limit stay parked.
@Suite("Pipeline: scrolled-off tasks", .timeLimit(.minutes(2)))
struct ScrolledOffTasksTests {
    @Test("parked tasks run on at .low; the oldest beyond the limit is cancelled; a revisit joins, no second download")
    func parkLowersAndBounds() async throws {
        // Every download stays in flight until the test releases it.
        let fixture = try await PipelineFixture.start()
        let names = ["kite.jpg", "ladybird.jpg", "grey.jpg"]
        for name in names { fixture.server.hold(name) }
        defer { for name in names { fixture.server.release(name) } }
        let pipeline = fixture.pipeline()
        let requests = names.map { ImageRequest(url: fixture.url($0), maxPixelSize: 64) }
        let tasks = requests.map { pipeline.imageTask(with: $0) }
        #expect(await pollUntil { fixture.server.heldRequests == 3 })
        let scrolledOff = ScrolledOffTasks(limit: 2)
        for task in tasks { scrolledOff.park(task) }
        // The oldest went; the other two run on, their jobs at .low.
        await #expect(throws: ImagePipelineError.cancelled) { try await tasks[0].response }
        #expect(scrolledOff.count == 2)
        for request in requests.dropFirst() {
            #expect(pipeline.coordinator.priority(of: pipeline.imageJob(for: request).key) == .low)
        }
        // The cell scrolls back: a new request joins the parked one's work, at its priority.
        var revisit = requests[2]
        revisit.priority = .high
        let again = pipeline.imageTask(with: revisit)
        #expect(await pollUntil { pipeline.coordinator.priority(of: pipeline.imageJob(for: revisit).key) == .high })
        fixture.server.release("grey.jpg")
        let response = try await again.response
        #expect(response.bitmap.width == 64 || response.bitmap.height == 64)
        #expect(try await tasks[2].response.bitmap == response.bitmap, "the parked task finished with the same image")
        #expect(fixture.server.statistics.requests == 3, "no second download for the revisited image")
        #expect(scrolledOff.count == 1)
        scrolledOff.cancelAll()
        await #expect(throws: ImagePipelineError.cancelled) { try await tasks[1].response }
        #expect(scrolledOff.count == 0)
    }

    @Test("priority nil keeps a task's own priority")
    func keepsOwnPriority() async throws {
        let fixture = try await PipelineFixture.start()
        fixture.server.hold("kite.jpg")
        defer { fixture.server.release("kite.jpg") }
        let pipeline = fixture.pipeline()
        var request = ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 64)
        request.priority = .high
        let task = pipeline.imageTask(with: request)
        #expect(await pollUntil { fixture.server.heldRequests == 1 })
        let scrolledOff = ScrolledOffTasks(limit: 4, priority: nil)
        scrolledOff.park(task)
        #expect(scrolledOff.count == 1 && task.priority == .high)
        #expect(pipeline.coordinator.priority(of: pipeline.imageJob(for: request).key) == .high)
        scrolledOff.cancelAll()
        await #expect(throws: ImagePipelineError.cancelled) { try await task.response }
    }

    @Test("a finished task is not parked, and a limit of 0 cancels at once")
    func finishedAndZero() async throws {
        let fixture = try await PipelineFixture.start()
        let pipeline = fixture.pipeline()
        let done = pipeline.imageTask(with: ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 64))
        _ = try await done.response
        let scrolledOff = ScrolledOffTasks(limit: 0)
        scrolledOff.park(done)
        #expect(scrolledOff.count == 0 && done.priority == .normal)
        fixture.server.hold("ladybird.jpg")
        defer { fixture.server.release("ladybird.jpg") }
        let running = pipeline.imageTask(with: ImageRequest(url: fixture.url("ladybird.jpg"), maxPixelSize: 64))
        scrolledOff.park(running)
        await #expect(throws: ImagePipelineError.cancelled) { try await running.response }
    }
}
