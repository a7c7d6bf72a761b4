import Foundation
import ImageCodec
import Testing
import TestSupport

@testable import ImageService

/// Animated GIF and WebP sources through a real service: the first frame as a still by
/// default and in every format but WebP, an animated WebP of at most --max-animation-frames,
/// and the frames counted against --max-src-pixels as imgproxy counts them.
@Suite("Service: animated sources")
struct ServiceAnimationTests {
    private func start(_ configure: @escaping (inout ThumbnailService.Configuration) -> Void = { _ in }) async throws -> ServiceHarness {
        let harness = try await ServiceHarness.start(configure: configure)
        for name in ["pan.gif", "photo.gif"] {
            harness.origin.serve("/\(name)", .init(data: try GIFFixtures.data(name), contentType: "image/gif"))
        }
        return harness
    }

    @Test("a GIF answered as JPEG, PNG or WebP by default: its first frame, still")
    func firstFrameByDefault() async throws {
        let harness = try await start()
        let first = try ImageDecoder(options: DecodingOptions(maxPixelSize: 56)).decode(try GIFFixtures.data("pan.gif"))
        for ext in ["jpg", "png", "webp"] {
            let reply = try await harness.get(harness.path("rs:fit:56:56", harness.source("pan.gif"), ext: ext))
            #expect(reply.status == 200, "\(ext): \(reply.text.prefix(200))")
            let header = try ImageDecoder.header(of: reply.body)
            #expect(header.frameCount == 1 && (header.width, header.height) == (first.width, first.height), "\(ext)")
        }
        // The PNG is lossless: exactly the first frame.
        let png = try await harness.get(harness.path("rs:fit:56:56", harness.source("pan.gif"), ext: "png"))
        let decoded = try ImageDecoder().decode(png.body)
        let (ours, expected) = (try decoded.withAlphaChannelForTests(), try first.withAlphaChannelForTests())
        #expect(ours == expected)
        await harness.stop()
    }

    @Test("--max-animation-frames 4: an animated WebP of the first 4 frames, under its own ETag")
    func animatedWebP() async throws {
        let still = try await start()
        let animated = try await start { $0.maxAnimationFrames = 4 }
        let path = animated.path("rs:fit:56:56", animated.source("pan.gif"), ext: "webp")
        let reply = try await animated.get(path)
        #expect(reply.status == 200 && reply.header("Content-Type") == "image/webp")
        var frames = try AnimationDecoder(source: ImageSource(data: reply.body))
        #expect(frames.frameCount == 4 && frames.plays == 0)
        var count = 0
        while let frame = try frames.next() {
            #expect(frame.durationMilliseconds == 80 && frame.bitmap.width == 56)
            count += 1
        }
        #expect(count == 4)
        let other = try await still.get(still.path("rs:fit:56:56", still.source("pan.gif"), ext: "webp"))
        #expect(other.status == 200 && other.header("ETag") != reply.header("ETag"))
        // A still source is the same under either setting.
        let stillPath = still.path("rs:fit:56:56", still.source("photo.gif"), ext: "webp")
        let one = try await still.get(stillPath)
        let two = try await animated.get(animated.path("rs:fit:56:56", animated.source("photo.gif"), ext: "webp"))
        #expect(one.body == two.body)
        await still.stop()
        await animated.stop()
    }

    @Test("the frames kept count against --max-src-pixels: width × height × frames, as imgproxy counts them")
    func sourcePixelsCountFrames() async throws {
        // pan.gif is 112 × 80 = 8,960 pixels a frame, 12 frames.
        let three = 112 * 80 * 3
        let refusing = try await start {
            $0.maxSourcePixels = three
            $0.maxAnimationFrames = 4
        }
        let reply = try await refusing.get(refusing.path("rs:fit:56:56", refusing.source("pan.gif"), ext: "webp"))
        #expect(reply.status == 422 && reply.text.contains("112×320"), "\(reply.status) \(reply.text)")
        // Also as JPEG: the count does not depend on the output.
        let jpeg = try await refusing.get(refusing.path("rs:fit:56:56", refusing.source("pan.gif"), ext: "jpg"))
        #expect(jpeg.status == 422)
        await refusing.stop()
        let allowing = try await start {
            $0.maxSourcePixels = three
            $0.maxAnimationFrames = 3
        }
        let fits = try await allowing.get(allowing.path("rs:fit:56:56", allowing.source("pan.gif"), ext: "webp"))
        #expect(fits.status == 200)
        #expect(try ImageDecoder.header(of: fits.body).frameCount == 3)
        await allowing.stop()
    }

    @Test("skp:gif answers a GIF source as it is")
    func skipProcessing() async throws {
        let harness = try await start()
        let reply = try await harness.get(harness.path("rs:fit:56:56/skp:gif", harness.source("pan.gif")))
        let original = try GIFFixtures.data("pan.gif")
        #expect(reply.status == 200 && reply.header("Content-Type") == "image/gif" && reply.body == original)
        await harness.stop()
    }
}

extension Bitmap {
    /// The pixels as RGBA, for comparing a PNG's decode with a frame's.
    fileprivate func withAlphaChannelForTests() throws -> [UInt8] {
        guard format == .rgb else { return pixels }
        return stride(from: 0, to: pixels.count, by: 3).flatMap { Array(pixels[$0..<$0 + 3]) + [255] }
    }
}
