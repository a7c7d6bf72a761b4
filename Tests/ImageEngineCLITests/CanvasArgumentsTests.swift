import Foundation
import ImageCodec
import TestSupport
import Testing

/// `thumbnail --extend --extend-aspect-ratio --padding --background`: exact sizes, the colour of
/// the added pixels in the written file, and a usage error for each bad value.
@Suite("CLI: canvas options")
struct CanvasArgumentsTests {
    @Test("a white square tile: the 480×300 kite fitted to 100×100, extended and padded by 10, white at every corner")
    func whiteTile() async throws {
        let result = try await ResizeArgumentsTests.thumbnail(
            ResizeArgumentsTests.kite, ["--size", "100x100", "--extend", "--padding", "10", "--background", "ffffff", "--format", "png"])
        #expect(result.outcome.status == 0, "\(result.outcome.stderr)")
        #expect(result.width == 120 && result.height == 120)
        let tile = try ImageDecoder().decode(try #require(result.file))
        for (x, y) in [(0, 0), (119, 0), (0, 119), (119, 119), (60, 10 + 17), (60, 119 - 10 - 17)] {
            #expect(Array(tile.pixel(x: x, y: y)) == [255, 255, 255], "(\(x), \(y))")
        }
        #expect(Array(tile.pixel(x: 60, y: 60)) != [255, 255, 255], "the photo is in the middle")
    }

    @Test(
        "sizes: extend to the box, an aspect ratio, CSS padding",
        arguments: [
            (["--size", "200x200", "--extend"], 200, 200),
            (["--size", "200x0", "--extend"], 200, 125),
            (["--size", "200x200", "--extend-aspect-ratio", "4:5"], 200, 250),
            (["--size", "200x200", "--padding", "1,2"], 204, 127),
            (["--size", "200x200", "--padding", "1,2,3,4"], 206, 129)
        ])
    func sizes(options: [String], width: Int, height: Int) async throws {
        let result = try await ResizeArgumentsTests.thumbnail(ResizeArgumentsTests.kite, options)
        #expect(result.outcome.status == 0, "\(options): \(result.outcome.stderr)")
        #expect(
            result.width == width && result.height == height, "\(options): \(String(describing: result.width))×\(String(describing: result.height))")
    }

    @Test("--crop keeps a part before the resize: the kite's west half, filled to 100×100; bad sides are usage errors")
    func crop() async throws {
        let half = try await ResizeArgumentsTests.thumbnail(
            ResizeArgumentsTests.kite, ["--crop", "0.5x0", "--gravity", "west", "--size", "100x0", "--format", "png"])
        #expect(half.outcome.status == 0, "\(half.outcome.stderr)")
        // 240×300 of the 480×300 kite, fitted 100 wide.
        #expect(half.width == 100 && half.height == 125, "\(String(describing: half.width))×\(String(describing: half.height))")
        let kite = try ImageDecoder(options: DecodingOptions(resize: .fit(width: 200, height: 0))).decode(
            try Data(contentsOf: URL(fileURLWithPath: ResizeArgumentsTests.kite)))
        let crop = try ImageDecoder().decode(try #require(half.file))
        // Its left edge is the kite's left edge, not its middle.
        let difference = (0..<125).map { y in abs(Int(Array(crop.pixel(x: 2, y: y))[1]) - Int(Array(kite.pixel(x: 2, y: y))[1])) }.reduce(0, +) / 125
        #expect(difference < 12, "mean difference at the left edge: \(difference)")
        for bad in ["1.5x", "-1x0", "axb", "0x0x0", "1e20x0", "infx0", "0x1e300"] {
            let result = try await ResizeArgumentsTests.thumbnail(ResizeArgumentsTests.kite, ["--crop", bad])
            #expect(result.outcome.status == 64 && result.outcome.stderr.contains("--crop"), "\(bad): \(result.outcome.stderr)")
        }
    }

    @Test("--trim cuts a white frame off before the resize; --trim-equal and --trim-color; bad values are usage errors")
    func trim() async throws {
        // 120×80 of red in a white frame: 10 above, 40 right, 5 below, 27 left.
        let framed = try Bitmap(
            width: 187, height: 95, format: .rgb,
            pixels: (0..<95).flatMap { y in
                (0..<187).flatMap { x in (27..<147).contains(x) && (10..<90).contains(y) ? [200, 40, 30] as [UInt8] : [255, 255, 255] }
            })
        let directory = try TemporaryDirectory()
        let input = directory.url.appendingPathComponent("framed.png").path
        try ImageEncoder.png(framed).write(to: URL(fileURLWithPath: input))
        let cases: [([String], Int, Int)] = [
            (["--trim", "10"], 120, 80),
            (["--trim", "10", "--size", "60x60"], 60, 40),
            (["--trim", "10", "--trim-equal", "both"], 187 - 54, 95 - 10),
            (["--trim", "10", "--trim-equal", "vertical"], 120, 95 - 10),
            (["--trim", "10", "--trim-color", "000000"], 187, 95)
        ]
        for (options, width, height) in cases {
            let result = try await ResizeArgumentsTests.thumbnail(input, options + ["--format", "png"])
            #expect(result.outcome.status == 0, "\(options): \(result.outcome.stderr)")
            #expect(
                result.width == width && result.height == height,
                "\(options): \(String(describing: result.width))×\(String(describing: result.height))")
        }
        for bad in [["--trim", "300"], ["--trim", "-2"], ["--trim-color", "ffffff"], ["--trim", "10", "--trim-color", "white"]] {
            let result = try await ResizeArgumentsTests.thumbnail(input, bad)
            #expect(result.outcome.status == 64 && result.outcome.stderr.contains("--trim"), "\(bad): \(result.outcome.stderr)")
        }
    }

    @Test("--rotate, --blur, --sharpen, --pixelate and --offset make what the library makes with the same options")
    func turnsFiltersAndOffsets() async throws {
        let kite = try Data(contentsOf: URL(fileURLWithPath: ResizeArgumentsTests.kite))
        func thumbnail(_ options: [String]) async throws -> Bitmap {
            let result = try await ResizeArgumentsTests.thumbnail(ResizeArgumentsTests.kite, options + ["--format", "png"])
            #expect(result.outcome.status == 0, "\(options): \(result.outcome.stderr)")
            return try ImageDecoder().decode(try #require(result.file, "\(options)"))
        }
        let plain = try ImageDecoder().decode(kite)
        // Turned a quarter clockwise: the kite's bottom-left pixel is now the top-left one.
        let turned = try await thumbnail(["--rotate", "90"])
        #expect(try turned == plain.applying(.right))
        let fitted = try await thumbnail(["--rotate=-90", "--size", "100x0"])
        #expect((fitted.width, fitted.height) == (100, 160))
        #expect(try await thumbnail(["--blur", "3"]) == plain.blurred(sigma: 3))
        #expect(try await thumbnail(["--sharpen", "1.5"]) == plain.sharpened(sigma: 1.5))
        #expect(try await thumbnail(["--pixelate", "8"]) == plain.pixelated(size: 8))
        var options = DecodingOptions(resize: Resize(mode: .fill, width: 100, height: 100, gravity: .west, offset: GravityOffset(x: 20, y: 0)))
        options.appliesOrientation = true
        let moved = try await thumbnail(["--size", "100x100", "--mode", "fill", "--gravity", "west", "--offset", "20,0"])
        #expect(moved == (try ImageDecoder(options: options).decode(kite)))
        #expect(moved != (try await thumbnail(["--size", "100x100", "--mode", "fill", "--gravity", "west"])))
        for (bad, named) in [
            (["--rotate", "45"], "--rotate"), (["--blur", "101"], "--blur"), (["--sharpen", "nan"], "--sharpen"), (["--pixelate", "0"], "--pixelate"),
            (["--offset", "a,b"], "--offset"), (["--offset", "1e9,0"], "--offset")
        ] {
            let result = try await ResizeArgumentsTests.thumbnail(ResizeArgumentsTests.kite, bad)
            #expect(result.outcome.status == 64 && result.outcome.stderr.contains(named), "\(bad): \(result.outcome.stderr)")
        }
    }

    @Test(
        "each bad value is a usage error naming its option",
        arguments: [
            (["--extend"], "--extend"), (["--size", "9x9", "--extend", "--extend-aspect-ratio", "1:1"], "--extend-aspect-ratio"),
            (["--extend-aspect-ratio", "1:0"], "--extend-aspect-ratio"), (["--padding", "1,2,3,4,5"], "--padding"),
            (["--padding", "-1"], "--padding"), (["--background", "white"], "--background")
        ])
    func usageErrors(options: [String], named: String) async throws {
        let result = try await ResizeArgumentsTests.thumbnail(ResizeArgumentsTests.kite, options)
        #expect(result.outcome.status == 64, "\(options): \(result.outcome.status)")
        #expect(result.outcome.stderr.contains(named), "\(options): \(result.outcome.stderr)")
    }

    @Test("--metadata: none by default, the Artist and Copyright, or the whole block upright; a bad choice is a usage error")
    func metadata() async throws {
        let directory = try TemporaryDirectory()
        let block = ExifFixture.block(orientation: 6)
        let photo = try ImageEncoder.jpeg(try ImageDecoder().decode(Data(contentsOf: URL(fileURLWithPath: ResizeArgumentsTests.kite))))
        let source = directory.url.appendingPathComponent("exif.jpg")
        try ExifFixture.inserting(block, into: photo).write(to: source)
        func exif(_ options: [String]) async throws -> [UInt8]? {
            let result = try await ResizeArgumentsTests.thumbnail(source.path, ["--size", "100x100"] + options)
            #expect(result.outcome.status == 0, "\(options): \(result.outcome.stderr)")
            // Turned by the orientation: the 480×300 kite stands 62.5×100.
            #expect((62...63).contains(result.width ?? 0) && result.height == 100, "\(options)")
            return try ImageSource(data: try #require(result.file)).metadata().exif
        }
        #expect(try await exif([]) == nil)
        #expect(try await exif(["--metadata", "none"]) == nil)
        let copyright = try #require(try await exif(["--metadata", "copyright", "--format", "webp"]))
        #expect(Set(try #require(ExifFixture.tags(copyright)).keys) == [ExifFixture.artistTag, ExifFixture.copyrightTag])
        let all = try #require(try await exif(["--metadata", "all", "--format", "png"]))
        #expect(all.count == block.count && ExifFixture.orientation(all) == 1 && ExifFixture.tags(all)?[ExifFixture.gpsTag] != nil)
        let bad = try await ResizeArgumentsTests.thumbnail(source.path, ["--metadata", "gps"])
        #expect(bad.outcome.status == 64 && bad.outcome.stderr.contains("--metadata"), "\(bad.outcome.stderr)")
    }
}
