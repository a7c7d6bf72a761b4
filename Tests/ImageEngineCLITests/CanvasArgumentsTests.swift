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
}
