import Foundation
import ImageCodec
import Testing
import TestSupport

@testable import ImageService

/// `mb:` (max_bytes) over sockets: the answer never exceeds its cap, is the plain render when
/// that fits, and is a 422 when nothing fits.
@Suite("Service: max_bytes", .timeLimit(.minutes(2)))
struct ByteCapTests {
    @Test("JPEG under half its bytes: at most the cap, a real image no larger than asked; a cap that fits changes nothing")
    func jpegUnderCap() async throws {
        let harness = try await ServiceHarness.start()
        let plain = try await harness.get(harness.path("w:400", harness.source("kite.jpg")))
        #expect(plain.status == 200)
        let cap = plain.body.count / 2
        let capped = try await harness.get(harness.path("w:400/mb:\(cap)", harness.source("kite.jpg")))
        #expect(capped.status == 200 && capped.body.count <= cap && capped.body.count > cap / 3, "\(capped.body.count) bytes for a cap of \(cap)")
        let image = try ImageDecoder().decode(capped.body)
        #expect(image.width <= 400 && image.width >= 200, "\(image.width)")
        #expect(capped.header("ETag") != plain.header("ETag"))
        let roomy = try await harness.get(harness.path("w:400/mb:\(plain.body.count)", harness.source("kite.jpg")))
        #expect(roomy.body == plain.body, "the render at its quality fits: it is the answer")
        await harness.stop()
    }

    @Test("WebP under its cap by quality, the same size; 422 when even the smallest step does not fit, and for PNG over its cap")
    func webpAndUnreachable() async throws {
        let harness = try await ServiceHarness.start()
        let plain = try await harness.get(harness.path("w:300/f:webp", harness.source("kite.jpg")))
        let cap = plain.body.count * 2 / 3
        let capped = try await harness.get(harness.path("w:300/f:webp/mb:\(cap)", harness.source("kite.jpg")))
        #expect(capped.status == 200 && capped.body.count <= cap)
        #expect(try ImageDecoder().decode(capped.body).width == 300)
        for options in ["w:300/mb:300", "w:300/f:webp/mb:100", "w:300/f:png/mb:1000"] {
            let reply = try await harness.get(harness.path(options, harness.source("kite.jpg")))
            #expect(reply.status == 422, "\(options): \(reply.status)")
            #expect(String(decoding: reply.body, as: UTF8.self).contains("smallest output"), "\(options)")
        }
        await harness.stop()
    }
}

/// `mb:`'s search on its own: a few encodes, never more, the best quality that fits (or a sure
/// 422), and a look at cancellation before each encode.
@Suite("Service: the max_bytes search")
struct ByteCapSearchTests {
    /// Counts the encodes a search makes.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var qualities: [Int] = []
        func add(_ quality: Int) { lock.withLock { qualities.append(quality) } }
        var tried: [Int] { lock.withLock { qualities } }
    }

    @Test(
        "JPEG, WebP and AVIF: at most six encodes (AVIF three) after the first, the answer fits, within a few quality steps of the best that does",
        arguments: [ProcessingOptions.OutputFormat.jpeg, .webp, .avif])
    func boundedSearch(_ format: ProcessingOptions.OutputFormat) throws {
        let bitmap = try ImageDecoder(options: DecodingOptions(resize: .fit(width: 320, height: 320))).decode(try SmallPhotos.data("kite.jpg"))
        func encode(_ quality: Int) throws(ImageCodecError) -> Data {
            switch format {
            case .webp: try ImageEncoder.webp(bitmap, options: WebPEncodingOptions(quality: quality))
            case .avif: try ImageEncoder.avif(bitmap, options: AVIFEncodingOptions(quality: quality, speed: 9))
            default: try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: quality))
            }
        }
        let first = try encode(90)
        // Caps from just under the first encode down to about what quality 5 makes.
        let smallest = try encode(5).count
        for fraction in [0.9, 0.6, 0.35, 0.2] {
            let cap = max(smallest + 1, Int(Double(first.count) * fraction))
            let counter = Counter()
            let search = ByteCapSearch(format: format, cap: cap) { (quality) throws(ImageCodecError) -> Data in
                counter.add(quality)
                return try encode(quality)
            }
            let fitted = try search.fitted(quality: 90, first: first)
            #expect(fitted.count <= cap, "\(format) \(fraction): \(fitted.count) > \(cap)")
            #expect(counter.tried.count <= ByteCapSearch.maximumEncodes(format), "\(format) \(fraction): \(counter.tried)")
            // The best quality that fits, found the slow way: the search may stop a few steps short.
            let best = try (1...89).last { try encode($0).count <= cap } ?? 0
            let chosen = try (1...89).first { try encode($0) == fitted } ?? 0
            #expect(chosen >= best - (format == .avif ? 12 : 4), "\(format) \(fraction): quality \(chosen), best \(best), tried \(counter.tried)")
        }
    }

    @Test("when nothing fits, quality 1 is the last encode and the 422 names its size; PNG has no quality to give")
    func unreachable() throws {
        let bitmap = try ImageDecoder(options: DecodingOptions(resize: .fit(width: 320, height: 320))).decode(try SmallPhotos.data("kite.jpg"))
        let first = try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: 80))
        let counter = Counter()
        let search = ByteCapSearch(format: .jpeg, cap: 200) { (quality) throws(ImageCodecError) -> Data in
            counter.add(quality)
            return try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: quality))
        }
        let smallest = try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: 1)).count
        #expect(throws: ByteCapFailure.self) { _ = try search.fitted(quality: 80, first: first) }
        do {
            _ = try search.fitted(quality: 80, first: first)
        } catch .unreachable(let size) {
            #expect(size == smallest && counter.tried.last == 1)
        } catch {
            Issue.record("\(error)")
        }
        let png = ByteCapSearch(format: .png, cap: 200) { (_) throws(ImageCodecError) -> Data in Data() }
        #expect(throws: ByteCapFailure.self) { _ = try png.fitted(quality: 80, first: Data(count: 1000)) }
    }

    @Test("a cancelled request stops before the next encode")
    func cancellation() async throws {
        let counter = Counter()
        let outcome = await Task { () -> Result<Data, ByteCapFailure> in
            withUnsafeCurrentTask { $0?.cancel() }
            let search = ByteCapSearch(format: .jpeg, cap: 10) { (quality) throws(ImageCodecError) -> Data in
                counter.add(quality)
                return Data(count: 100)
            }
            return Result { () throws(ByteCapFailure) in try search.fitted(quality: 80, first: Data(count: 1000)) }
        }.value
        guard case .failure(.codec(.cancelled)) = outcome else {
            Issue.record("expected cancellation, got \(outcome)")
            return
        }
        #expect(counter.tried.isEmpty)
    }
}
