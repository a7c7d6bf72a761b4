import Foundation
import Testing
import TestSupport
@testable import ImageCodec

/// Animated WebP in and out: libwebp's frames composited here, the writer's files read back
/// through the same decoder, and the batch's choice of still or animation.
@Suite("Animation")
struct AnimationTests {
    private func decodeAll(_ data: Data, options: DecodingOptions = DecodingOptions()) throws -> (AnimationDecoder, [AnimationFrame]) {
        var decoder = try AnimationDecoder(source: ImageSource(data: data), options: options)
        var frames: [AnimationFrame] = []
        while let frame = try decoder.next() { frames.append(frame) }
        return (decoder, frames)
    }

    @Test("an animated WebP's frames: counted in its header, the first the still decode's pixels")
    func animatedWebPInput() throws {
        let data = try WebPFixtures.data("kite-animated.webp")
        let header = try ImageDecoder.header(of: data)
        let anmf = try data.withUnsafeBytes { (bytes) throws(ImageCodecError) in try WebPContainer(bytes).frameCount }
        #expect(header.frameCount == anmf && anmf > 1)
        let (decoder, frames) = try decodeAll(data)
        #expect(frames.count == anmf && decoder.frameCount == anmf)
        let still = try ImageDecoder().decode(data)
        let first = frames[0].bitmap
        #expect(first.width == still.width && first.height == still.height)
        // The still decode is RGB when nothing is transparent; the frame is RGBA.
        let stillRGBA = try still.withAlphaChannel()
        #expect(first.pixels == stillRGBA.pixels)
    }

    @Test("GIF → animated WebP: every frame, the durations and the plays kept; each frame close to its source's")
    func gifToAnimatedWebP() throws {
        let gif = try GIFFixtures.data("pan.gif")
        var frames = try AnimationDecoder(source: ImageSource(data: gif))
        let made = try WebPAnimationWriter.encode(&frames, options: WebPEncodingOptions(quality: 90, method: 4))
        #expect((made.width, made.height) == (112, 80))
        let (decoded, back) = try decodeAll(made.data)
        #expect(try ImageDecoder.header(of: made.data).frameCount == 12)
        #expect(back.count == 12 && decoded.plays == 0 && back.allSatisfy { $0.durationMilliseconds == 80 })
        let (_, source) = try decodeAll(gif)
        for (ours, theirs) in zip(back, source) {
            let error = zip(ours.bitmap.pixels, theirs.bitmap.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
            let mean = Double(error) / Double(ours.bitmap.pixels.count)
            #expect(mean < 6, "frame \(ours.index): mean error \(mean)")
        }
    }

    @Test("the writer keeps a GIF's play count and transparency")
    func playsAndAlpha() throws {
        var frames = try AnimationDecoder(source: ImageSource(data: GIFFixtures.data("composite.gif")))
        let made = try WebPAnimationWriter.encode(&frames, options: WebPEncodingOptions(quality: 100))
        let (decoder, back) = try decodeAll(made.data)
        #expect(decoder.plays == 4 && back.count == 4)
        #expect(back.map(\.durationMilliseconds) == [100, 100, 50, 200])
        // Frame 3's cleared area stays transparent.
        let at = (1 * 8 + 4) * 4
        #expect(back[3].bitmap.pixels[at + 3] == 0)
    }

    @Test("Thumbnailer: WebP output of an animation is animated, other formats and --first-frame a still")
    func thumbnailerChoosesStillOrAnimation() async throws {
        let directory = try TemporaryDirectory()
        let input = GIFFixtures.directory.appendingPathComponent("pan.gif")
        var options = ThumbnailOptions(maxPixelSize: 56, format: .webp)
        options.maxFrames = 6
        let animated = try Thumbnailer(options: options).makeThumbnail(from: input, to: directory.url.appendingPathComponent("a.webp"))
        #expect(animated.width == 56 && animated.height == 40)
        #expect(try ImageDecoder.header(of: Data(contentsOf: directory.url.appendingPathComponent("a.webp"))).frameCount == 6)
        options.firstFrameOnly = true
        _ = try Thumbnailer(options: options).makeThumbnail(from: input, to: directory.url.appendingPathComponent("b.webp"))
        #expect(try ImageDecoder.header(of: Data(contentsOf: directory.url.appendingPathComponent("b.webp"))).frameCount == 1)
        options.firstFrameOnly = false
        options.format = .png
        _ = try Thumbnailer(options: options).makeThumbnail(from: input, to: directory.url.appendingPathComponent("c.png"))
        let png = try ImageDecoder().decode(Data(contentsOf: directory.url.appendingPathComponent("c.png")))
        let (_, source) = try decodeAll(try GIFFixtures.data("pan.gif"), options: DecodingOptions(maxPixelSize: 56))
        #expect(png.width == 56 && png.height == 40)
        let rgba = try png.withAlphaChannel()
        #expect(rgba.pixels == source[0].bitmap.pixels, "the PNG is the first frame")
    }
}
