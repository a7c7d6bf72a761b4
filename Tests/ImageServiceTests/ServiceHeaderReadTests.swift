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
        let input = RenderInput(
            image: response.image, options: options, resize: .fill(width: 64, height: 64), format: .jpeg, quality: 80, etag: "\"test\"",
            lastModified: nil,
            download: nil,
            resultKey: "header-read-test", source: url)
        let rendered = try await harness.service.render(input).get()
        let bitmap = try ImageDecoder().decode(rendered.body)
        #expect((bitmap.width, bitmap.height) == (64, 64))
        #expect(
            response.image.headerReads == 1 && !response.image.holdsReader,
            "the render planned and decoded from the pipeline's header read, without reading the header again")
        await harness.stop()
    }
}

@Suite("Service: chunk bombs")
struct ServiceBombTests {
    /// `png` with `chunks` inserted after its IHDR (8 + 25 bytes in).
    static func inserting(_ chunks: [[UInt8]], into png: Data) -> Data {
        png.prefix(33) + Data(chunks.joined()) + png.dropFirst(33)
    }

    static func chunk(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        let crc = (typeBytes + payload).withUnsafeBytes { CRC32.checksum($0) }
        func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        return bigEndian(UInt32(payload.count)) + typeBytes + payload + bigEndian(crc)
    }

    @Test("a source of megabytes of text and private chunks renders like the clean file; 1,001 chunks before IDAT are a 422")
    func bombs() async throws {
        let harness = try await ServiceHarness.start()
        let clean = try SmallPhotos.data("calla.png")
        let text = (0..<4).map { Self.chunk("tEXt", Array("k\($0)".utf8) + [0] + [UInt8](repeating: 0x41, count: 1 << 20)) }
        let privates = (0..<4).map { _ in Self.chunk("prVt", [UInt8](repeating: 9, count: 1 << 20)) }
        harness.origin.serve("/bomb.png", .init(data: Self.inserting(text + privates, into: clean), contentType: "image/png"))
        harness.origin.serve(
            "/chunks.png",
            .init(
                data: Self.inserting(Array(repeating: Self.chunk("prVt", []), count: 1_000), into: clean),
                contentType: "image/png"))
        let bomb = try await harness.get(harness.path("rs:fit:64:64", harness.source("bomb.png")))
        let reference = try await harness.get(harness.path("rs:fit:64:64", harness.source("calla.png")))
        #expect(bomb.status == 200 && reference.status == 200)
        #expect(try ImageDecoder().decode(bomb.body) == (try ImageDecoder().decode(reference.body)))
        let chunks = try await harness.get(harness.path("rs:fit:64:64", harness.source("chunks.png")))
        #expect(chunks.status == 422, "\(chunks.text)")
        #expect(chunks.text.contains("more than 1000 chunks before its image data"), "\(chunks.text)")
        await harness.stop()
    }
}
