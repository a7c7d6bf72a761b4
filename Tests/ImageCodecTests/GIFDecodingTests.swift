import Foundation
import Testing
import TestSupport
@testable import ImageCodec

/// GIF through the engine's block walk and giflib: stills against Pillow's decode, and the
/// compositing rules (browsers', where they and Pillow differ) on constructions whose every
/// block is known (Tests/Fixtures/gif/make.py).
@Suite("GIF decoding")
struct GIFDecodingTests {
    private static let red: [UInt8] = [255, 0, 0, 255]
    private static let green: [UInt8] = [0, 255, 0, 255]
    private static let blue: [UInt8] = [0, 0, 255, 255]
    private static let white: [UInt8] = [255, 255, 255, 255]
    private static let clear: [UInt8] = [0, 0, 0, 0]

    private func pixel(_ bitmap: Bitmap, _ x: Int, _ y: Int) -> [UInt8] {
        let channels = bitmap.format.channels
        let at = (y * bitmap.width + x) * channels
        let values = Array(bitmap.pixels[at..<at + channels])
        return channels == 4 ? values : values + [255]
    }

    private func frames(
        _ name: String, options: DecodingOptions = DecodingOptions(), maxFrames: Int = 256
    ) throws -> (
        decoder: AnimationDecoder, frames: [AnimationFrame]
    ) {
        var decoder = try AnimationDecoder(source: ImageSource(data: GIFFixtures.data(name)), options: options, maxFrames: maxFrames)
        var frames: [AnimationFrame] = []
        while let frame = try decoder.next() { frames.append(frame) }
        return (decoder, frames)
    }

    @Test("a still photo decodes to exactly Pillow's pixels; interlaced, to the same pixels")
    func stillMatchesPillow() throws {
        let reference = try ImageDecoder().decode(try GIFFixtures.data("photo-reference.png"))
        for name in ["photo.gif", "photo-interlaced.gif"] {
            let data = try GIFFixtures.data(name)
            let header = try ImageDecoder.header(of: data)
            #expect(header.format == .gif && header.frameCount == 1 && (header.width, header.height) == (160, 100))
            #expect(header.progressive == (name == "photo-interlaced.gif") && header.colorModel == .palette && !header.hasAlpha)
            let bitmap = try ImageDecoder().decode(data)
            #expect(bitmap.format == .rgb && bitmap.width == reference.width && bitmap.height == reference.height)
            let same = bitmap.pixels == reference.pixels
            #expect(same, "\(name)")
        }
    }

    @Test("interlaced rows land by GIF's four passes")
    func interlacedRows() throws {
        let bitmap = try ImageDecoder().decode(try GIFFixtures.data("interlaced.gif"))
        let colours = [Self.red, Self.green, Self.blue, Self.white]
        for y in 0..<9 { #expect(pixel(bitmap, 1, y) == colours[y % 4], "row \(y)") }
    }

    @Test("the transparent index is alpha 0, as Pillow reads it; resized, alpha is kept")
    func transparency() throws {
        let data = try GIFFixtures.data("transparent.gif")
        #expect(try ImageDecoder.header(of: data).hasAlpha)
        let bitmap = try ImageDecoder().decode(data)
        let reference = try ImageDecoder().decode(try GIFFixtures.data("transparent-reference.png"))
        #expect(bitmap.format == .rgba && reference.format == .rgba)
        // Pillow gives transparent pixels the colour of index 255 (black); the engine leaves
        // them clear. Alpha must agree everywhere, colour wherever a pixel shows.
        var mismatches = 0
        for index in 0..<(bitmap.width * bitmap.height) {
            let ours = Array(bitmap.pixels[index * 4..<index * 4 + 4])
            let theirs = Array(reference.pixels[index * 4..<index * 4 + 4])
            if ours[3] != theirs[3] || (ours[3] != 0 && ours != theirs) { mismatches += 1 }
        }
        #expect(mismatches == 0)
        let small = try ImageDecoder(options: DecodingOptions(maxPixelSize: 40)).decode(data)
        let alphas = stride(from: 3, to: small.pixels.count, by: 4).map { small.pixels[$0] }
        #expect(small.format == .rgba && max(small.width, small.height) == 40 && alphas.contains { $0 < 16 } && alphas.contains(255))
    }

    @Test("composited as browsers show it: keep, restore, clear, transparency, a local table")
    func compositing() throws {
        let (decoder, frames) = try frames("composite.gif")
        #expect(decoder.frameCount == 4 && frames.count == 4)
        #expect(decoder.plays == 4, "NETSCAPE2.0's count 3: browsers play it 4 times")
        #expect(frames.map(\.durationMilliseconds) == [100, 100, 50, 200], "0 and 1 hundredths show as 100 ms")
        // Frame 0: red everywhere.
        #expect((0..<8).allSatisfy { pixel(frames[0].bitmap, $0, 2) == Self.red })
        // Frame 1: blue at (1...2, 1...2) over the red.
        #expect(pixel(frames[1].bitmap, 1, 1) == Self.blue && pixel(frames[1].bitmap, 2, 2) == Self.blue)
        #expect(pixel(frames[1].bitmap, 0, 1) == Self.red)
        // Frame 2: frame 1 restored (red again), green at column 4, index 3 transparent at
        // column 5 (the red shows through).
        #expect(pixel(frames[2].bitmap, 1, 1) == Self.red)
        #expect(pixel(frames[2].bitmap, 4, 1) == Self.green && pixel(frames[2].bitmap, 5, 1) == Self.red)
        // Frame 3: frame 2's area cleared to transparent, the white pixel from a local table.
        #expect(pixel(frames[3].bitmap, 4, 1) == Self.clear && pixel(frames[3].bitmap, 5, 2) == Self.clear)
        #expect(pixel(frames[3].bitmap, 7, 3) == Self.white && pixel(frames[3].bitmap, 0, 0) == Self.red)
    }

    @Test("a first frame smaller than the screen: transparent around it; no loop extension plays once")
    func partialFirstFrame() throws {
        let data = try GIFFixtures.data("partial.gif")
        #expect(try ImageDecoder.header(of: data).hasAlpha)
        let still = try ImageDecoder().decode(data)
        #expect(still.format == .rgba && pixel(still, 2, 2) == Self.blue && pixel(still, 0, 0) == Self.clear && pixel(still, 5, 5) == Self.clear)
        let (decoder, frames) = try frames("partial.gif")
        #expect(decoder.plays == 1 && frames.count == 2 && pixel(frames[1].bitmap, 0, 0) == Self.green)
    }

    @Test("frames resized as the options say, each the same size; maxFrames keeps the first ones")
    func resizedFrames() throws {
        let (decoder, frames) = try frames("pan.gif", options: DecodingOptions(maxPixelSize: 56), maxFrames: 5)
        #expect(decoder.frameCount == 5 && frames.count == 5 && decoder.plays == 0)
        #expect(frames.allSatisfy { $0.bitmap.width == 56 && $0.bitmap.height == 40 && $0.durationMilliseconds == 80 })
        // The pan moves: consecutive frames differ.
        #expect(frames[0].bitmap.pixels != frames[4].bitmap.pixels)
        let limited = try AnimationDecoder(
            source: ImageSource(data: GIFFixtures.data("pan.gif")), options: DecodingOptions(limits: DecodingLimits(maxAnimationPixels: 112 * 80 * 3))
        )
        #expect(limited.frameCount == 3, "maxAnimationPixels keeps the frames that fit")
        #expect(limited.warnings.map(\.message) == ["3 of 12 frames kept: more would pass the animation pixel limit"])
        #expect(decoder.warnings.isEmpty, "maxFrames is asked for: no warning")
    }

    @Test("a cut file keeps its whole frames; cut before the first, it is truncated")
    func truncation() throws {
        let header = try ImageDecoder.header(of: try GIFFixtures.data("truncated.gif"))
        #expect(header.frameCount == 2)
        let (decoder, frames) = try frames("truncated.gif")
        #expect(frames.count == 2 && pixel(frames[1].bitmap, 3, 3) == Self.green)
        #expect(decoder.warnings.map(\.message) == ["the file ends inside frame 3: the 2 whole frames before it kept"])
        #expect(throws: ImageCodecError.truncatedData) { try ImageDecoder.header(of: try GIFFixtures.data("truncated-first.gif")) }
    }

    @Test("hostile GIFs: a typed error naming what is wrong, before any pixel is allocated")
    func hostile() throws {
        #expect(throws: ImageCodecError.tooLarge(width: 65535, height: 65535, limit: DecodingLimits().maxPixelCount)) {
            try ImageDecoder.header(of: try GIFFixtures.data("huge-screen.gif"))
        }
        // A 60000² frame on a 4×4 screen: refused by the limits before giflib starts.
        #expect(throws: ImageCodecError.tooLarge(width: 60000, height: 60000, limit: DecodingLimits().maxPixelCount)) {
            try ImageDecoder().decode(try GIFFixtures.data("huge-frame.gif"))
        }
        #expect(throws: ImageCodecError.corruptData("LZW minimum code size 12 at byte 35 is outside 1-8")) {
            try ImageDecoder.header(of: try GIFFixtures.data("bad-code-size.gif"))
        }
        #expect(throws: ImageCodecError.limitExceeded("the frame's LZW data makes more pixels than the frame holds")) {
            try ImageDecoder().decode(try GIFFixtures.data("overrun.gif"))
        }
        // A frame entirely outside the screen draws nothing and keeps its time.
        let (_, frames) = try frames("outside.gif")
        #expect(frames.count == 2 && frames[1].bitmap.pixels == frames[0].bitmap.pixels)
    }

    @Test("100,000 frames and 10,000 comment blocks: counted in one walk, and only the kept frames decoded")
    func manyFrames() throws {
        let data = GIFFixtures.manyFrames(100_000, comments: 10_000)
        let started = ContinuousClock.now
        let source = try ImageSource(data: data)
        #expect(source.header.frameCount == 100_000)
        var decoder = try AnimationDecoder(source: source)
        var count = 0
        while try decoder.next() != nil { count += 1 }
        #expect(count == 256 && decoder.frameCount == 256)
        // Not a timing assertion: a walk that decoded every frame would be far past this.
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test("an animation's memory is a frame or two, whatever its length, and within its plan")
    func boundedMemory() throws {
        func peak(_ frames: Int) throws -> (peak: Int, planned: Int) {
            let ledger = MemoryLedger(budget: MemoryBudget(capacity: 1 << 30))
            let source = try ImageSource(data: GIFFixtures.data("pan.gif"))
            return try ledger.charging { () throws(ImageCodecError) -> (Int, Int) in
                var decoder = try AnimationDecoder(source: source, options: DecodingOptions(maxPixelSize: 56), maxFrames: frames)
                while try decoder.next() != nil {}
                return (ledger.peakBytesCharged, decoder.plannedBytes)
            }
        }
        let two = try peak(2)
        let twelve = try peak(12)
        #expect(twelve.peak == two.peak, "\(two.peak) bytes for 2 frames, \(twelve.peak) for 12")
        #expect(twelve.peak > 0 && twelve.peak <= twelve.planned, "\(twelve.peak) charged, \(twelve.planned) planned")
    }

    @Test("a still streams into the resampler: the pixels the animation canvas composites, for every placement of the frame")
    func stillStreamsAsTheCanvasComposites() throws {
        // Covering the screen, inside it at an offset, past its right and bottom edges, and
        // outside it; in order and interlaced; with and without a transparent index; at full
        // size and resized.
        let placements: [(x: Int, y: Int, width: Int, height: Int)] = [(0, 0, 40, 30), (7, 5, 20, 11), (25, 18, 30, 20), (50, 40, 4, 4)]
        for placement in placements {
            for interlaced in [false, true] {
                for transparent: UInt8? in [nil, 2] {
                    let data = GIFFixtures.still(
                        screenWidth: 40, screenHeight: 30, x: placement.x, y: placement.y, width: placement.width,
                        height: placement.height, interlaced: interlaced, transparent: transparent, secondFrame: true)
                    for options in [DecodingOptions(), DecodingOptions(maxPixelSize: 17)] {
                        let still = try ImageDecoder(options: options).decode(data)
                        // Two frames: the animation decoder composites the first on its canvas.
                        var animation = try AnimationDecoder(source: ImageSource(data: data), options: options)
                        #expect(animation.frameCount == 2)
                        let canvas = try #require(try animation.next()).bitmap
                        // An animation's frames are RGBA; a still without alpha is RGB, the canvas's
                        // alpha all 255.
                        let opaque = canvas.pixels.enumerated().filter { $0.offset % 4 == 3 }.allSatisfy { $0.element == 255 }
                        let expected =
                            still.format == .rgb && canvas.format == .rgba && opaque
                            ? canvas.pixels.enumerated().filter { $0.offset % 4 != 3 }.map(\.element) : canvas.pixels
                        #expect(
                            (still.width, still.height) == (canvas.width, canvas.height) && still.pixels == expected,
                            "\(placement), interlaced \(interlaced), transparent \(String(describing: transparent)), \(options.maxPixelSize ?? 0)")
                    }
                }
            }
        }
    }

    @Test("a still's memory is rows, not a 4-byte canvas, and within its plan; an interlaced one holds its indices")
    func stillMemory() throws {
        func peak(_ data: Data) throws -> (peak: Int, planned: Int) {
            let ledger = MemoryLedger(budget: MemoryBudget(capacity: 1 << 30))
            let source = try ImageSource(data: data)
            let options = DecodingOptions(maxPixelSize: 256)
            let planned = try source.plan(options).memoryBytes
            return try ledger.charging { () throws(ImageCodecError) -> (Int, Int) in
                _ = try source.decode(options)
                return (ledger.peakBytesCharged, planned)
            }
        }
        let side = 2048
        let canvas = side * side * 4
        let streamed = try peak(GIFFixtures.still(screenWidth: side, screenHeight: side, width: side, height: side))
        #expect(streamed.peak > 0 && streamed.peak < canvas / 16, "\(streamed.peak) bytes charged; a canvas is \(canvas)")
        #expect(streamed.peak <= streamed.planned, "\(streamed.peak) charged, \(streamed.planned) planned")
        let interlaced = try peak(GIFFixtures.still(screenWidth: side, screenHeight: side, width: side, height: side, interlaced: true))
        #expect(interlaced.peak >= side * side && interlaced.peak < canvas / 2, "\(interlaced.peak) bytes charged")
        #expect(interlaced.peak <= interlaced.planned, "\(interlaced.peak) charged, \(interlaced.planned) planned")
    }

    @Test("a cancelled task stops between frames")
    func cancellation() async throws {
        let data = GIFFixtures.manyFrames(5_000)
        let task = Task { () throws(ImageCodecError) -> Int in
            withUnsafeCurrentTask { $0?.cancel() }
            var decoder = try AnimationDecoder(source: ImageSource(data: data), maxFrames: 5_000)
            var count = 0
            while try decoder.next() != nil { count += 1 }
            return count
        }
        await #expect(throws: ImageCodecError.cancelled) { try await task.value }
    }
}
