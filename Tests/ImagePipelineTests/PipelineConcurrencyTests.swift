import Foundation
import ImageCodec
@testable import ImagePipeline
import ImageServer
import Testing
import TestSupport

/// Run again under the thread sanitizer by scripts/test.sh (its name contains "Concurrency").
@Suite("Pipeline concurrency")
struct PipelineConcurrencyTests {
    @Test("many requests on shared URLs, with random cancellations and priority changes: every survivor gets the right pixels")
    func stress() async throws {
        let fixture = try await PipelineFixture.start(throttle: ImageServer.Throttle(latency: .milliseconds(5), bytesPerSecond: 5_000_000))
        // Generous timeouts: under the thread sanitizer everything runs several times slower.
        let pipeline = fixture.pipeline(disk: try fixture.diskCache(), timeout: 120) { $0.maximumConcurrentDownloads = 3 }
        let paths = ["kite.jpg", "ladybird.jpg", "grey.jpg", "calla.png"]
        let sizes = [48, 96]
        var expected: [String: Bitmap] = [:]
        for path in paths { for size in sizes { expected["\(path)@\(size)"] = try PipelineFixture.expected(path, maxPixelSize: size) } }
        var generator = SeededGenerator()
        let seed = generator.replay
        let plans = (0..<60).map { _ in
            (
                path: paths.randomElement(using: &generator)!, size: sizes.randomElement(using: &generator)!,
                cancelAfter: Bool.random(using: &generator) ? Int.random(in: 0...20, using: &generator) : nil,
                priority: ImageRequest.Priority.allCases.randomElement(using: &generator)!
            )
        }
        let urls = Dictionary(uniqueKeysWithValues: paths.map { ($0, fixture.url($0)) })
        let outcomes = await withTaskGroup(of: String?.self) { group in
            for plan in plans {
                guard let url = urls[plan.path] else { continue }
                group.addTask { [expected] in
                    let request = ImageRequest(url: url, maxPixelSize: plan.size, priority: .normal)
                    let task = pipeline.imageTask(with: request)
                    task.priority = plan.priority
                    // Whether the task had finished before cancel(): only then may it succeed.
                    var finishedBeforeCancel = true
                    if let delay = plan.cancelAfter {
                        try? await Task.sleep(for: .milliseconds(delay))
                        finishedBeforeCancel = task.result != nil
                        task.cancel()
                    }
                    switch await Self.wait(task) {
                    case .success where !finishedBeforeCancel:
                        return "\(plan.path)@\(plan.size): an image after cancel() returned"
                    case .success(let response):
                        return response.bitmap == expected["\(plan.path)@\(plan.size)"] ? nil : "\(plan.path)@\(plan.size): wrong pixels"
                    case .failure(.cancelled) where plan.cancelAfter != nil:
                        return nil
                    case .failure(let error):
                        return "\(plan.path)@\(plan.size): \(error)"
                    }
                }
            }
            return await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }
        }
        #expect(outcomes.isEmpty, "\(outcomes.prefix(3)), \(seed)")
        // Afterwards everything loads, from the caches where it was stored.
        for path in paths {
            let response = try await pipeline.image(for: ImageRequest(url: fixture.url(path), maxPixelSize: 48))
            #expect(response.bitmap == expected["\(path)@48"], "\(seed)")
        }
        let statistics = pipeline.statistics
        #expect(statistics.failures == 0, "\(seed)")
        // Nothing left behind: every job ended, nothing waits for a slot, and every request the
        // pipeline counted reached the server.
        #expect(await pollUntil { pipeline.coordinator.jobCount == 0 }, "\(seed)")
        #expect(pipeline.coordinator.waitingCount(.download) == 0 && pipeline.coordinator.waitingCount(.decode) == 0, "\(seed)")
        #expect(fixture.server.statistics.requests == statistics.networkRequests, "\(seed)")
    }

    static func wait(_ task: ImageTask) async -> Result<ImageResponse, ImagePipelineError> {
        do {
            return .success(try await task.response)
        } catch {
            return .failure(error)
        }
    }
}
