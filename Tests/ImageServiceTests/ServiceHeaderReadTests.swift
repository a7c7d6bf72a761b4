import Foundation
@testable import ImageCodec
@testable import ImageService
import Testing
import TestSupport

@Suite("Service: one header read per source")
struct ServiceHeaderReadTests {
    @Test("a downloaded source's header is read once: by the pipeline, then planned and decoded from that read")
    func oneHeaderRead() async throws {
        let harness = try await ServiceHarness.start()
        let url = try #require(URL(string: harness.source("kite.jpg")))
        let response = try await harness.service.pipeline.data(for: harness.service.sourceRequest(url))
        #expect(response.source == .network && response.image.headerReads == 1 && response.image.holdsReader)
        var options = ProcessingOptions()
        (options.resizingType, options.width, options.height) = (.fill, 64, 64)
        let input = RenderInput(image: response.image, options: options, format: .jpeg, etag: "\"test\"", lastModified: nil, download: nil,
                                resultKey: "header-read-test", source: url)
        let rendered = try await harness.service.render(input).get()
        let bitmap = try ImageDecoder().decode(rendered.data)
        #expect((bitmap.width, bitmap.height) == (64, 64))
        #expect(response.image.headerReads == 1 && !response.image.holdsReader,
                "the render planned and decoded from the pipeline's header read, without reading the header again")
        await harness.stop()
    }
}
