import Foundation
import ImageServer
import Testing
import TestSupport

@testable import ImagePipeline

/// D-D: an image request holds its original from the start of its fetch to the end of its
/// decode, and only `maximumOriginalsHeld` may at once: while decodes are held up, fetches stop
/// at that bound instead of filling memory with originals nobody can decode yet.
@Suite("Originals held before their decode", .timeLimit(.minutes(2)))
struct OriginalsHeldTests {
    @Test("D-D: while every decode slot is held, only maximumOriginalsHeld requests reach the origin; the rest wait before reading a byte")
    func fetchesWaitForDecodes() async throws {
        let fixture = try await PipelineFixture.start(cacheControl: "max-age=60")
        fixture.server.serveEverywhereElse(ImageServer.Resource(data: try #require(PipelineFixture.photos["kite.jpg"]), cacheControl: "max-age=60"))
        let pipeline = fixture.pipeline {
            $0.maximumConcurrentDecodes = 1
            $0.maximumOriginalsHeld = 3
        }
        // The only decode slot, held until the gate opens.
        let gate = Gate()
        let holder = pipeline.coordinator.subscribe(CoordinatorProbe.slotJob("hold", queue: .decode) { await gate.wait() }, priority: .veryHigh) {
            _ in
        }
        #expect(await pollUntil { pipeline.coordinator.runningCount(.decode) == 1 })
        let tasks = (0..<12).map { index in
            Task { try await pipeline.image(for: ImageRequest(url: fixture.url("photo-\(index).jpg"), maxPixelSize: 64)) }
        }
        // Three fetched their original and wait for a decode; nine wait before fetching anything.
        #expect(await pollUntil { pipeline.coordinator.waitingCount(.original) == 9 && fixture.server.statistics.requests == 3 })
        #expect(fixture.server.statistics.requests == 3 && pipeline.coordinator.runningCount(.original) == 3)
        gate.open()
        for task in tasks { #expect(try await task.value.bitmap.width == 64) }
        #expect(fixture.server.statistics.requests == 12)
        holder.subscription.cancel()
    }

    @Test("the default bound is downloads + 2 × decodes, and saturates: a service passing .max downloads is unbounded here")
    func defaultBound() {
        var configuration = ImagePipeline.Configuration(maximumConcurrentDownloads: 6, maximumConcurrentDecodes: 4)
        #expect(configuration.originalsHeldLimit == 14)
        configuration.maximumConcurrentDownloads = .max
        #expect(configuration.originalsHeldLimit == .max)
        configuration.maximumOriginalsHeld = 5
        #expect(configuration.originalsHeldLimit == 5)
    }
}
